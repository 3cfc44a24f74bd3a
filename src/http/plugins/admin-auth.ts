import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../errors.ts';
import { bearerToken } from '../../lib/index.ts';
import type { RequestLimiter } from './rate-limit.ts';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * Operator routes accept only `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. A request
 * with no Bearer token is 401, uncounted: it guesses nothing. Every token sent counts against the
 * address's budget before it is compared (the wrong-key budget, its own counter), and a right one gives
 * its attempt back; past it the address gets 429 rate_limited without any comparison, so guessing runs at
 * most that fast, in bursts too (it ran at about 1,150 a second without a limit).
 */
export function installAdminAuth(app: FastifyInstance, adminToken: string, limiter: RequestLimiter): void {
  const expected = digest(adminToken);
  app.addHook('onRequest', async (request, reply) => {
    // Accounts, balances and a new key's secret: no cache keeps them (as every /v1 answer of an account).
    reply.header('cache-control', 'no-store');
    const token = bearerToken(request.raw);
    // No token at all (or two Authorization lines) guesses nothing: 401, neither counted nor refused for
    // the address's guesses.
    if (token === undefined) throw errors.invalidAdminToken(false);
    // Counted before the comparison, in one step with the check: guesses sent together are weighed
    // within the budget too. A right token gives its attempt back.
    const wait = await limiter.takeAdminTokenAttempt(request.ip);
    if (wait !== null) throw errors.rateLimited(wait);
    if (!timingSafeEqual(digest(token), expected)) throw errors.invalidAdminToken(true);
    await limiter.adminTokenRight(request.ip);
  });
}
