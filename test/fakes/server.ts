/**
 * What every provider fake shares: a node:http server on 127.0.0.1, JSON helpers, a call log for
 * assertions, and short-lived file links (providers' output URLs expire; tests need that to happen).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake received, its body parsed when it was JSON. */
export interface FakeCall {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
  at: number;
}

export interface FakeRequest {
  method: string;
  /** Path without the query. */
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: unknown;
  raw: Buffer;
}

export interface FakeReply {
  status: number;
  /** JSON-encoded unless it is a Buffer or a string (sent as it is). */
  body?: unknown;
  headers?: Record<string, string>;
}

export type FakeHandler = (request: FakeRequest) => Promise<FakeReply | null> | FakeReply | null;

/** A started fake; `calls` logs every request in order. */
export interface FakeServer {
  url: string;
  port: number;
  calls: FakeCall[];
  /** Serves `bytes` at a new link that answers 404 after `ttlMs` (milliseconds). */
  serveFile(bytes: Buffer, contentType: string, ttlMs: number): string;
  close(): Promise<void>;
}

/**
 * A gateway's HTML error page (a load balancer or proxy in front of the provider, not its API): `status`
 * with `Retry-After: retryAfterSeconds` and a body that is not JSON.
 */
export function gatewayPage(status: number, retryAfterSeconds: number): FakeReply {
  return {
    status,
    body: `<html><body><h1>${status}</h1>upstream gateway</body></html>`,
    headers: { 'content-type': 'text/html', 'retry-after': String(retryAfterSeconds) },
  };
}

function parseBody(raw: Buffer, contentType: string | undefined): unknown {
  if (raw.length === 0) return null;
  if (contentType?.includes('json')) {
    try {
      return JSON.parse(raw.toString('utf8')) as unknown;
    } catch {
      return raw.toString('utf8');
    }
  }
  return raw.toString('utf8');
}

function send(res: http.ServerResponse, reply: FakeReply): void {
  const isRaw = Buffer.isBuffer(reply.body) || typeof reply.body === 'string';
  const payload = reply.body === undefined ? '' : isRaw ? reply.body : JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    ...(isRaw || reply.body === undefined ? {} : { 'content-type': 'application/json' }),
    ...reply.headers,
  });
  res.end(payload);
}

/**
 * Starts a fake on 127.0.0.1 (`port` 0: any free port). `handler` answers everything but the file links;
 * returning null answers 404. A handler that never resolves makes the request hang (a dead provider).
 */
export async function startFakeServer(handler: FakeHandler, port = 0): Promise<FakeServer> {
  const calls: FakeCall[] = [];
  const files = new Map<string, { bytes: Buffer; contentType: string; until: number }>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const raw = Buffer.concat(chunks);
      const request: FakeRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: parseBody(raw, req.headers['content-type']),
        raw,
      };
      const file = /^\/_files\/([a-f0-9]+)$/.exec(url.pathname);
      if (file?.[1] && req.method === 'GET') {
        const found = files.get(file[1]);
        if (!found || found.until < Date.now()) return send(res, { status: 404, body: 'expired' });
        return send(res, { status: 200, body: found.bytes, headers: { 'content-type': found.contentType } });
      }
      calls.push({
        method: request.method,
        path: request.path,
        headers: req.headers,
        body: request.body,
        at: Date.now(),
      });
      Promise.resolve(handler(request)).then(
        (reply) => send(res, reply ?? { status: 404, body: { detail: 'Not Found' } }),
        (error: unknown) => send(res, { status: 500, body: { detail: String(error) } }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${bound}`;
  return {
    url,
    port: bound,
    calls,
    serveFile(bytes, contentType, ttlMs) {
      const id = randomBytes(8).toString('hex');
      files.set(id, { bytes, contentType, until: Date.now() + ttlMs });
      return `${url}/_files/${id}`;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Posts JSON to a callback URL, retrying a few times as providers do; never throws. */
export async function postJson(url: string, body: unknown, attempts = 3): Promise<number | null> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      await response.arrayBuffer();
      if (response.status < 500) return response.status;
    } catch {
      // Retried below, like a provider's webhook sender.
    }
    await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
  }
  return null;
}
