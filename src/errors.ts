/**
 * One error type for every refusal the API makes, built through the factories of `errors` so codes and
 * statuses live in one table (reference "Errors", CONTRACT §3, §7, §9). `http/error-handler.ts` is the
 * only place an ApiError becomes a response; the message is localised there from `i18n/`.
 */

import { plural } from './i18n/index.ts';
import { echoed } from './lib/index.ts';

/** Every error code the service answers with, and its HTTP status. */
export const ERROR_STATUS = {
  invalid_api_key: 401,
  invalid_admin_token: 401,
  invalid_credentials: 401,
  insufficient_funds: 402,
  model_not_allowed_for_key: 403,
  key_daily_limit_exceeded: 403,
  email_not_confirmed: 403,
  csrf_failed: 403,
  model_not_found: 404,
  task_not_found: 404,
  artifact_expired: 404,
  artifact_not_found: 404,
  account_not_found: 404,
  key_not_found: 404,
  channel_not_found: 404,
  file_not_found: 404,
  record_not_found: 404,
  webhook_not_found: 404,
  delivery_not_found: 404,
  topup_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  idempotency_conflict: 409,
  request_in_progress: 409,
  element_name_taken: 409,
  persona_exists: 409,
  too_many_keys: 409,
  email_taken: 409,
  account_has_email: 409,
  too_many_webhooks: 409,
  too_many_records: 409,
  credit_reference_conflict: 409,
  task_not_cancelable: 409,
  voice_not_verifiable: 409,
  voice_not_retryable: 409,
  precondition_failed: 412,
  request_too_large: 413,
  file_too_large: 413,
  storage_quota_exceeded: 413,
  range_not_satisfiable: 416,
  invalid_settings: 422,
  unknown_setting: 422,
  invalid_request: 422,
  invalid_token: 422,
  file_type: 422,
  file_empty: 422,
  element_not_found: 422,
  persona_not_found: 422,
  voice_not_found: 422,
  voice_not_ready: 422,
  style_not_found: 422,
  style_not_ready: 422,
  character_not_found: 422,
  rate_limited: 429,
  too_many_active: 429,
  internal_error: 500,
  element_create_failed: 502,
  persona_create_failed: 502,
  library_create_failed: 502,
  helper_failed: 502,
  model_unavailable: 503,
  sg_unavailable: 503,
  not_ready: 503,
  payments_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Failure codes a finished task can carry in `error.code` (CONTRACT §3). */
export const TASK_FAILURE_CODES = [
  'generation_failed',
  'content_refused',
  'timeout',
  'input_unavailable',
] as const;
export type TaskFailureCode = (typeof TASK_FAILURE_CODES)[number];

/** Values a message template may interpolate. */
export type MessageParams = Readonly<Record<string, string | number>>;

export interface ApiErrorOptions {
  params?: MessageParams;
  /** Extra response headers, for example `Retry-After`. */
  headers?: Readonly<Record<string, string>>;
  /** Extra top-level body fields beside `error` (the links of not_found). */
  body?: Readonly<Record<string, unknown>>;
  /** Ready messages (both languages) that replace the template, for rule violations. */
  detail?: { en: string; ru: string };
  cause?: unknown;
}

export class ApiError extends Error {
  override name = 'ApiError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly params: MessageParams;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Readonly<Record<string, unknown>>;
  readonly detail: { en: string; ru: string } | undefined;

  constructor(code: ErrorCode, options: ApiErrorOptions = {}) {
    super(options.detail?.en ?? code, { cause: options.cause });
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.params = clipped(options.params ?? {});
    this.headers = options.headers ?? {};
    this.body = options.body ?? {};
    this.detail = options.detail;
  }
}

/**
 * The params with every text clipped to ECHOED_CHARS: a caller's 5,000-character id, key, name or path is
 * not worth sending back in full, whichever message echoes it.
 */
function clipped(params: MessageParams): MessageParams {
  let out: Record<string, string | number> | null = null;
  for (const [name, value] of Object.entries(params)) {
    const shown = typeof value === 'string' ? echoed(value) : value;
    if (shown === value) continue;
    out ??= { ...params };
    out[name] = shown;
  }
  return out ?? params;
}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}

const retryAfter = (seconds: number): Record<string, string> => ({
  'Retry-After': String(Math.max(1, Math.ceil(seconds))),
});

/**
 * The method a refusal names: a HEAD is the GET without its body, and its Content-Length must be the
 * GET's (RFC 9110 §8.6), so its message names GET; "HEAD" is one character longer.
 */
const asGet = (method: string): string => (method === 'HEAD' ? 'GET' : method);

/**
 * An account's upload storage in megabytes (MiB), as the quota refusal shows it: one decimal, or up to three
 * where one would misread. The amount in use is rounded down, so that it reads as neither nothing nor the
 * whole quota when it is neither ("0.05 MB of 0.1 MB in use", not "0.1 MB of 0.1 MB").
 */
export function storageFigures(quotaBytes: number, usedBytes: number): { quota: number; used: number } {
  const mib = 1024 * 1024;
  for (let digits = 1; ; digits++) {
    const scale = 10 ** digits;
    const quota = Math.round((quotaBytes / mib) * scale) / scale;
    const used = Math.floor((usedBytes / mib) * scale) / scale;
    const misreads = (usedBytes > 0 && used === 0) || (usedBytes < quotaBytes && used >= quota);
    if (!misreads || digits === 3) return { quota, used };
  }
}

const bearerChallenge = (sent: boolean): Record<string, string> => ({
  'WWW-Authenticate': sent ? 'Bearer error="invalid_token"' : 'Bearer',
});

/** Factories, one per refusal; the only way service code builds an ApiError. */
export const errors = {
  // RFC 6750 §3: a 401 names the scheme; `invalid_token` when a token was sent but is not accepted.
  invalidApiKey: (sent = false): ApiError =>
    new ApiError('invalid_api_key', { headers: bearerChallenge(sent) }),
  invalidAdminToken: (sent = false): ApiError =>
    new ApiError('invalid_admin_token', { headers: bearerChallenge(sent) }),
  insufficientFunds: (amountMinor: number, availableMinor: number): ApiError =>
    new ApiError('insufficient_funds', { params: { amount: amountMinor, available: availableMinor } }),
  /**
   * The balance is below the cheapest price the settings can have, checked before their input files are
   * read: the run costs at least that much, and its files may add to it, so the amount is not "the" price.
   */
  insufficientFundsForAtLeast: (floorMinor: number, availableMinor: number): ApiError =>
    new ApiError('insufficient_funds', {
      detail: {
        en: `The balance is too low: the run costs at least ${floorMinor} kopecks (its input files may add to that; POST /v1/price answers the exact amount), ${availableMinor} are available. No task was created.`,
        ru: `Недостаточно средств: запуск стоит не меньше ${floorMinor} коп. (входные файлы могут добавить к этому; точную сумму отвечает POST /v1/price), доступно ${availableMinor}. Задача не создана.`,
      },
    }),
  modelNotAllowedForKey: (model: string): ApiError =>
    new ApiError('model_not_allowed_for_key', { params: { model } }),
  keyDailyLimitExceeded: (limitMinor: number, spentMinor: number): ApiError =>
    new ApiError('key_daily_limit_exceeded', { params: { limit: limitMinor, spent: spentMinor } }),
  // A key of any length is looked up; the message echoes at most ECHOED_CHARS of it (ApiError).
  modelNotFound: (model: string): ApiError => new ApiError('model_not_found', { params: { model } }),
  taskNotFound: (id: string): ApiError => new ApiError('task_not_found', { params: { id } }),
  artifactExpired: (id: string): ApiError => new ApiError('artifact_expired', { params: { id } }),
  artifactNotFound: (id: string, index: string | number): ApiError =>
    new ApiError('artifact_not_found', { params: { id, index } }),
  accountNotFound: (id: string): ApiError => new ApiError('account_not_found', { params: { id } }),
  keyNotFound: (id: string): ApiError => new ApiError('key_not_found', { params: { id } }),
  channelNotFound: (name: string): ApiError => new ApiError('channel_not_found', { params: { name } }),
  fileNotFound: (id: string): ApiError => new ApiError('file_not_found', { params: { id } }),
  recordNotFound: (id: string): ApiError => new ApiError('record_not_found', { params: { id } }),
  notFound: (links: Record<string, string>, method: string, path: string): ApiError =>
    new ApiError('not_found', { params: { method: asGet(method), path }, body: links }),
  methodNotAllowed: (links: Record<string, string>, allow: readonly string[], method: string): ApiError =>
    new ApiError('method_not_allowed', {
      params: { method: asGet(method), allow: allow.join(', ') },
      headers: { Allow: allow.join(', ') },
      body: links,
    }),
  idempotencyConflict: (): ApiError => new ApiError('idempotency_conflict'),
  requestInProgress: (): ApiError => new ApiError('request_in_progress', { headers: retryAfter(1) }),
  elementNameTaken: (name: string): ApiError => new ApiError('element_name_taken', { params: { name } }),
  personaExists: (): ApiError => new ApiError('persona_exists'),
  voiceNotVerifiable: (): ApiError => new ApiError('voice_not_verifiable'),
  voiceNotRetryable: (): ApiError => new ApiError('voice_not_retryable'),
  /** Wrong e-mail or password; which of the two is never said. */
  invalidCredentials: (): ApiError => new ApiError('invalid_credentials'),
  emailNotConfirmed: (): ApiError => new ApiError('email_not_confirmed'),
  /** A cookie-authenticated unsafe request without the session's CSRF token. */
  csrfFailed: (): ApiError => new ApiError('csrf_failed'),
  emailTaken: (): ApiError => new ApiError('email_taken'),
  accountHasEmail: (id: string): ApiError => new ApiError('account_has_email', { params: { id } }),
  /** An e-mail link's token that is unknown, used or expired. */
  invalidToken: (): ApiError => new ApiError('invalid_token'),
  tooManyKeys: (limit: number): ApiError => new ApiError('too_many_keys', { params: { limit } }),
  tooManyWebhooks: (limit: number): ApiError => new ApiError('too_many_webhooks', { params: { limit } }),
  tooManyRecords: (limit: number): ApiError => new ApiError('too_many_records', { params: { limit } }),
  webhookNotFound: (id: string): ApiError => new ApiError('webhook_not_found', { params: { id } }),
  deliveryNotFound: (id: string): ApiError => new ApiError('delivery_not_found', { params: { id } }),
  topupNotFound: (id: string): ApiError => new ApiError('topup_not_found', { params: { id } }),
  /** Top-ups are off (`PAYMENTS=off`) or the payment provider did not answer; nothing was paid. */
  paymentsUnavailable: (retryAfterSeconds = 30): ApiError =>
    new ApiError('payments_unavailable', { headers: retryAfter(retryAfterSeconds) }),
  creditReferenceConflict: (reference: string, amountMinor: number): ApiError =>
    new ApiError('credit_reference_conflict', { params: { reference, amount: amountMinor } }),
  /** An operator's credit under the reference a top-up's payment credits with (CONTRACT §14). */
  creditReferenceIsPayment: (): ApiError =>
    new ApiError('credit_reference_conflict', {
      detail: {
        en: "reference: it is the payment id of one of the account's top-ups, which credits under it.",
        ru: 'reference: это идентификатор платежа одного из пополнений счёта, он зачисляет под ним.',
      },
    }),
  taskNotCancelable: (status: string): ApiError =>
    new ApiError('task_not_cancelable', { params: { status } }),
  requestTooLarge: (limitBytes: number): ApiError =>
    new ApiError('request_too_large', { params: { limit: Math.round(limitBytes / 1024) } }),
  /** The header block past Node's limit (its 431, which the reference's table lacks). */
  headersTooLarge: (): ApiError =>
    new ApiError('request_too_large', {
      detail: { en: 'The request headers are too large.', ru: 'Заголовки запроса слишком велики.' },
    }),
  /** A download whose `If-Match` names another file (RFC 9110 §13.1.1). */
  preconditionFailed: (): ApiError => new ApiError('precondition_failed'),
  /** A body that stalls or trickles; the connection is closed, as the rest of the body is never read. */
  requestTimeout: (): ApiError => new ApiError('request_timeout', { headers: { Connection: 'close' } }),
  /** An amount that would take a balance past 2^53 − 1 kopecks, where numbers stop being exact. */
  amountTooLarge: (field: string): ApiError =>
    new ApiError('invalid_request', {
      detail: {
        en: `${field}: the balance would exceed ${Number.MAX_SAFE_INTEGER} kopecks, the largest exact amount.`,
        ru: `${field}: баланс превысил бы ${Number.MAX_SAFE_INTEGER} копеек — наибольшую точную сумму.`,
      },
    }),
  storageQuotaExceeded: (quotaBytes: number, usedBytes: number): ApiError =>
    new ApiError('storage_quota_exceeded', {
      params: storageFigures(quotaBytes, usedBytes),
    }),
  fileTooLarge: (field: string, limitBytes: number): ApiError =>
    new ApiError('file_too_large', { params: { field, limit: Math.round(limitBytes / 1024 / 1024) } }),
  invalidRequest: (detail: { en: string; ru: string }): ApiError =>
    new ApiError('invalid_request', { detail }),
  /** An HTTP/1.1 request without Host; the connection is closed, as Node closes it. */
  missingHost: (): ApiError =>
    new ApiError('invalid_request', {
      detail: { en: 'The request has no Host header.', ru: 'В запросе нет заголовка Host.' },
      headers: { Connection: 'close' },
    }),
  /** A request with more than one Host header, or one that is no host (RFC 9112 §3.2); closed, as above. */
  badHost: (): ApiError =>
    new ApiError('invalid_request', {
      detail: {
        en: 'The request must carry one Host header naming a host, with an optional port.',
        ru: 'В запросе должен быть один заголовок Host с именем хоста и, при необходимости, портом.',
      },
      headers: { Connection: 'close' },
    }),
  /** Text with the NUL character (U+0000), which PostgreSQL cannot store: refused on both engines. */
  nulInText: (): ApiError =>
    new ApiError('invalid_request', {
      detail: {
        en: 'Text in the request may not contain the NUL character (U+0000).',
        ru: 'Текст в запросе не может содержать символ NUL (U+0000).',
      },
    }),
  invalidSettings: (detail: { en: string; ru: string }): ApiError =>
    new ApiError('invalid_settings', { detail }),
  unknownSetting: (detail: { en: string; ru: string }): ApiError =>
    new ApiError('unknown_setting', { detail }),
  fileType: (field: string): ApiError => new ApiError('file_type', { params: { field } }),
  fileEmpty: (field: string): ApiError => new ApiError('file_empty', { params: { field } }),
  libraryItem: (
    code:
      | 'element_not_found'
      | 'persona_not_found'
      | 'voice_not_found'
      | 'voice_not_ready'
      | 'style_not_found'
      | 'style_not_ready'
      | 'character_not_found',
    id: string,
  ): ApiError => new ApiError(code, { params: { id } }),
  rateLimited: (retryAfterSeconds: number, headers: Record<string, string> = {}): ApiError =>
    new ApiError('rate_limited', { headers: { ...headers, ...retryAfter(retryAfterSeconds) } }),
  /** Past the event streams and waiting calls one account may hold open at once (CONTRACT §12). */
  tooManyStreams: (limit: number, retryAfterSeconds = 5): ApiError =>
    new ApiError('rate_limited', {
      headers: retryAfter(retryAfterSeconds),
      detail: {
        en: `Your account already holds ${limit} ${plural('en', limit, ['event stream or waiting call', 'event streams and waiting calls'])} open on this server; close one, or retry after the time in Retry-After.`,
        ru: `У вашего аккаунта на этом сервере уже ${plural('ru', limit, ['открыт', 'открыто', 'открыто'])} ${limit} ${plural('ru', limit, ['поток событий или ожидающий запрос', 'потока событий и ожидающих запроса', 'потоков событий и ожидающих запросов'])}; закройте один или повторите после времени из Retry-After.`,
      },
    }),
  /** The links of one request are larger together than the server downloads for one request. */
  downloadsTooLarge: (limitMb: number): ApiError =>
    new ApiError('request_too_large', {
      detail: {
        en: `The files linked by this request are larger than ${limitMb} MB together. Upload big files with POST /v1/files and send their direct links, which are read without a download.`,
        ru: `Файлы по ссылкам этого запроса вместе больше ${limitMb} МБ. Загрузите большие файлы через POST /v1/files и передайте их прямые ссылки — они читаются без скачивания.`,
      },
    }),
  /** The account's requests made the server download its per-minute allowance already. */
  downloadAllowanceSpent: (retryAfterSeconds: number, limitMb: number): ApiError =>
    new ApiError('rate_limited', {
      headers: retryAfter(retryAfterSeconds),
      detail: {
        en: `The links of your requests made the server download ${limitMb} MB in the last minute; retry after the time in Retry-After, or upload the files with POST /v1/files and send their direct links.`,
        ru: `По ссылкам ваших запросов сервер уже скачал ${limitMb} МБ за последнюю минуту; повторите после времени из Retry-After или загрузите файлы через POST /v1/files и передайте их прямые ссылки.`,
      },
    }),
  tooManyActive: (model: string, limit: number, retryAfterSeconds = 5): ApiError =>
    new ApiError('too_many_active', { params: { model, limit }, headers: retryAfter(retryAfterSeconds) }),
  internal: (cause?: unknown): ApiError => new ApiError('internal_error', { cause }),
  /**
   * A row the request changes was held by another transaction past the request's lock wait (a stuck or
   * slow worker's): the request's transaction rolled back whole, and the same request succeeds once the
   * row is free. The reference's code for a fault on our side, "retry later", with when (decisions.md).
   */
  busy: (cause: unknown): ApiError =>
    new ApiError('internal_error', {
      cause,
      headers: retryAfter(5),
      detail: {
        en: 'What this request changes is busy with other work on our side; nothing was changed. Retry in a few seconds.',
        ru: 'То, что меняет этот запрос, занято другой работой на нашей стороне; ничего не изменено. Повторите через несколько секунд.',
      },
    }),
  /** The generator refused or did not answer in time: a library creation, or a free helper's call. */
  createFailed: (
    code: 'element_create_failed' | 'persona_create_failed' | 'library_create_failed' | 'helper_failed',
  ): ApiError => new ApiError(code, { headers: retryAfter(60) }),
  modelUnavailable: (model: string): ApiError =>
    new ApiError('model_unavailable', { params: { model }, headers: retryAfter(60) }),
  sgUnavailable: (): ApiError => new ApiError('sg_unavailable', { headers: retryAfter(30) }),
  /** A request that reached this process while it stops (an open connection's next request). */
  shuttingDown: (): ApiError =>
    new ApiError('sg_unavailable', {
      headers: { ...retryAfter(1), connection: 'close' },
      detail: {
        en: 'This server is restarting or shutting down and takes no new request; send it again in a moment.',
        ru: 'Этот сервер перезапускается или останавливается и не принимает новых запросов; повторите запрос чуть позже.',
      },
    }),
  notReady: (): ApiError => new ApiError('not_ready'),
} as const;
