/**
 * A pass run every `intervalMs`, one at a time: a pass still running when the next is due (a slow provider,
 * a locked database) is not started again, so passes never pile up. A failed pass is told to `onError`;
 * the next one runs as usual. The timer never keeps the process alive.
 */
export class Repeating {
  readonly #pass: () => Promise<unknown>;
  readonly #onError: (error: unknown) => void;
  #timer: NodeJS.Timeout | null = null;
  #running = false;

  constructor(pass: () => Promise<unknown>, onError: (error: unknown) => void) {
    this.#pass = pass;
    this.#onError = onError;
  }

  start(intervalMs: number): void {
    this.#timer ??= setInterval(() => void this.#once(), intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  async #once(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      await this.#pass();
    } catch (error) {
      this.#onError(error);
    } finally {
      this.#running = false;
    }
  }
}
