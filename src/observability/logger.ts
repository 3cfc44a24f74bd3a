/**
 * The process's one pino logger (CONTRACT §15): JSON lines, errors serialised with their causes, and no
 * secret ever written. Secrets are kept out three ways: headers that carry them are redacted by path,
 * URLs are logged through `safeUrl`, and every line passes a last scrub of known secret shapes (API keys,
 * bearer tokens, webhook secrets) and of the exact secrets this process was configured with.
 */
import type { Writable } from 'node:stream';
import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../config.ts';
import { decodeOrKeep } from '../lib/index.ts';

/** What replaces a secret in a log line. */
export const REDACTED = '[redacted]';

/** Fields that hold credentials wherever they appear in a logged object (pino `redact` paths). */
const REDACT_PATHS = [
  'authorization',
  'password',
  'secret',
  'token',
  'apiKey',
  'api_key',
  '*.authorization',
  '*.password',
  '*.secret',
  '*.token',
  '*.apiKey',
  '*.api_key',
  'headers.cookie',
  'headers["x-csrf-token"]',
  '*.headers.authorization',
  '*.headers.cookie',
  '*.headers["x-api-key"]',
  // The dashboard's session CSRF token: with the cookie it makes any change (multipart's trace line
  // carries the request's headers).
  '*.headers["x-csrf-token"]',
];

/**
 * Shapes of secrets, scrubbed from every line whatever field or message carries them: our API keys
 * (`gta_` and 32 base62 characters), webhook signing secrets (`whsec_…`), the tokens of direct links and
 * callback addresses, bearer credentials. The first two wherever they stand, even glued to other
 * characters (`%20gta_…` in a query, `/x/zzgta_…` in a path).
 */
const SECRET_SHAPES: readonly [RegExp, string][] = [
  [/gta_[A-Za-z0-9]{20,}/g, REDACTED],
  [/whsec_[A-Za-z0-9+/=_-]+/g, REDACTED],
  // The tokens of an upload's direct link and of a callback address (32 base62 characters each), wherever
  // a text quotes them: a provider's error naming the input link it could not fetch, or the request it got.
  [/((?<!\/v1)\/files\/)[A-Za-z0-9]{32}(?![A-Za-z0-9])/gi, `$1${REDACTED}`],
  [/(\/callbacks\/[^/\s"\\]{1,100}\/)[A-Za-z0-9]{32}(?![A-Za-z0-9])/gi, `$1${REDACTED}`],
  // Also in a URL, its space escaped (`Bearer%20…`, `Basic+…`), where a digit of `%20` may precede it.
  [/(?<![A-Za-z])(Bearer|Basic)(?:\s|%20|%09|\+)+[^\s",\\]+/gi, `$1 ${REDACTED}`],
];

/**
 * Query parameters whose values are never logged, also in their list forms (`token[]`, `token[0]`): the
 * usual names of secrets, and those of the headers, cookies and form field that carry ours (a client that
 * puts its `Authorization`, its `gta_session` cookie or the dashboard's `_csrf` in a query).
 */
const SECRET_QUERY =
  /^(token|key|api_key|apikey|x-api-key|access_token|secret|password|signature|sig|authorization|auth|cookie|session|_?csrf|x-csrf-token|gta_(?:session|console|console_csrf|reset|csrf)|x-amz-.*)(\[[^\]]*\])?$/i;
/**
 * The user info of an absolute-form target (`GET http://user:pass@host/… HTTP/1.1`), which Node takes and
 * the router routes by its path: a password sent there is still a password.
 */
const TARGET_USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i;
/** Longest URL written to a line: a 5,000-character path is noise. */
const LOGGED_URL_CHARS = 300;

/**
 * A request URL fit for a log line: the user info of an absolute-form target, the callback token of
 * `/v1/callbacks/{channel}/{token}`, the upload token of `/files/{token}/{name}` and the values of
 * secret-looking query parameters replaced. The logger
 * cuts it to a bounded length once its secrets are scrubbed (`url` serializer of `createLogger`).
 */
export function safeUrl(target: string): string {
  const url = target.replace(TARGET_USERINFO, `$1${REDACTED}@`);
  const at = url.indexOf('?');
  const raw = at < 0 ? url : url.slice(0, at);
  let path = redactedPath(raw);
  // The router matches the decoded path, so `/%66iles/<token>/a.png` opens the direct link too: a path
  // whose escapes hid such a prefix is written with its ASCII escapes decoded and the token taken out.
  if (path === raw && raw.includes('%')) {
    const decoded = raw.replace(/%([0-7][0-9A-F])/gi, (sequence, hex: string) =>
      hex.toUpperCase() === '2F' ? sequence : String.fromCharCode(Number.parseInt(hex, 16)),
    );
    const redacted = redactedPath(decoded);
    if (redacted !== decoded) path = redacted;
  }
  let shown = path;
  if (at >= 0) {
    const query = url
      .slice(at + 1)
      .split('&')
      .map((pair) => {
        const eq = pair.indexOf('=');
        const name = eq < 0 ? pair : pair.slice(0, eq);
        return eq >= 0 && SECRET_QUERY.test(decodeOrKeep(name)) ? `${name}=${REDACTED}` : pair;
      })
      .join('&');
    shown = `${path}?${query}`;
  }
  return shown;
}

/**
 * The `url` of a line: scrubbed (of the process's secrets too), then cut to a bounded length. In the other
 * order a secret straddling the cut would be written in part, most of it, and no longer match the scrub.
 */
function loggedUrl(url: string): string {
  const shown = scrubSecrets(url);
  return shown.length > LOGGED_URL_CHARS ? `${shown.slice(0, LOGGED_URL_CHARS)}…` : shown;
}

/** A path without the callback token of `/v1/callbacks/{channel}/{token}` and an upload link's token. */
function redactedPath(path: string): string {
  // Anywhere in the path, not only at its start: `//files/<token>/a.png`, `/./files/…` or
  // `/files%2F<token>/…` do not open the file, but the token in them still does.
  return (
    path
      .replace(/(\/callbacks(?:\/|%2F)+[^/]*(?:\/|%2F)+)[^/]+/gi, `$1${REDACTED}`)
      // An upload's direct link: its token is the only key to the file (CONTRACT §6). `/v1/files/{id}`
      // names an upload by its id, which opens nothing without a key.
      .replace(/((?<!\/v1)(?:\/|%2F)files(?:\/|%2F)+)[^/]+/gi, `$1${REDACTED}`)
  );
}

/**
 * Query parameters of DATABASE_URL and STORAGE_URL that hold credentials. The S3 access key id is no
 * secret by itself, but it names the account's key pair, and S3's refusals quote it
 * (`InvalidAccessKeyId`, `SignatureDoesNotMatch`), which a failed request's error line would carry.
 */
const URL_SECRET_PARAMS = /^(accessKeyId|secretAccessKey|sessionToken|password|secret|token)$/i;

/**
 * The credentials written into a connection URL (DATABASE_URL's password, STORAGE_URL's S3 key id, secret
 * key and session token), so the logger can keep them out of every line.
 */
export function secretsOfUrl(text: string): string[] {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return [];
  }
  const found = [...url.searchParams].filter(([name]) => URL_SECRET_PARAMS.test(name)).map(([, v]) => v);
  if (url.password) found.push(decodeURIComponent(url.password), url.password);
  return found.filter(Boolean);
}

/** A percent-escape of an unreserved character (RFC 3986: letters, digits, `-`, `.`, `_`, `~`). */
const UNRESERVED_ESCAPE = /%(2[DdEe]|3[0-9]|4[1-9A-Fa-f]|5[0-9Aa]|5[Ff]|6[1-9A-Fa-f]|7[0-9Aa]|7[Ee])/g;

/**
 * The exact secrets of this process (provider keys, operator and metrics tokens, …), given to
 * `createLogger`: no text shown to a caller or an operator carries them either, whatever path brought them
 * (a provider's error that quotes the request it got, shown as a task's reason or a channel's last error).
 */
const PROCESS_SECRETS = new Set<string>();

/**
 * Replaces secret shapes, the given exact secrets and the process's own (`PROCESS_SECRETS`) in a
 * serialised line. Escapes of unreserved characters are read first (`admin%2Dtoken` is `admin-token` to a
 * URL, and to the scrub): a secret put in a URL with some of its characters escaped is still found. Those escapes mean the same in any URL, and decoding them
 * adds no quote or backslash, so the line stays the JSON it was.
 */
export function scrubSecrets(line: string, secrets: readonly string[] = []): string {
  let out = line.includes('%')
    ? line.replace(UNRESERVED_ESCAPE, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    : line;
  for (const [shape, replacement] of SECRET_SHAPES) out = out.replace(shape, replacement);
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  for (const secret of PROCESS_SECRETS) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}

export interface LoggerOptions {
  level: LogLevel;
  /** Where lines go. (Default: standard output) */
  destination?: DestinationStream | Writable | undefined;
  /**
   * Exact secrets of this process (operator and metrics tokens, provider keys): never written, whatever
   * carries them. Values shorter than 8 characters are ignored, so no common word is blanked.
   */
  secrets?: readonly (string | null | undefined)[];
}

/** Builds the logger every part of the process shares (the HTTP app, the worker, the sweeper). */
export function createLogger(options: LoggerOptions): Logger {
  const secrets = (options.secrets ?? []).filter((s): s is string => typeof s === 'string' && s.length >= 8);
  for (const secret of secrets) PROCESS_SECRETS.add(secret);
  return pino(
    {
      level: options.level,
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      serializers: {
        // The cause chain is what tells a 500 apart from another (STYLE "Errors": keep `cause`).
        err: pino.stdSerializers.errWithCause,
        req: (req: { method?: string; url?: string }) => ({
          method: req.method,
          url: loggedUrl(safeUrl(req.url ?? '')),
        }),
        url: (url: unknown) => (typeof url === 'string' ? loggedUrl(url) : url),
      },
      // The process's secrets, these among them (PROCESS_SECRETS).
      hooks: { streamWrite: (line) => scrubSecrets(line) },
    },
    (options.destination ?? pino.destination(1)) as DestinationStream,
  );
}
