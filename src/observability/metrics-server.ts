/**
 * `GET /metrics` of a worker started alone (`npm run worker`), which has no HTTP app: its run counters and
 * durations live only in its own process (CONTRACT §15). The same token and answers as the API's route;
 * anything else is 404.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { translate } from '../i18n/index.ts';
import { bearerToken } from '../lib/index.ts';
import type { Metrics } from './metrics.ts';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

export interface MetricsServerOptions {
  metrics: Metrics;
  token: string;
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /**
   * Wrong tokens one address may send per window before it gets 429 without any comparison, as the API's
   * route counts them (`RATE_LIMIT_WRONG_KEY`). (Default: 30 a minute)
   */
  wrongTokenLimit?: { count: number; windowMs: number };
  /**
   * Longest wait for a request's headers (milliseconds): a scrape is a bare GET, so a client that trickles
   * its headers is cut off soon instead of holding a socket for Node's default minute. (Default: 10 s)
   */
  headersTimeoutMs?: number;
}

/** Connections the listener holds at once: a scraper or two, never a crowd. */
const MAX_CONNECTIONS = 64;

/** Starts the listener; resolves once it listens, with its port and a close function. */
export async function startMetricsServer(
  options: MetricsServerOptions,
): Promise<{ port: number; close(): Promise<void> }> {
  const expected = digest(options.token);
  const limit = options.wrongTokenLimit ?? { count: 30, windowMs: 60_000 };
  const wrong = new RateLimiterMemory({
    keyPrefix: 'worker-metrics-token',
    points: limit.count,
    duration: Math.max(1, Math.ceil(limit.windowMs / 1000)),
  });
  const retryAfter = (res: RateLimiterRes): Record<string, string> => ({
    'retry-after': String(Math.max(1, Math.ceil(res.msBeforeNext / 1000))),
  });
  const headersTimeoutMs = options.headersTimeoutMs ?? 10_000;
  const server = http.createServer(
    // Checked this often, so a slow client is cut off within a quarter of its limit.
    { connectionsCheckingInterval: Math.max(50, Math.floor(headersTimeoutMs / 4)) },
    (req, res) => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const send = (
        status: number,
        type: string,
        body: string,
        headers: Record<string, string> = {},
      ): void => {
        res.writeHead(status, { 'content-type': type, ...headers }).end(body);
      };
      const error = (
        status: number,
        code: 'not_found' | 'invalid_admin_token' | 'rate_limited',
        headers = {},
      ): void =>
        send(
          status,
          'application/json; charset=utf-8',
          JSON.stringify({
            error: {
              code,
              // This port serves the scrape alone: the API's 404 points to its documents, which are not here.
              message:
                code === 'not_found'
                  ? `Nothing lives at ${req.method ?? 'GET'} ${path.slice(0, 100)}: this port serves GET /metrics only.`
                  : translate(code, 'en', {}),
            },
          }),
          headers,
        );
      if (req.method !== 'GET' || path !== '/metrics') return error(404, 'not_found');
      const address = req.socket.remoteAddress ?? '';
      void answer(address, bearerToken(req)).catch(() =>
        send(500, 'text/plain; charset=utf-8', 'scrape failed\n'),
      );
      async function answer(address: string, token: string | undefined): Promise<void> {
        // Security: past the address's budget nothing is compared, so a right guess looks like a wrong one.
        const used = await wrong.get(address);
        if (used !== null && used.consumedPoints >= limit.count)
          return error(429, 'rate_limited', retryAfter(used));
        // Security: compared as digests in constant time, as the API's route does; two Authorization lines
        // bring no token (`bearerToken`), whichever of them is right.
        if (!(token && timingSafeEqual(digest(token), expected))) {
          try {
            await wrong.consume(address);
          } catch (rejection) {
            if (rejection instanceof RateLimiterRes) return error(429, 'rate_limited', retryAfter(rejection));
            throw rejection;
          }
          return error(401, 'invalid_admin_token', { 'www-authenticate': 'Bearer' });
        }
        send(200, options.metrics.contentType, await options.metrics.scrape());
      }
    },
  );
  // Security: no request of this listener has a body, so the whole request is due with its headers.
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = headersTimeoutMs;
  server.maxConnections = MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
