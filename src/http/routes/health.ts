import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { errors } from '../../errors.ts';
import type { AppDeps } from '../types.ts';

/** Liveness and readiness (CONTRACT §8); neither needs a key. */
export async function healthRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (request) => {
    try {
      await sql`select 1`.execute(deps.db.db);
      await deps.storage.ping();
    } catch (cause) {
      request.log.warn({ err: cause }, 'not ready');
      throw errors.notReady();
    }
    return { status: 'ready' };
  });
}
