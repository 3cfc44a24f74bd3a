/**
 * Every refusal of the API becomes an `ApiError` (or one of its subclasses, chosen by status), carrying the
 * API's stable `code`, the HTTP `status`, the localised `message` and the `requestId` of X-Request-Id, which
 * the operator can find in the service's logs.
 */

/** Error codes of the API's error table (the `code` of `{ error: { code, message } }`). */
export type ErrorCode =
  | 'invalid_api_key'
  | 'insufficient_funds'
  | 'model_not_allowed_for_key'
  | 'key_daily_limit_exceeded'
  | 'model_not_found'
  | 'task_not_found'
  | 'artifact_not_found'
  | 'artifact_expired'
  | 'file_not_found'
  | 'record_not_found'
  | 'webhook_not_found'
  | 'delivery_not_found'
  | 'topup_not_found'
  | 'not_found'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'idempotency_conflict'
  | 'request_in_progress'
  | 'task_not_cancelable'
  | 'element_name_taken'
  | 'persona_exists'
  | 'voice_not_verifiable'
  | 'voice_not_retryable'
  | 'too_many_webhooks'
  | 'too_many_records'
  | 'request_too_large'
  | 'file_too_large'
  | 'storage_quota_exceeded'
  | 'precondition_failed'
  | 'range_not_satisfiable'
  | 'invalid_request'
  | 'invalid_settings'
  | 'unknown_setting'
  | 'file_type'
  | 'file_empty'
  | 'element_not_found'
  | 'persona_not_found'
  | 'voice_not_found'
  | 'voice_not_ready'
  | 'style_not_found'
  | 'style_not_ready'
  | 'character_not_found'
  | 'rate_limited'
  | 'too_many_active'
  | 'internal_error'
  | 'element_create_failed'
  | 'persona_create_failed'
  | 'library_create_failed'
  | 'helper_failed'
  | 'model_unavailable'
  | 'sg_unavailable'
  | 'payments_unavailable';

/** Construction fields of an `ApiError`. */
export interface ApiErrorInit {
  /** The API's code; a code this client does not know yet is kept as it came. */
  code: ErrorCode | (string & {});
  status: number;
  message: string;
  /** X-Request-Id of the answer (null when the answer had none). */
  requestId: string | null;
  /** Seconds of the answer's Retry-After header, when it had one. */
  retryAfterSeconds?: number | null;
}

/** A refusal of the API: `{ error: { code, message } }` with its HTTP status. */
export class ApiError extends Error {
  readonly code: ErrorCode | (string & {});
  readonly status: number;
  readonly requestId: string | null;
  readonly retryAfterSeconds: number | null;
  /** Set by `tasks.run` when the task was created before this error: follow it rather than create again. */
  task?: { id: string; status: string };

  constructor(init: ApiErrorInit) {
    super(init.message);
    this.name = new.target.name;
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
  }
}

/** 401: the key is missing, wrong or revoked. */
export class AuthenticationError extends ApiError {}
/** 402: the wallet cannot cover the price; nothing was created. */
export class InsufficientFundsError extends ApiError {}
/** 403: the key may not use the model, or its daily limit is spent. */
export class PermissionDeniedError extends ApiError {}
/** 404: no such task, file, record, model or address (also another account's). */
export class NotFoundError extends ApiError {}
/** 409: idempotency conflicts, a request still in progress, states that forbid the call. */
export class ConflictError extends ApiError {}
/** 413 and 422: the request, its settings or its files break a rule; the message names the field. */
export class InvalidRequestError extends ApiError {}
/** 429: too many requests or too many active tasks; retried by the client first. */
export class RateLimitError extends ApiError {}
/**
 * 5xx: the service or the generation server failed or is unavailable; retried by the client for 503, and
 * for 500 or a gateway's 502/504 where the call is safe to repeat.
 */
export class ServerError extends ApiError {}

/** The subclass of a status. */
export function apiErrorFor(init: ApiErrorInit): ApiError {
  const s = init.status;
  if (s === 401) return new AuthenticationError(init);
  if (s === 402) return new InsufficientFundsError(init);
  if (s === 403) return new PermissionDeniedError(init);
  if (s === 404) return new NotFoundError(init);
  if (s === 409) return new ConflictError(init);
  if (s === 413 || s === 422) return new InvalidRequestError(init);
  if (s === 429) return new RateLimitError(init);
  if (s >= 500) return new ServerError(init);
  return new ApiError(init);
}

/** The request never got an answer (DNS, refused connection, reset, aborted). */
export class ConnectionError extends Error {
  /** Set by `tasks.run` when the task was created before this error: follow it rather than create again. */
  task?: { id: string; status: string };

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConnectionError';
  }
}

/** `tasks.wait` or `tasks.run` ran out of time before the task was final; `task` is its last state. */
export class WaitTimeoutError extends Error {
  readonly task: { id: string; status: string };
  constructor(task: { id: string; status: string }) {
    super(`Task ${task.id} is still ${task.status}`);
    this.name = 'WaitTimeoutError';
    this.task = task;
  }
}

/**
 * `tasks.run` ended with a task that did not succeed: `failed` (then `code` is the task's error code, such
 * as `generation_failed` or `content_refused`) or `canceled` (`code` is `canceled`). The hold was released;
 * `task` is the final task.
 */
export class TaskFailedError<
  T extends { id: string; status: string } = { id: string; status: string },
> extends Error {
  readonly task: T;
  readonly code: string;
  constructor(task: T & { error?: { code: string; message: string } }) {
    super(task.error ? `${task.error.code}: ${task.error.message}` : `Task ${task.id} was ${task.status}`);
    this.name = 'TaskFailedError';
    this.task = task;
    this.code = task.error?.code ?? task.status;
  }
}
