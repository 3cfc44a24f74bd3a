import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../errors.ts';
import { bearerToken } from '../../lib/index.ts';
import type { Metrics } from '../../observability/index.ts';
import type { RequestLimiter } from '../plugins/rate-limit.ts';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * `GET /metrics` in Prometheus text format (CONTRACT §15), registered only when METRICS_TOKEN is set, so
 * without it the address is as unknown as any other (404). Outside the API-key context: a scrape never
 * counts against an account's request limit. Wrong tokens share the operator token's per-address budget.
 */
export async function metricsRoutes(
  app: FastifyInstance,
  deps: { metrics: Metrics; metricsToken: string; limiter: RequestLimiter },
): Promise<void> {
  const expected = digest(deps.metricsToken);
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    // Counted before the comparison, in one step with the check (as the operator token's attempts).
    const wait = await deps.limiter.takeAdminTokenAttempt(request.ip);
    if (wait !== null) throw errors.rateLimited(wait);
    // Two Authorization lines bring no token (`bearerToken`), whichever of them is right.
    const token = bearerToken(request.raw);
    // Security: compared as digests in constant time, so the comparison leaks neither length nor prefix.
    if (!(token && timingSafeEqual(digest(token), expected))) {
      throw errors.invalidAdminToken(token !== undefined);
    }
    await deps.limiter.adminTokenRight(request.ip);
    const body = await deps.metrics.scrape();
    return reply.type(deps.metrics.contentType).send(body);
  });
}
