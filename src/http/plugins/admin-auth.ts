import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../errors.ts';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/** Operator routes accept only `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. */
export function installAdminAuth(app: FastifyInstance, adminToken: string): void {
  const expected = digest(adminToken);
  app.addHook('onRequest', async (request) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!match?.[1] || !timingSafeEqual(digest(match[1]), expected)) {
      throw errors.invalidAdminToken(request.headers.authorization !== undefined);
    }
  });
}
