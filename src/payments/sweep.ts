/**
 * The background sweep of pending top-ups (CONTRACT §14): every `intervalMs` the top-ups pending and
 * untouched for a minute are read back from their provider, a bounded number per pass, so a lost
 * notification still credits. Runs in every process that runs the file sweeper; several processes
 * sweeping at once never credit twice (`TopupService.settle`).
 */
import type { TopupService } from './topup-service.ts';

export class TopupSweep {
  readonly #topups: TopupService;
  readonly #onError: (error: unknown) => void;
  #timer: NodeJS.Timeout | null = null;
  #running = false;

  constructor(topups: TopupService, onError: (error: unknown) => void) {
    this.#topups = topups;
    this.#onError = onError;
  }

  /** Starts the passes; nothing happens while top-ups are off. */
  start(intervalMs: number, pass: { idleMs?: number; limit?: number } = {}): void {
    if (this.#topups.mode === null) return;
    this.#timer ??= setInterval(() => void this.#pass(pass), intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  async #pass(pass: { idleMs?: number; limit?: number }): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      await this.#topups.sweep(pass);
    } catch (error) {
      this.#onError(error);
    } finally {
      this.#running = false;
    }
  }
}
