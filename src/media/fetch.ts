/**
 * Download of a caller-supplied URL into a file, with a size cap and timeouts, never from loopback,
 * private, link-local or metadata addresses, also after redirects (CONTRACT §6).
 *
 * Every hop is checked before any connection: the URL is parsed with WHATWG `URL` (which normalises
 * decimal, octal and hex IPv4 spellings), an IP literal is checked directly, a name is resolved here
 * (all addresses) and refused if ANY of them is blocked, and the socket then connects to the checked
 * address itself (Host header and TLS SNI keep the name), so DNS cannot change between check and
 * connect. Redirects are followed by hand and each target goes through the same check.
 */
import { randomUUID } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns/promises';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ByteCounter } from '../lib/index.ts';
import { isBlockedAddress } from './address.ts';

export type FetchFailure =
  | 'blocked'
  | 'too_large'
  | 'unreachable'
  | 'timeout'
  | 'bad_status'
  | 'bad_url'
  | 'empty';

/** A download refused or failed; `reason` says why. */
export class FetchError extends Error {
  readonly reason: FetchFailure;
  constructor(reason: FetchFailure, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'FetchError';
    this.reason = reason;
  }
}

export type LookupFn = (hostname: string) => Promise<Array<{ address: string; family: 4 | 6 }>>;

export interface FetchOptions {
  /** Directory the downloaded file is written to. */
  dir: string;
  /** Largest accepted body (bytes). */
  maxBytes: number;
  /** Time allowed to establish each TCP connection (milliseconds, default 5000). */
  connectTimeoutMs?: number;
  /**
   * Time allowed for the whole download, all hops and the body included (milliseconds, default 30000,
   * the "30 s in all" of the decisions; a request's downloads together share one budget on top).
   */
  totalTimeoutMs?: number;
  /** Redirects followed at most (default 3). */
  maxRedirects?: number;
  /** Cancels the download; the signal's reason is thrown. */
  signal?: AbortSignal;
  /** Test-only escape hatch: addresses (exact IP strings) allowed although blocked. Production passes none. */
  allowAddresses?: readonly string[];
  /** DNS lookup override for tests (defaults to node:dns lookup with all: true). */
  lookup?: LookupFn;
  /**
   * Told the size of every chunk of the body before it is written; a rejection ends the download with
   * that error (a request's byte budget shared by several downloads).
   */
  meter?: (bytes: number) => Promise<void>;
}

export interface FetchedFile {
  path: string;
  /** Size of the stored body (bytes). */
  sizeBytes: number;
  /** URL of the hop that answered with the body (after redirects). */
  finalUrl: string;
}

export interface Target {
  url: URL;
  /** The checked address the socket connects to. */
  address: string;
  family: 4 | 6;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

async function defaultLookup(hostname: string): Promise<Array<{ address: string; family: 4 | 6 }>> {
  const found = await dnsLookup(hostname, { all: true, verbatim: true });
  return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
}

/** Control characters (C0, DEL, C1), which a URL parser drops or escapes silently. */
const CONTROL = /\p{Cc}/u;

export function parseUrl(raw: string): URL {
  // Inside the address (spaces and line ends around it are no part of it): the parser would drop a tab or
  // a line break, so the address kept and shown would differ from the one called.
  if (CONTROL.test(raw.trim())) throw new FetchError('bad_url', 'control characters in URL');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new FetchError('bad_url', 'not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new FetchError('bad_url', 'only http and https');
  if (url.username !== '' || url.password !== '') throw new FetchError('bad_url', 'credentials in URL');
  if (url.hostname === '') throw new FetchError('bad_url', 'no host');
  // Nothing listens on port 0: a link to it could never be read nor a webhook ever delivered.
  if (url.port === '0') throw new FetchError('bad_url', 'port 0');
  return url;
}

/** Resolves and checks the host of `url`; throws `blocked` before any connection is made. */
export async function resolveTarget(
  url: URL,
  options: Pick<FetchOptions, 'allowAddresses' | 'lookup'>,
  signal: AbortSignal,
): Promise<Target> {
  const allowed = (address: string): boolean =>
    !isBlockedAddress(address) || (options.allowAddresses?.includes(address) ?? false);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const literal = isIP(host);
  let addresses: Array<{ address: string; family: 4 | 6 }>;
  if (literal !== 0) {
    addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await abortable((options.lookup ?? defaultLookup)(host), signal);
    } catch (error) {
      if (signal.aborted) throw error;
      throw new FetchError('unreachable', `cannot resolve ${host}`, { cause: error });
    }
  }
  const first = addresses[0];
  if (!first) throw new FetchError('unreachable', `no address for ${host}`);
  // Security: refuse the host if ANY of its addresses is loopback/private/link-local/metadata (rebinding).
  if (!addresses.every(({ address }) => allowed(address))) {
    throw new FetchError('blocked', `address of ${host} is not public`);
  }
  return { url, address: first.address, family: first.family };
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // The work already started; its own failure, if any, is of no interest any more.
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Sends GET to the checked address of `target`; resolves with the response head. */
function request(
  target: Target,
  connectTimeoutMs: number,
  signal: AbortSignal,
): Promise<http.IncomingMessage> {
  const { url } = target;
  const isTls = url.protocol === 'https:';
  const hostIsName = isIP(url.hostname.replace(/^\[|\]$/g, '')) === 0;
  const requestOptions: https.RequestOptions = {
    // Security: connect to the address that was checked, never resolve the name again.
    host: target.address,
    family: target.family,
    port: url.port === '' ? (isTls ? 443 : 80) : Number(url.port),
    path: `${url.pathname}${url.search}`,
    method: 'GET',
    headers: { host: url.host, 'accept-encoding': 'identity', 'user-agent': 'generation-task-api/1' },
    agent: false,
    signal,
    ...(isTls && hostIsName ? { servername: url.hostname } : {}),
  };
  return new Promise((resolve, reject) => {
    const req = isTls ? https.request(requestOptions) : http.request(requestOptions);
    const connectTimer = setTimeout(() => {
      req.destroy(new FetchError('timeout', `no connection within ${connectTimeoutMs} ms`));
    }, connectTimeoutMs);
    req.once('socket', (socket) => {
      if (!socket.connecting) clearTimeout(connectTimer);
      else socket.once('connect', () => clearTimeout(connectTimer));
    });
    req.once('response', (res) => {
      clearTimeout(connectTimer);
      resolve(res);
    });
    // Without this listener node:http closes an unasked-for 101 with neither 'response' nor 'error', and
    // the download would wait forever; the caller refuses the status like any other.
    req.once('upgrade', (res, socket) => {
      clearTimeout(connectTimer);
      socket.destroy();
      resolve(res);
    });
    req.on('error', (error) => {
      clearTimeout(connectTimer);
      reject(error);
    });
    req.end();
  });
}

async function saveBody(
  res: http.IncomingMessage,
  options: FetchOptions,
  signal: AbortSignal,
): Promise<FetchedFile> {
  const declared = res.headers['content-length'];
  // Security: refuse a declared length over the cap before reading any of the body.
  if (declared !== undefined && Number(declared) > options.maxBytes) {
    res.destroy();
    throw new FetchError('too_large', `Content-Length ${declared} over ${options.maxBytes} bytes`);
  }
  const path = join(options.dir, randomUUID());
  const cap = new ByteCounter(
    options.maxBytes,
    () => new FetchError('too_large', `body over ${options.maxBytes} bytes`),
  );
  try {
    // Security: the cap is enforced while streaming, whatever the headers said.
    const file = createWriteStream(path, { flags: 'wx' });
    await (options.meter
      ? pipeline(res, cap, new Metered(options.meter), file, { signal })
      : pipeline(res, cap, file, { signal }));
  } catch (error) {
    res.destroy();
    await rm(path, { force: true });
    throw error;
  }
  if (cap.bytes === 0) {
    await rm(path, { force: true });
    throw new FetchError('empty', 'empty body');
  }
  return { path, sizeBytes: cap.bytes, finalUrl: '' };
}

/** Passes chunks on once `meter` has accepted their size. */
class Metered extends Transform {
  readonly #meter: (bytes: number) => Promise<void>;
  constructor(meter: (bytes: number) => Promise<void>) {
    super();
    this.#meter = meter;
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#meter(chunk.length).then(() => callback(null, chunk), callback);
  }
}

/** Maps low-level failures onto FetchError; a caller's abort is rethrown as its reason. */
function classify(error: unknown, signal: AbortSignal, timeout: AbortSignal, outer?: AbortSignal): unknown {
  if (error instanceof FetchError) return error;
  if (outer?.aborted) return outer.reason;
  if (timeout.aborted || signal.aborted)
    return new FetchError('timeout', 'download took too long', { cause: error });
  const message = error instanceof Error ? error.message : String(error);
  return new FetchError('unreachable', message, { cause: error });
}

/**
 * Downloads `url` into a new, uniquely named file in `options.dir`, following redirects, within the
 * size cap (bytes) and the timeouts. Throws FetchError (or the caller's abort reason).
 */
/**
 * Checks that `raw` is an http(s) URL whose host resolves to public addresses only (CONTRACT §6), without
 * connecting: a webhook's address at the time it is given. Throws `FetchError` (`bad_url`, `blocked`,
 * `unreachable`, `timeout`).
 */
export async function checkPublicUrl(
  raw: string,
  options: Pick<FetchOptions, 'allowAddresses' | 'lookup'> & { timeoutMs?: number } = {},
): Promise<URL> {
  const url = parseUrl(raw);
  const signal = AbortSignal.timeout(options.timeoutMs ?? 5_000);
  try {
    await resolveTarget(url, options, signal);
  } catch (error) {
    if (signal.aborted && !(error instanceof FetchError))
      throw new FetchError('timeout', 'resolving the host took too long');
    throw error;
  }
  return url;
}

export async function fetchToFile(url: string, options: FetchOptions): Promise<FetchedFile> {
  const totalTimeoutMs = options.totalTimeoutMs ?? 30_000;
  const timeout = AbortSignal.timeout(totalTimeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const maxRedirects = options.maxRedirects ?? 3;
  let current = parseUrl(url);
  try {
    for (let hop = 0; ; hop++) {
      const target = await resolveTarget(current, options, signal);
      const res = await request(target, options.connectTimeoutMs ?? 5000, signal);
      const status = res.statusCode ?? 0;
      if (REDIRECTS.has(status)) {
        const location = res.headers.location;
        res.destroy();
        if (!location) throw new FetchError('bad_status', `redirect ${status} without Location`);
        if (hop >= maxRedirects) throw new FetchError('bad_status', `more than ${maxRedirects} redirects`);
        let next: string;
        try {
          next = new URL(location, current).href;
        } catch {
          throw new FetchError('bad_url', 'redirect to an invalid URL');
        }
        current = parseUrl(next);
        continue;
      }
      if (status < 200 || status > 299) {
        res.destroy();
        throw new FetchError('bad_status', `status ${status}`);
      }
      const file = await saveBody(res, options, signal);
      return { ...file, finalUrl: current.href };
    }
  } catch (error) {
    throw classify(error, signal, timeout, options.signal);
  }
}
