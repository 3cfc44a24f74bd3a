/**
 * `GET /metrics` of a worker started alone (`npm run worker`), which has no HTTP app: its run counters and
 * durations live only in its own process (CONTRACT §15). The same token and answers as the API's route;
 * anything else is 404.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { translate } from '../i18n/index.ts';
import type { Metrics } from './metrics.ts';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

export interface MetricsServerOptions {
  metrics: Metrics;
  token: string;
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
}

/** Starts the listener; resolves once it listens, with its port and a close function. */
export async function startMetricsServer(
  options: MetricsServerOptions,
): Promise<{ port: number; close(): Promise<void> }> {
  const expected = digest(options.token);
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const send = (status: number, type: string, body: string, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { 'content-type': type, ...headers }).end(body);
    };
    const error = (status: number, code: 'not_found' | 'invalid_admin_token', headers = {}): void =>
      send(
        status,
        'application/json; charset=utf-8',
        JSON.stringify({
          error: {
            code,
            message: translate(code, 'en', { method: req.method ?? 'GET', path: path.slice(0, 100) }),
          },
        }),
        headers,
      );
    if (req.method !== 'GET' || path !== '/metrics') return error(404, 'not_found');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    // Security: compared as digests in constant time, as the API's route does.
    if (!(match?.[1] && timingSafeEqual(digest(match[1]), expected)))
      return error(401, 'invalid_admin_token', { 'www-authenticate': 'Bearer' });
    options.metrics.scrape().then(
      (body) => send(200, options.metrics.contentType, body),
      () => send(500, 'text/plain; charset=utf-8', 'scrape failed\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
