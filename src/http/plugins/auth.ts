import type { FastifyInstance } from 'fastify';
import { authenticateKey } from '../../accounts/index.ts';
import { errors } from '../../errors.ts';
import type { AppDeps } from '../types.ts';
import type { RequestLimiter } from './rate-limit.ts';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Authenticates every request of the encapsulated context with `Authorization: Bearer <API_KEY>`:
 * missing, malformed, unknown or revoked keys are 401 invalid_api_key, and past 30 such attempts a
 * minute from one address 429 rate_limited. A valid key is never slowed by others' wrong attempts.
 */
export function installApiKeyAuth(app: FastifyInstance, deps: AppDeps, limiter: RequestLimiter): void {
  app.addHook('onRequest', async (request, reply) => {
    const header = request.headers.authorization;
    const match = header ? BEARER.exec(header) : null;
    const principal = match?.[1] ? await authenticateKey(deps.db.db, match[1]) : null;
    if (!principal) {
      const wait = await limiter.takeWrongKeyAttempt(request.ip);
      throw wait === null ? errors.invalidApiKey(header !== undefined) : errors.rateLimited(wait);
    }
    request.principal = principal;
    await limiter.takeAccountRequest(principal.accountId, reply);
  });
}
