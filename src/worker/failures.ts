/**
 * Why a run stopped, and which failures are worth another attempt. Only an allow-list is retried
 * (STYLE "Errors", graphile-worker `RETRYABLE_ERROR_CODES`): a provider's 429 or 5xx, a network error, a
 * call that timed out, a storage failure, a lost database connection. Anything else is a refusal or our
 * bug, and retrying it would only repeat it.
 */
import { GeneratorTransientError, UpstreamCallTimeout, UpstreamRunLost } from '../generators/index.ts';
import { StorageError } from '../storage/index.ts';

/** The worker stops or lost its lease: the job goes back to the queue, no attempt is used up. */
export class ShutdownSignal extends Error {
  override name = 'ShutdownSignal';
}

/** The run outlived its deadline: the task fails with `timeout`. */
export class DeadlineExceeded extends Error {
  override name = 'DeadlineExceeded';
}

/** One external call outlived its own timeout; the next attempt may be luckier. */
export class CallTimeout extends Error {
  override name = 'CallTimeout';
}

/**
 * A create that got no answer in time on a generator whose create is idempotent by run key
 * (`Generator.isCreateIdempotent`): the provider may have started the run, so the retry repeats the create
 * under the same key on the same channel. The timeout is its `cause`.
 */
export class CreateUnconfirmed extends Error {
  override name = 'CreateUnconfirmed';
}

/** A failure on our side worth retrying (storage), with the original as `cause`. */
export class TransientFailure extends Error {
  override name = 'TransientFailure';
}

/** Socket and resolver errors of Node and undici: the other side was not reached or hung up. */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/**
 * PostgreSQL connection exceptions (class 08), serialization failures and deadlocks, the server shutting
 * down or out of connections; SQLite's busy database.
 */
function isDatabaseHiccup(code: string): boolean {
  return (
    code.startsWith('08') ||
    ['40001', '40P01', '57P01', '57P02', '57P03', '53300'].includes(code) ||
    code.startsWith('SQLITE_BUSY')
  );
}

function* chain(error: unknown): Generator<unknown> {
  let current = error;
  for (let depth = 0; current !== null && current !== undefined && depth < 5; depth++) {
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}

/** True when the failure (or one of its causes) is on the allow-list of transient failures. */
export function isTransient(error: unknown): boolean {
  for (const e of chain(error)) {
    if (
      e instanceof GeneratorTransientError ||
      e instanceof CallTimeout ||
      e instanceof TransientFailure ||
      e instanceof StorageError
    )
      return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || isDatabaseHiccup(code))) return true;
  }
  return false;
}

/**
 * True when a transient failure came from the generator (its answer, or a call to it that timed out),
 * not from our storage or database: only those count against a channel's health.
 */
export function isUpstreamTransient(error: unknown): boolean {
  for (const e of chain(error))
    if (e instanceof GeneratorTransientError || e instanceof CallTimeout) return true;
  return false;
}

/**
 * True when a transient failure was on our side (our storage, our database), not the generator's: the
 * run is not to blame, and waiting for our side to come back uses up no attempt.
 */
export function isOwnTransient(error: unknown): boolean {
  if (isUpstreamTransient(error)) return false;
  for (const e of chain(error)) {
    if (e instanceof TransientFailure || e instanceof StorageError) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && isDatabaseHiccup(code)) return true;
  }
  return false;
}

/** True when a call got no answer in time (ours or the transport's limit): whether it took effect is unknown. */
export function isCallTimeout(error: unknown): boolean {
  for (const e of chain(error)) if (e instanceof CallTimeout || e instanceof UpstreamCallTimeout) return true;
  return false;
}

/** True when the upstream task is gone for good (UpstreamRunLost): only a new run can help. */
export function isRunLost(error: unknown): boolean {
  for (const e of chain(error)) if (e instanceof UpstreamRunLost) return true;
  return false;
}

/** The wait the provider asked for with its transient error, if it did (milliseconds). */
export function retryAfterOf(error: unknown): number | null {
  for (const e of chain(error)) if (e instanceof GeneratorTransientError) return e.retryAfterMs;
  return null;
}
