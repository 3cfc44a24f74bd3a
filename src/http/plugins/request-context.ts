import { randomUUID } from 'node:crypto';
import type { FastifyInstance, RawRequestDefaultExpression } from 'fastify';
import { negotiateLang } from '../../i18n/index.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A caller's X-Request-Id is kept when it is sane; otherwise the service makes one. */
export function requestIdOf(req: RawRequestDefaultExpression): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** X-Request-Id on every response and the message language of every request (CONTRACT §8). */
export function installRequestContext(app: FastifyInstance): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('lang', 'en');
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    const query = request.query as Record<string, unknown> | undefined;
    request.lang = negotiateLang(query?.lang, request.headers['accept-language']);
  });
}
