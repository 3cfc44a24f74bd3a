/**
 * Calls of one kind per key, at most one at a time: a caller arriving while a call for its key runs waits
 * for it and then shares the one call that starts after it with everyone else who arrived meanwhile. So a
 * burst of N callers costs two calls, not N, and every caller still gets an answer from a call that began
 * after it arrived (a read it joins never predates its own request).
 */
export class SharedCalls<T> {
  readonly #running = new Map<string, Promise<T>>();
  readonly #next = new Map<string, Promise<T>>();

  run(key: string, call: () => Promise<T>): Promise<T> {
    const queued = this.#next.get(key);
    if (queued !== undefined) return queued;
    const running = this.#running.get(key);
    if (running === undefined) return this.#start(key, call);
    const next = running.then(
      () => this.#start(key, call),
      () => this.#start(key, call),
    );
    this.#next.set(key, next);
    return next;
  }

  /** Keys with a call running (a waiting call always has one running before it). */
  get size(): number {
    return this.#running.size;
  }

  #start(key: string, call: () => Promise<T>): Promise<T> {
    this.#next.delete(key);
    const started = Promise.resolve().then(call);
    this.#running.set(key, started);
    const done = (): void => {
      if (this.#running.get(key) === started) this.#running.delete(key);
    };
    started.then(done, done);
    return started;
  }
}
