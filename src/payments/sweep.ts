/**
 * The background sweep of pending top-ups (CONTRACT §14): every `intervalMs` the top-ups pending and
 * untouched for a minute are read back from their provider, a bounded number per pass, so a lost
 * notification still credits. Runs in every process that runs the file sweeper; several processes
 * sweeping at once never credit twice (`TopupService.settle`).
 */
import { Repeating } from '../lib/index.ts';
import type { TopupService } from './topup-service.ts';

export class TopupSweep {
  readonly #topups: TopupService;
  readonly #onError: (error: unknown) => void;
  #passes: Repeating | null = null;

  constructor(topups: TopupService, onError: (error: unknown) => void) {
    this.#topups = topups;
    this.#onError = onError;
  }

  /** Starts the passes, one at a time; nothing happens while top-ups are off. */
  start(intervalMs: number, pass: { idleMs?: number; limit?: number } = {}): void {
    if (this.#topups.mode === null) return;
    this.#passes ??= new Repeating(() => this.#topups.sweep(pass), this.#onError);
    this.#passes.start(intervalMs);
  }

  stop(): void {
    this.#passes?.stop();
  }
}
