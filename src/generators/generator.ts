/**
 * The Generator port: how the worker drives a generation server. Real providers implement it as an
 * adapter (create a job, poll it, fetch its files, cancel it); the built-in simulator implements it
 * offline. Every call takes an AbortSignal so cancel and shutdown reach the provider; the worker also
 * bounds every call with a timeout and stops waiting at the run's deadline, so a call that ignores its
 * signal can only waste its own promise, never hold a task.
 */
import type { ArtifactKind, GenerationPlan, ModeInputs } from '../catalog/index.ts';
import type { TaskFailureCode } from '../errors.ts';

export interface GenerationRequest {
  taskId: string;
  model: string;
  mode: string;
  settings: Readonly<Record<string, unknown>>;
  inputs: ModeInputs;
  plan: GenerationPlan;
  /**
   * The channel chosen for the run (GENERATORS_FILE), recorded with the task before the worker waits on
   * it; unset on the default generator. Only the channel router reads it.
   */
  channel?: string | null;
}

/** What the provider reported a run cost, in its own unit (`USD`, `credits`, …). */
export interface UpstreamCost {
  amount: number;
  currency: string;
}

/** State of a run at the generator. */
export type GenerationStatus =
  | { state: 'running'; progress: number /** When to ask again (milliseconds). */; pollAfterMs: number }
  | { state: 'succeeded' /** The run's upstream cost where the provider reports it. */; cost?: UpstreamCost }
  | { state: 'failed'; code: TaskFailureCode; reason: string };

/** One result file written by the generator into the worker's folder. */
export interface GeneratedFile {
  path: string;
  kind: ArtifactKind;
  filename: string;
  contentType: string;
  sizeBytes: number;
  caption: string;
  /**
   * The provider's ids of the file (Suno: `{ taskId, audioId }`), stored with the artifact so later runs
   * and library records can name it upstream (PROVIDERS.md §2). Absent for the simulator's files.
   */
  upstream?: { provider: string; ids: Readonly<Record<string, string>> };
}

export interface GenerationOutputs {
  files: GeneratedFile[];
  caption: string;
  texts: string[];
}

/** A refusal or failure the generator reports about the content or the inputs (not our bug). */
export class GenerationError extends Error {
  override name = 'GenerationError';
  readonly code: TaskFailureCode;
  constructor(code: TaskFailureCode, reason: string) {
    super(reason);
    this.code = code;
  }
}

/**
 * A failure worth trying again later: the provider is busy (429), briefly broken (5xx) or could not be
 * reached. The worker retries it with backoff; anything else an adapter throws ends the run.
 */
export class GeneratorTransientError extends Error {
  override name = 'GeneratorTransientError';
  /** How long the provider asked us to wait (its Retry-After), if it said (milliseconds). */
  readonly retryAfterMs: number | null;
  constructor(message: string, options: { retryAfterMs?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryAfterMs = options.retryAfterMs ?? null;
  }
}

/**
 * One run of a task at the generator, recorded by the worker before `create` is called (the intent), so
 * that a worker resuming after a crash between `create` and saving its handle can find the run instead of
 * starting a second one.
 */
export interface RunStart {
  /**
   * Deterministic per task and run (`<task id>/<run number>`). Adapters send it as the provider's
   * idempotency key where the provider has one, so a repeated `create` returns the first run.
   */
  key: string;
  /** When the run was recorded as started; a stateless generator measures the run from it. */
  startedAt: Date;
}

/** The generation server cannot be reached; callers answer 503 sg_unavailable. */
export class GeneratorUnavailable extends Error {
  override name = 'GeneratorUnavailable';
}

export interface Generator {
  /**
   * Checks at acceptance that the generation server can take the request; throws GeneratorUnavailable
   * when it cannot (the task is then not created and nothing is held).
   */
  ensureAvailable(
    request: { model: string; settings: Readonly<Record<string, unknown>> },
    signal?: AbortSignal,
  ): Promise<void>;
  /**
   * Starts a run under `run.key`; returns the provider's handle, stored with the task so a restart resumes
   * it. Called at most once per recorded run unless `find` answered null. Providers without an idempotency
   * key leave a window: a crash after the provider accepted the run and before the handle is saved, with
   * `find` unable to see the run, starts a second run upstream (the first one's result is never used).
   */
  create(request: GenerationRequest, run: RunStart, signal: AbortSignal): Promise<string>;
  /**
   * True when the provider's create is idempotent by our run key, so that repeating it under the same
   * `run.key` joins the run it may have started instead of starting a second one (Cog's PUT by prediction
   * id, PROVIDERS.md §3). A create that timed out is then retried under the same key on the same channel;
   * otherwise the retry is a new run with a new key. (Default: false)
   */
  isCreateIdempotent?(request: GenerationRequest): boolean;
  /**
   * The handle of the run started earlier under `run.key`, or null when the provider never received it.
   * The worker calls it instead of `create` when a run was recorded but its handle was never saved.
   */
  find(request: GenerationRequest, run: RunStart, signal: AbortSignal): Promise<string | null>;
  /** Polls a run. */
  status(handle: string, request: GenerationRequest, signal: AbortSignal): Promise<GenerationStatus>;
  /** Downloads the result files of a finished run into `dir`. */
  outputs(
    handle: string,
    request: GenerationRequest,
    dir: string,
    signal: AbortSignal,
  ): Promise<GenerationOutputs>;
  /** Asks the provider to stop a run; best effort. */
  cancel(handle: string, signal: AbortSignal): Promise<void>;
  /**
   * The run's outputs are in our storage (or the task was canceled while they were stored): what the
   * generator kept for `outputs` may go. Until then `status` and `outputs` answer again for a run resumed
   * after our storage or database failed. Best effort; only generators that keep results locally (the
   * synchronous providers' local task records) implement it.
   */
  release?(handle: string, signal: AbortSignal): Promise<void>;
}
