import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { errors } from '../../errors.ts';
import { withTimeout } from '../../lib/index.ts';
import type { AppDeps } from '../types.ts';

/**
 * Longest wait for the database and the storage together (milliseconds): one that takes connections but
 * never answers is not ready, and says so in time for a probe, not after the pool's 35 s query timeout.
 */
export const READY_TIMEOUT_MS = 3_000;

/** Liveness and readiness (CONTRACT §8); neither needs a key. */
export async function healthRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (request) => {
    try {
      const check = async () => {
        await sql`select 1`.execute(deps.db.db);
        await deps.storage.ping();
      };
      await withTimeout(check(), READY_TIMEOUT_MS, `no answer within ${READY_TIMEOUT_MS} ms`);
    } catch (cause) {
      request.log.warn({ err: cause }, 'not ready');
      throw errors.notReady();
    }
    return { status: 'ready' };
  });
}
