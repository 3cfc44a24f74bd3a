import type { GenerationPlan } from '../catalog/index.ts';
import { type Clock, monotonicMs } from '../lib/index.ts';
import { DeadlineExceeded } from './failures.ts';

/** How often a run looks at its deadline, so a manual clock is honoured too (milliseconds). */
const CHECK_EVERY_MS = 1_000;

/** A run may take fifteen times the model's typical time plus a minute before it fails with `timeout`. */
export function runTimeoutMs(plan: GenerationPlan, timeScale: number): number {
  return Math.round((plan.workSeconds * 1000 * 15) / timeScale) + 60_000;
}

/**
 * The hard deadline of one run: at `deadlineMs` on the worker's clock it aborts the run's controller with
 * DeadlineExceeded, wherever the run waits (a poll, a put, a call that never answers). The time left is
 * read off the wall clock once, when armed (the deadline is a stored instant: the run's start plus its
 * limit), and counted down on the clock's monotonic reading: the host's clock set hours forward fails no
 * run, set back keeps none waiting for hours. It looks at the clock at least every second instead of
 * trusting one long timer, so it follows the clock it is given.
 */
export class RunDeadline {
  readonly #clock: Clock;
  readonly #abort: AbortController;
  /** The deadline on the clock's monotonic reading. */
  #deadlineMs = Number.POSITIVE_INFINITY;
  #timer: NodeJS.Timeout | null = null;

  constructor(clock: Clock, abort: AbortController) {
    this.#clock = clock;
    this.#abort = abort;
  }

  /** Starts watching; a deadline already past aborts the run at once. */
  arm(deadlineMs: number): void {
    this.#deadlineMs = monotonicMs(this.#clock) + (deadlineMs - this.#clock.now().getTime());
    const watch = (): void => {
      if (!this.#passed()) this.#timer = setTimeout(watch, this.#nextCheckMs());
    };
    watch();
  }

  disarm(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  /** Throws the run's end (DeadlineExceeded, or a shutdown) when it has come. */
  mustBeBeforeDeadline(): void {
    this.#passed();
    this.#abort.signal.throwIfAborted();
  }

  /** Aborts the run once the deadline has passed; true when the run is over. */
  #passed(): boolean {
    if (this.#abort.signal.aborted) return true;
    if (monotonicMs(this.#clock) < this.#deadlineMs) return false;
    this.#abort.abort(new DeadlineExceeded('the run passed its deadline'));
    return true;
  }

  #nextCheckMs(): number {
    const leftMs = this.#deadlineMs - monotonicMs(this.#clock);
    return Math.max(1, Math.min(leftMs, CHECK_EVERY_MS));
  }
}
