/**
 * A guarded POST to a caller-named URL (webhook deliveries, CONTRACT §12 and §6): the host is resolved
 * here, every answer must be a public address, and the socket connects to the checked address itself
 * (Host header and TLS SNI keep the name), so DNS cannot change between check and connect. Redirects are
 * never followed: a 3xx is returned as it is and nothing is sent to where it points, which is how "also
 * after redirects" holds for a request whose body must not be repeated elsewhere.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { FetchError, type LookupFn, parseUrl, resolveTarget, type Target } from './fetch.ts';

export interface PostOptions {
  /** Request headers besides host, content-length and user-agent. */
  headers: Readonly<Record<string, string>>;
  /** Time allowed from the lookup to the response's status line (milliseconds). (Default: 10 s) */
  timeoutMs?: number;
  /** Response bytes read and thrown away before the socket is closed. (Default: 64 KB) */
  maxResponseBytes?: number;
  /** Cancels the request; the signal's reason is thrown. */
  signal?: AbortSignal;
  /** Test-only escape hatch: addresses (exact IP strings) allowed although blocked. */
  allowAddresses?: readonly string[];
  /** DNS lookup override for tests. */
  lookup?: LookupFn;
}

export interface PostResult {
  /** The response's status; a 3xx is not followed. */
  status: number;
}

const USER_AGENT = 'generation-task-api-webhooks/1';

/**
 * POSTs `body` to `url` and resolves with the status once the response head arrives. Throws FetchError
 * (`bad_url`, `blocked`, `unreachable`, `timeout`) or the caller's abort reason.
 */
export async function postGuarded(url: string, body: string, options: PostOptions): Promise<PostResult> {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 10_000);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  try {
    // resolveTarget starts its lookup before looking at the signal: an aborted one would leave it unheard.
    signal.throwIfAborted();
    const target = await resolveTarget(parseUrl(url), options, signal);
    const res = await send(target, body, options.headers, signal);
    discard(res, options.maxResponseBytes ?? 64 * 1024);
    return { status: res.statusCode ?? 0 };
  } catch (error) {
    if (error instanceof FetchError) throw error;
    if (options.signal?.aborted) throw options.signal.reason;
    if (timeout.aborted) throw new FetchError('timeout', 'no answer in time', { cause: error });
    const message = error instanceof Error ? error.message : String(error);
    throw new FetchError('unreachable', message, { cause: error });
  }
}

function send(
  target: Target,
  body: string,
  headers: Readonly<Record<string, string>>,
  signal: AbortSignal,
): Promise<http.IncomingMessage> {
  const { url } = target;
  const isTls = url.protocol === 'https:';
  const hostIsName = isIP(url.hostname.replace(/^\[|\]$/g, '')) === 0;
  const bytes = Buffer.from(body, 'utf8');
  const requestOptions: https.RequestOptions = {
    // Security: connect to the address that was checked, never resolve the name again.
    host: target.address,
    family: target.family,
    port: url.port === '' ? (isTls ? 443 : 80) : Number(url.port),
    path: `${url.pathname}${url.search}`,
    method: 'POST',
    headers: {
      ...headers,
      host: url.host,
      'content-length': String(bytes.length),
      'user-agent': USER_AGENT,
    },
    agent: false,
    signal,
    ...(isTls && hostIsName ? { servername: url.hostname } : {}),
  };
  return new Promise((resolve, reject) => {
    const req = isTls ? https.request(requestOptions) : http.request(requestOptions);
    req.once('response', resolve);
    // Without this listener node:http closes an unasked-for 101 with neither 'response' nor 'error', and
    // the attempt would hold its sender slot forever; it is answered as its status instead.
    req.once('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res);
    });
    req.on('error', reject);
    req.end(bytes);
  });
}

/** Reads and drops the response body up to `cap` bytes, then closes the socket: receivers may answer big. */
function discard(res: http.IncomingMessage, cap: number): void {
  let read = 0;
  res.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > cap) res.destroy();
  });
  res.on('error', () => {});
  // A receiver that never ends its body does not keep the socket: it is closed shortly after the status.
  const timer = setTimeout(() => res.destroy(), 2_000);
  timer.unref();
  res.once('close', () => clearTimeout(timer));
}
