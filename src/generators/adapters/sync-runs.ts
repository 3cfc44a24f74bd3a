/**
 * The local task record of a synchronous provider (PROVIDERS.md "Normalised mapping": ElevenLabs and
 * Recraft have no upstream task). `create` starts the provider's one call in the background under the
 * run's key and answers at once, so the worker still goes create → poll → outputs; `status` reads the
 * record; the result waits in memory until `outputs` takes it.
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
/** Finished records nobody took are forgotten after this long (milliseconds). */
const KEEP_MS = 15 * 60_000;

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

  constructor(provider: string) {
    this.#provider = provider;
  }

  /** Starts `call` under `key` unless a record of it exists (a repeated `create` joins the first call). */
  start(key: string, call: (signal: AbortSignal) => Promise<T>): void {
    this.#forgetOld();
    if (this.#runs.has(key)) return;
    const run: LocalRun<T> = {
      controller: new AbortController(),
      at: Date.now(),
      outcome: { state: 'running' },
    };
    this.#runs.set(key, run);
    call(run.controller.signal).then(
      (result) => {
        run.outcome = { state: 'done', result };
        run.at = Date.now();
      },
      (error: unknown) => {
        run.outcome = { state: 'failed', error };
        run.at = Date.now();
      },
    );
  }

  /** True while this process keeps a record of the run. */
  has(key: string): boolean {
    return this.#runs.has(key);
  }

  /**
   * Where the call stands. A final refusal is `failed`; a transient failure or out of credit ends the
   * record and is thrown (a transient one as `UpstreamRunLost`: only a new call can help).
   */
  status(key: string): GenerationStatus {
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

  /** The finished call's answer. */
  result(key: string): T {
    const outcome = this.#get(key).outcome;
    if (outcome.state !== 'done')
      throw new GeneratorTransientError(`${this.#provider}: the call of run ${key} has not finished`);
    return outcome.result;
  }

  /** Forgets the run (its outputs are stored, or they can never be: a new call is needed). */
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
    const before = Date.now() - KEEP_MS;
    for (const [key, run] of this.#runs)
      if (run.outcome.state !== 'running' && run.at < before) this.#runs.delete(key);
  }
}
