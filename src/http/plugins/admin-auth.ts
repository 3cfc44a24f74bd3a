import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../errors.ts';
import type { RequestLimiter } from './rate-limit.ts';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * Operator routes accept only `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. Wrong
 * tokens count against the address's budget (the wrong-key budget, its own counter); past it the
 * address gets 429 rate_limited without any comparison, so guessing runs at most that fast (it ran at
 * about 1,150 a second without a limit).
 */
export function installAdminAuth(app: FastifyInstance, adminToken: string, limiter: RequestLimiter): void {
  const expected = digest(adminToken);
  app.addHook('onRequest', async (request) => {
    const wait = await limiter.adminTokenWait(request.ip);
    if (wait !== null) throw errors.rateLimited(wait);
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (match?.[1] && timingSafeEqual(digest(match[1]), expected)) return;
    const over = await limiter.takeWrongAdminToken(request.ip);
    throw over === null ? errors.invalidAdminToken(match !== null) : errors.rateLimited(over);
  });
}
