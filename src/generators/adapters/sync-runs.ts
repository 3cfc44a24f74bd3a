/**
 * The local task record of a synchronous provider (PROVIDERS.md "Normalised mapping": ElevenLabs and
 * Recraft have no upstream task). `create` starts the provider's one call in the background under the
 * run's key and answers at once, so the worker still goes create → poll → outputs; `status` reads the
 * record; the result waits in memory until the worker has stored the outputs and releases the run
 * (`Generator.release`), or until SYNC_KEEP_MS after it was last read. `outputs` does not forget it: when our
 * storage refuses the files, the worker resumes the run from its saved handle, and the resumed poll must
 * find the same answer rather than a lost run, which would count against the channel, use up an attempt
 * and pay for a second call (docs/providers.md: our own storage never counts against a channel).
 *
 * Restarts: the record lives in this process only. A worker that resumes a run whose record is gone (a
 * restart in the middle of the call, or another process took the task over) gets `UpstreamRunLost` from
 * `status`, and the run is retried as a new run (CONTRACT §11); `find` answers null for such a run, so a
 * run whose handle was never saved is simply started again. The first call's answer is never used.
 */
import { GenerationError, type GenerationStatus, GeneratorTransientError } from '../generator.ts';
import { ChannelOutOfCredit, UpstreamRunLost } from './types.ts';

/** How soon the worker looks at a running call again (milliseconds). */
export const SYNC_POLL_MS = 500;
/**
 * Finished records are forgotten this long after they were last read, when the worker never released them
 * (the task failed or was canceled between outputs and storage, the process that stores them is another)
 * (milliseconds). A run resuming after a storage failure reads its record at least every 30 s, so it keeps
 * it.
 */
export const SYNC_KEEP_MS = 15 * 60_000;

type LocalState<T> =
  | { state: 'running' }
  | { state: 'done'; result: T }
  | { state: 'failed'; error: unknown };

interface LocalRun<T> {
  controller: AbortController;
  at: number;
  outcome: LocalState<T>;
}

/** Local records of one adapter's synchronous calls, by run key. */
export class SyncRuns<T> {
  readonly #runs = new Map<string, LocalRun<T>>();
  readonly #provider: string;
  readonly #now: () => number;

  /** `now`: the clock of the records' expiry (tests). (Default: `Date.now`) */
  constructor(provider: string, options: { now?: () => number } = {}) {
    this.#provider = provider;
    this.#now = options.now ?? Date.now;
  }

  /** Starts `call` under `key` unless a record of it exists (a repeated `create` joins the first call). */
  start(key: string, call: (signal: AbortSignal) => Promise<T>): void {
    this.#forgetOld();
    if (this.#runs.has(key)) return;
    const run: LocalRun<T> = {
      controller: new AbortController(),
      at: this.#now(),
      outcome: { state: 'running' },
    };
    this.#runs.set(key, run);
    call(run.controller.signal).then(
      (result) => {
        run.outcome = { state: 'done', result };
        run.at = this.#now();
      },
      (error: unknown) => {
        run.outcome = { state: 'failed', error };
        run.at = this.#now();
      },
    );
  }

  /** True while this process keeps a record of the run. */
  has(key: string): boolean {
    this.#forgetOld();
    return this.#runs.has(key);
  }

  /**
   * Where the call stands. A final refusal is `failed`; a transient failure or out of credit ends the
   * record and is thrown (a transient one as `UpstreamRunLost`: only a new call can help).
   */
  status(key: string): GenerationStatus {
    this.#forgetOld();
    const run = this.#get(key);
    const outcome = run.outcome;
    if (outcome.state === 'running') return { state: 'running', progress: 50, pollAfterMs: SYNC_POLL_MS };
    if (outcome.state === 'done') return { state: 'succeeded' };
    const error = outcome.error;
    if (error instanceof GenerationError) return { state: 'failed', code: error.code, reason: error.message };
    this.#runs.delete(key);
    if (error instanceof ChannelOutOfCredit) throw error;
    if (error instanceof GeneratorTransientError)
      throw new UpstreamRunLost(error.message, {
        cause: error,
        ...(error.retryAfterMs === null ? {} : { retryAfterMs: error.retryAfterMs }),
      });
    throw error;
  }

  /** The finished call's answer; it stays kept (and its expiry starts again) until `drop`. */
  result(key: string): T {
    const run = this.#get(key);
    const outcome = run.outcome;
    if (outcome.state !== 'done')
      throw new GeneratorTransientError(`${this.#provider}: the call of run ${key} has not finished`);
    run.at = this.#now();
    return outcome.result;
  }

  /** Forgets the run: its outputs are stored (the worker released it), or they can never be (a new call). */
  drop(key: string): void {
    this.#runs.delete(key);
  }

  /** Stops our side of the call (the provider has no cancel) and forgets the run. */
  cancel(key: string): void {
    this.#runs.get(key)?.controller.abort(new Error('run canceled'));
    this.#runs.delete(key);
  }

  #get(key: string): LocalRun<T> {
    const run = this.#runs.get(key);
    if (!run)
      throw new UpstreamRunLost(`${this.#provider}: no local record of run ${key} (the call was lost)`);
    return run;
  }

  #forgetOld(): void {
    const before = this.#now() - SYNC_KEEP_MS;
    for (const [key, run] of this.#runs)
      if (run.outcome.state !== 'running' && run.at < before) this.#runs.delete(key);
  }
}
