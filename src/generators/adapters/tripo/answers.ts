/**
 * Reading Tripo's answers (PROVIDERS.md §1 and "Normalised mapping"): the `{ code, data }` envelope, its
 * error codes sorted into the classes every adapter uses, and a task's `status` as our run state.
 */
import { GenerationError, type GenerationStatus, GeneratorTransientError } from '../../generator.ts';
import { ChannelOutOfCredit, type UpstreamResponse, UpstreamRunLost } from '../types.ts';
import { retryAfterMs } from '../upstream-failure.ts';

/** Server errors, auth, rate or concurrency, task not found, audit error: worth another try. */
const TRANSIENT_CODES = new Set([1000, 1001, 1002, 2000, 2001, 2014]);
/** The channel's account has no credits left. */
const NO_CREDIT_CODE = 2010;
/** Content policy. */
const CONTENT_CODE = 2008;

/** How often a run is polled: Tripo has no webhook (PROVIDERS.md §1). (milliseconds) */
export const POLL_INTERVAL_MS = 5_000;

/** A task as `GET /task/{id}` describes it; only the fields we read. */
export interface TripoTask {
  task_id: string;
  status: string;
  progress: number;
  output: Readonly<Record<string, unknown>>;
  error_code: number | null;
  message: string | null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** The error a non-zero `code` means (PROVIDERS.md "Normalised mapping", Tripo's error table). */
function failureOf(
  response: UpstreamResponse,
  code: number,
  body: Record<string, unknown>,
  what: string,
): Error {
  const said = [text(body['message']), text(body['suggestion'])].filter(Boolean).join('; ');
  const reason = `Tripo ${what}: code ${code}${said ? `: ${said}` : ''}`;
  if (TRANSIENT_CODES.has(code) || response.status === 429 || response.status >= 500) {
    const wait = retryAfterMs(response.headers);
    return new GeneratorTransientError(reason, wait === null ? {} : { retryAfterMs: wait });
  }
  if (code === NO_CREDIT_CODE) return new ChannelOutOfCredit(reason);
  if (code === CONTENT_CODE) return new GenerationError('content_refused', reason);
  return new GenerationError('generation_failed', reason);
}

/**
 * The `data` of a successful answer; throws the classified error otherwise. An answer that is not the
 * documented envelope (a proxy's page, fields missing) is transient: the provider is having a bad moment.
 */
export function dataOf(response: UpstreamResponse, what: string): Record<string, unknown> {
  const body = response.body;
  if (isRecord(body) && typeof body['code'] === 'number') {
    const code = body['code'];
    if (code !== 0) throw failureOf(response, code, body, what);
    if (response.status >= 200 && response.status < 300 && isRecord(body['data'])) return body['data'];
  }
  const wait = retryAfterMs(response.headers);
  if (response.status === 429 || response.status >= 500 || (response.status >= 200 && response.status < 300))
    throw new GeneratorTransientError(
      `Tripo ${what}: HTTP ${response.status} without the documented answer`,
      wait === null ? {} : { retryAfterMs: wait },
    );
  throw new GenerationError('generation_failed', `Tripo ${what}: HTTP ${response.status}`);
}

/** A task read from `data`; a task without an id or a status is a broken answer (transient). */
export function taskOf(data: Record<string, unknown>, what: string): TripoTask {
  const id = text(data['task_id']);
  const status = text(data['status']);
  if (id === null || status === null)
    throw new GeneratorTransientError(`Tripo ${what}: the task has no task_id or status`);
  const progress = typeof data['progress'] === 'number' ? data['progress'] : 0;
  return {
    task_id: id,
    status,
    progress: Math.max(0, Math.min(100, Math.round(progress))),
    output: isRecord(data['output']) ? data['output'] : {},
    error_code: typeof data['error_code'] === 'number' ? data['error_code'] : null,
    message: text(data['error_msg']) ?? text(data['message']),
  };
}

/**
 * The run state of a task. `expired`, `unknown` and `cancelled` (we never cancel: Tripo has no cancel)
 * mean the upstream task is gone: `UpstreamRunLost`, retried as a new run.
 */
export function statusOf(task: TripoTask): GenerationStatus {
  switch (task.status) {
    case 'queued':
    case 'running':
      // 100 only once the files are ours.
      return { state: 'running', progress: Math.min(99, task.progress), pollAfterMs: POLL_INTERVAL_MS };
    case 'success':
      return { state: 'succeeded' };
    case 'banned':
      return {
        state: 'failed',
        code: 'content_refused',
        reason: reasonOf(task, 'refused by content policy'),
      };
    case 'failed':
      return {
        state: 'failed',
        code: task.error_code === CONTENT_CODE ? 'content_refused' : 'generation_failed',
        reason: reasonOf(task, 'failed'),
      };
    case 'expired':
    case 'unknown':
    case 'cancelled':
      throw new UpstreamRunLost(`Tripo task ${task.task_id} is ${task.status}`);
    default:
      throw new GeneratorTransientError(`Tripo task ${task.task_id} has an unknown status ${task.status}`);
  }
}

function reasonOf(task: TripoTask, what: string): string {
  const code = task.error_code === null ? '' : ` (error_code ${task.error_code})`;
  return `Tripo task ${what}${code}${task.message ? `: ${task.message}` : ''}`;
}
