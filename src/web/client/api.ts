/**
 * Calls of the islands to `/v1` with the person's session cookie: the same endpoints, rules, limits and
 * errors as an API key gets. Unsafe methods carry the page's CSRF token (from `<meta name="csrf-token">`)
 * in `X-CSRF-Token`, without which `/v1` refuses a cookie with 403 `csrf_failed`. Islands import it as
 * `./api.js`.
 */

/** A refusal of `/v1`: the error table's code, the status and the message in the person's language. */
export class ApiFailure extends Error {
  readonly code: string;
  readonly status: number;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/**
 * Whether a refusal says the page's session is over (it expired, or the person signed out in another
 * tab): `/v1` no longer knows the cookie, so asking again only repeats the 401. A page that follows
 * something reloads instead, and the dashboard sends the person to sign in and back to the page.
 */
export function sessionEnded(error: unknown): boolean {
  return error instanceof ApiFailure && error.status === 401;
}

/**
 * The page's words (`<meta name="session-ended">`) for a refusal that says its session is over: the cookie
 * is unknown (`invalid_api_key`: expired, or signed out in another tab) or the session is another one than
 * the page's (`csrf_failed`: signed in again there). The API words these for API clients, about keys and
 * headers. Null for any other refusal, or a page without the words.
 */
export function sessionRefusal(code: string | undefined): string | null {
  if (code !== 'invalid_api_key' && code !== 'csrf_failed') return null;
  return document.querySelector<HTMLMetaElement>('meta[name="session-ended"]')?.content || null;
}

/** The CSRF token the page was rendered with. */
export function csrfToken(): string {
  return document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? '';
}

interface ErrorBody {
  error?: { code?: string; message?: string };
}

/**
 * One call to `/v1`: a JSON body (or a `FormData`/`Blob` as is), the answer's JSON, or an `ApiFailure`
 * carrying the error's code and message. The interface language rides in `Accept-Language`; `extraHeaders`
 * adds others (an `Idempotency-Key`).
 */
export async function api<T>(
  method: string,
  path: string,
  body?: unknown,
  signal?: AbortSignal,
  extraHeaders: Readonly<Record<string, string>> = {},
): Promise<T> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    'accept-language': document.documentElement.lang || 'en',
    ...extraHeaders,
  };
  if (method !== 'GET' && method !== 'HEAD') headers['x-csrf-token'] = csrfToken();
  let payload: BodyInit | undefined;
  if (body instanceof FormData || body instanceof Blob) payload = body;
  else if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  let response: Response;
  let parsed: unknown;
  try {
    response = await fetch(path, { method, headers, body: payload, credentials: 'same-origin', signal });
    const text = await response.text();
    parsed = text ? JSON.parse(text) : null;
  } catch (error) {
    // An abort stays an abort; a call that never got an answer (offline, a dropped connection) or got one
    // that is not the API's JSON (a proxy's error page) is said in the page's words, not the browser's.
    if (signal?.aborted) throw error;
    throw new ApiFailure(0, 'call_failed', callFailed(error));
  }
  if (!response.ok) {
    const error = (parsed as ErrorBody | null)?.error;
    throw new ApiFailure(
      response.status,
      error?.code ?? 'http_error',
      sessionRefusal(error?.code) ??
        error?.message ??
        callFailed(`${response.status} ${response.statusText}`),
    );
  }
  return parsed as T;
}

/** The page's words (`<meta name="call-failed">`) for a call without a readable answer; `cause` without them. */
function callFailed(cause: unknown): string {
  return (
    document.querySelector<HTMLMetaElement>('meta[name="call-failed"]')?.content ||
    (cause instanceof Error ? cause.message : String(cause))
  );
}
