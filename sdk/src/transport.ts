import { ApiError, apiErrorFor, ConnectionError } from './errors.ts';

/** The part of `fetch` the client uses (the global one, or any compatible function). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Options of `new Client(...)`. */
export interface ClientOptions {
  /** API key, sent as `Authorization: Bearer …`. */
  apiKey: string;
  /** Base address of the service. (Default: `http://localhost:8080`) */
  baseUrl?: string;
  /** Replacement for the global `fetch` (proxies, tests, other runtimes). */
  fetch?: FetchLike;
  /**
   * How many times a request is repeated after 429 or 503 (after `Retry-After`) and, for calls that are
   * safe to repeat, after a network error, a 500 or a gateway's 502/504. (Default: 2)
   */
  maxRetries?: number;
  /** Longest pause before a retry, whatever Retry-After asks (milliseconds). (Default: 60_000) */
  maxRetryDelayMs?: number;
  /** `Accept-Language` of every request: `en` or `ru` messages. (Default: the service's, English) */
  lang?: string;
  /** How the client pauses between retries and polls. (Default: a timer) */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Longest wait for an answer's status and headers, per attempt (milliseconds); a long-poll's `wait`
   * is added to it. An attempt without an answer by then is abandoned as a network error: repeated when
   * the call is safe to repeat, a ConnectionError otherwise. Neither an upload (the answer comes after the
   * whole file is sent) nor an answer's body (downloads, event streams) is bounded by it. 0: no limit.
   * (Default: 60_000)
   */
  timeoutMs?: number;
}

/** One HTTP call of the client. */
export interface CallOptions {
  method: 'GET' | 'POST' | 'DELETE' | 'PATCH' | 'PUT';
  path: string;
  query?: Record<string, string | number | boolean | undefined> | undefined;
  /** A JSON body. */
  json?: unknown;
  /** A raw body (uploads). */
  body?: Uint8Array | Blob;
  headers?: Record<string, string>;
  /** Safe to repeat after a network error or a 500: reads, deletes, creations under an Idempotency-Key. */
  idempotent?: boolean;
  /**
   * A 429 is thrown at once instead of waited out and repeated: the caller has another way that the limit
   * does not hold back (a long-poll or a stream refused for the account's waiting places: plain polls).
   */
  rateLimitFallback?: boolean;
  /** The service may hold the answer this long on purpose (a long-poll's `wait`), in seconds. */
  waitSeconds?: number | undefined;
  signal?: AbortSignal | undefined;
}

/** One attempt's timing: its signal, and the timer that ends it (`#attempt`). */
interface Bound {
  readonly signal: AbortSignal | undefined;
  timedOut(): boolean;
  /** What ran out, for the ConnectionError. */
  readonly message: string;
  /** Stops the timer. */
  done(): void;
  /** Times a body read whole, from now, as the headers were (without a long-poll's wait). */
  arm(): void;
}

export const DEFAULT_BASE_URL = 'http://localhost:8080';
const RETRIED_STATUSES = new Set([429, 503]);

/** Resolves after `ms`, or rejects when `signal` aborts first. */
export function timerSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Seconds of a Retry-After header (delta-seconds or an HTTP date), or null. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}

/** Sends requests with the key, retries what may be retried and turns refusals into typed errors. */
/**
 * A signal aborted when any of `signals` is, with its reason: `AbortSignal.any` where the runtime has it
 * (Node 20.3, Safari 17.4, Chrome 116, Firefox 124), else the same made by hand, so the kit keeps its
 * promise of Node 20 and the browsers before those. `native` is for the kit's tests.
 */
export function anySignal(
  signals: readonly AbortSignal[],
  native: ((signals: AbortSignal[]) => AbortSignal) | null = AbortSignal.any?.bind(AbortSignal) ?? null,
): AbortSignal {
  if (native) return native([...signals]);
  const controller = new AbortController();
  const done = signals.find((s) => s.aborted);
  if (done) {
    controller.abort(done.reason);
    return controller.signal;
  }
  const onAbort = (event: Event): void => {
    for (const s of signals) s.removeEventListener('abort', onAbort);
    controller.abort((event.target as AbortSignal).reason);
  };
  for (const s of signals) s.addEventListener('abort', onAbort);
  return controller.signal;
}

export class Transport {
  readonly baseUrl: string;
  readonly maxRetries: number;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #apiKey: string;
  readonly #fetch: FetchLike;
  readonly #maxRetryDelayMs: number;
  readonly #lang: string | undefined;
  readonly #timeoutMs: number;

  constructor(options: ClientOptions) {
    if (!options.apiKey) throw new TypeError('apiKey is required');
    this.#apiKey = options.apiKey;
    this.baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    // Checked as timeoutMs is: NaN (`Number(process.env.UNSET)`) would never reach `attempt >= maxRetries`,
    // and a call that keeps failing would be repeated for good.
    const maxRetries = options.maxRetries ?? 2;
    if (!(Number.isInteger(maxRetries) && maxRetries >= 0))
      throw new TypeError('maxRetries must be a whole number, 0 or more');
    this.maxRetries = maxRetries;
    const maxRetryDelayMs = options.maxRetryDelayMs ?? 60_000;
    if (!(maxRetryDelayMs >= 0))
      throw new TypeError('maxRetryDelayMs must be a number of milliseconds, 0 or more');
    this.#maxRetryDelayMs = maxRetryDelayMs;
    this.#lang = options.lang;
    this.sleep = options.sleep ?? timerSleep;
    const timeoutMs = options.timeoutMs ?? 60_000;
    if (!(timeoutMs >= 0)) throw new TypeError('timeoutMs must be a number of milliseconds, 0 or more');
    this.#timeoutMs = timeoutMs;
  }

  /** The address of `path` with `query` (undefined values left out). */
  url(path: string, query?: CallOptions['query']): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) params.set(key, String(value));
    }
    const search = params.toString();
    return `${this.baseUrl}${path}${search ? `?${search}` : ''}`;
  }

  /** The answer of a successful call (2xx, or 3xx/4xx/5xx never: those throw `ApiError`). */
  async send(call: CallOptions): Promise<Response> {
    return (await this.#exchange(call, false)).response;
  }

  /**
   * `send`, with `readBody` the answer's body read whole within the attempt (JSON answers, never downloads
   * or streams): timed as its headers were, and a body cut short is a network error like a missing answer,
   * so a creation whose answer broke off is repeated under its Idempotency-Key.
   */
  async #exchange(
    call: CallOptions,
    readBody: boolean,
  ): Promise<{ response: Response; text: string | undefined }> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.#apiKey}`, ...call.headers };
    if (this.#lang) headers['accept-language'] = this.#lang;
    let body: RequestInit['body'];
    if (call.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(call.json);
    } else if (call.body !== undefined) body = call.body as RequestInit['body'];
    const url = this.url(call.path, call.query);
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      const bound = this.#attempt(call);
      try {
        response = await this.#fetch(url, {
          method: call.method,
          headers,
          ...(body === undefined ? {} : { body }),
          ...(bound.signal ? { signal: bound.signal } : {}),
        });
      } catch (error) {
        await this.#afterNetworkError(call, attempt, bound, error);
        continue;
      } finally {
        bound.done();
      }
      if (response.ok) {
        if (!readBody || response.status === 204) return { response, text: undefined };
        // A body read whole is timed as its headers were.
        bound.arm();
        try {
          return { response, text: await response.text() };
        } catch (error) {
          await this.#afterNetworkError(call, attempt, bound, error);
          continue;
        } finally {
          bound.done();
        }
      }
      const retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
      // A wait longer than the client's longest pause (a helper's hour) would only be refused again: the
      // refusal is thrown at once, and its `retryAfterSeconds` says when to come back.
      const waitable = retryAfter === null || retryAfter * 1000 <= this.#maxRetryDelayMs;
      const fallsBack = response.status === 429 && call.rateLimitFallback === true;
      if (RETRIED_STATUSES.has(response.status) && waitable && !fallsBack && attempt < this.maxRetries) {
        await response.body?.cancel().catch(() => {});
        const waitMs = retryAfter === null ? 500 * 2 ** attempt : retryAfter * 1000;
        await this.sleep(Math.min(waitMs, this.#maxRetryDelayMs), call.signal);
        continue;
      }
      // A refusal's body is read whole: timed as its headers were.
      bound.arm();
      const error = await errorOf(response, retryAfter).finally(() => bound.done());
      // The same Idempotency-Key still being processed (CONTRACT §4): asking again soon is the intended use.
      if (error instanceof ApiError && error.code === 'request_in_progress' && attempt < this.maxRetries) {
        await this.sleep(Math.min((retryAfter ?? 1) * 1000, this.#maxRetryDelayMs), call.signal);
        continue;
      }
      // A server error ("retry later"), or a gateway's answer instead of the service's (a 502 or 504 page):
      // the request may have been handled, so it is repeated only where that is harmless, as after a network
      // error. The service's own 502s (a generator refusing a library record) are final.
      const transient =
        error.status === 500 ||
        ((error.status === 502 || error.status === 504) && error.code.startsWith('http_'));
      if (transient && repeatable(call) && waitable && attempt < this.maxRetries) {
        const waitMs = retryAfter === null ? 500 * 2 ** attempt : retryAfter * 1000;
        await this.sleep(Math.min(waitMs, this.#maxRetryDelayMs), call.signal);
        continue;
      }
      throw error;
    }
  }

  /**
   * The signal of one attempt: the caller's, ended also when no answer came within the timeout (a
   * long-poll's wait added; uploads unbounded). `done` once the answer's headers are in, so a body read as
   * a stream (a download, events) is never cut by it; `arm` times a body read whole (JSON, a refusal) anew.
   */
  #attempt(call: CallOptions): Bound {
    const limitMs =
      this.#timeoutMs === 0 || call.body !== undefined ? 0 : this.#timeoutMs + (call.waitSeconds ?? 0) * 1000;
    if (limitMs === 0) {
      return { signal: call.signal, timedOut: () => false, message: '', done: () => {}, arm: () => {} };
    }
    const timeout = new AbortController();
    let message = `no answer within ${limitMs} ms`;
    let timer = setTimeout(() => timeout.abort(new Error(message)), limitMs);
    const bodyMs = this.#timeoutMs;
    return {
      signal: call.signal ? anySignal([call.signal, timeout.signal]) : timeout.signal,
      timedOut: () => timeout.signal.aborted,
      get message() {
        return message;
      },
      done: () => clearTimeout(timer),
      arm: () => {
        clearTimeout(timer);
        message = `the answer's body did not come within ${bodyMs} ms`;
        timer = setTimeout(() => timeout.abort(new Error(message)), bodyMs);
      },
    };
  }

  /**
   * After a network error (no answer, or its body cut short): the caller's abort is thrown as it came; a
   * call safe to repeat pauses before its next attempt while attempts are left; else a ConnectionError.
   */
  async #afterNetworkError(call: CallOptions, attempt: number, bound: Bound, error: unknown): Promise<void> {
    if (call.signal?.aborted) throw error;
    if (!repeatable(call) || attempt >= this.maxRetries) {
      const reason = bound.timedOut() ? bound.message : networkReason(error);
      throw new ConnectionError(`${call.method} ${call.path}: ${reason}`, { cause: error });
    }
    await this.sleep(Math.min(500 * 2 ** attempt, this.#maxRetryDelayMs), call.signal);
  }

  /** A call answered with JSON (undefined for 204), its body read within the attempt. */
  async json<T>(call: CallOptions): Promise<T> {
    const { text } = await this.#exchange(call, true);
    return (text === undefined ? undefined : JSON.parse(text)) as T;
  }
}

/** A request that may have reached the service is repeated only when repeating it is harmless. */
function repeatable(call: CallOptions): boolean {
  return call.idempotent ?? (call.method === 'GET' || call.method === 'DELETE');
}

/**
 * A failed request's message with its cause: `fetch` says only "fetch failed", and the cause names the
 * address and the reason (`connect ECONNREFUSED 127.0.0.1:8080`, `getaddrinfo ENOTFOUND host`).
 */
function networkReason(error: unknown): string {
  const message = (error as Error).message;
  const cause = (error as { cause?: { message?: unknown; code?: unknown } }).cause;
  const text = typeof cause?.message === 'string' ? cause.message.trim() : '';
  const code = typeof cause?.code === 'string' ? cause.code : '';
  // Socket errors carry their code in the message; TLS ones a page of OpenSSL text, an attempt at several
  // addresses (AggregateError) none at all: then the code is the reason.
  const detail = code && !text.includes(code) ? code : text;
  return detail && !message.includes(detail) ? `${message} (${detail})` : message;
}

/** The typed error of a refusal; bodies that are not the error shape still give a code. */
async function errorOf(response: Response, retryAfter: number | null): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  let code = `http_${response.status}`;
  let message = text.slice(0, 500) || response.statusText || `HTTP ${response.status}`;
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof parsed.error?.code === 'string') code = parsed.error.code;
    if (typeof parsed.error?.message === 'string') message = parsed.error.message;
  } catch {
    // Not JSON (a proxy's page): the status decides the class, the text is the message.
  }
  return apiErrorFor({
    code,
    status: response.status,
    message,
    requestId: response.headers.get('x-request-id'),
    retryAfterSeconds: retryAfter,
  });
}

/**
 * A random UUID (v4) for Idempotency-Key. Browsers offer `crypto.randomUUID` only in secure contexts (https,
 * localhost); elsewhere the same is built from `crypto.getRandomValues`, which every context has.
 */
export function randomKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
