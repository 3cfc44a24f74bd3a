/**
 * Runs of this process that wait between two status reads, by run key, so a provider's callback ends the
 * wait at once (CONTRACT §11: a callback wakes the run, which then reads the upstream task; polling goes on
 * as the fallback). Fed by callbacks taken in this process and by the notifications of callbacks taken in
 * another one (PostgreSQL).
 */
export class RunWakes {
  /** Watched runs: each with its pending wake-up and the sleep it would end. */
  readonly #runs = new Map<string, Set<RunWatch>>();

  /** Starts watching a run; `close` the watch when the run stops waiting for callbacks. */
  watch(runKey: string): RunWatch {
    const watches = this.#runs.get(runKey) ?? new Set<RunWatch>();
    this.#runs.set(runKey, watches);
    const watch = new RunWatch(() => {
      watches.delete(watch);
      if (watches.size === 0 && this.#runs.get(runKey) === watches) this.#runs.delete(runKey);
    });
    watches.add(watch);
    return watch;
  }

  /** A callback arrived for the run: its sleep ends now, or its next one does not start. */
  wake(runKey: string): void {
    for (const watch of this.#runs.get(runKey) ?? []) watch.wake();
  }

  /** Callbacks may have been missed (a lost notification connection): every watched run looks again. */
  wakeAll(): void {
    for (const watches of this.#runs.values()) for (const watch of watches) watch.wake();
  }

  /** Runs watched now (tests). */
  get size(): number {
    return this.#runs.size;
  }
}

export class RunWatch {
  readonly #close: () => void;
  /** A wake-up that came while the run was not sleeping: the next sleep ends at once. */
  #pending = false;
  #endSleep: (() => void) | null = null;

  constructor(close: () => void) {
    this.#close = close;
  }

  wake(): void {
    if (this.#endSleep) this.#endSleep();
    else this.#pending = true;
  }

  /**
   * Waits `ms`, or less when the run is woken meanwhile (or was since the last sleep). Rejects with the
   * signal's reason when it aborts, as a timer of `node:timers/promises` does.
   */
  sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.#endSleep = null;
      };
      const onAbort = (): void => {
        finish();
        reject(signal.reason);
      };
      const timer = setTimeout(() => {
        finish();
        resolve();
      }, ms);
      this.#endSleep = () => {
        finish();
        resolve();
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  close(): void {
    this.#endSleep = null;
    this.#close();
  }
}
