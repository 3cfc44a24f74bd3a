import { randomUUID } from 'node:crypto';
import type { FastifyInstance, RawRequestDefaultExpression } from 'fastify';
import { errors } from '../../errors.ts';
import { negotiateLang } from '../../i18n/index.ts';

/** CONTRACT §15: an incoming X-Request-Id of printable ASCII, at most 128 characters, is kept. */
const REQUEST_ID = /^[\x20-\x7e]{1,128}$/;

/** A caller's X-Request-Id is kept when it is printable and short; otherwise the service makes one. */
export function requestIdOf(req: RawRequestDefaultExpression): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * X-Request-Id and `X-Content-Type-Options: nosniff` on every response and the message language of every
 * request (CONTRACT §8). An HTTP/1.1 request without Host (RFC 9112 §3.2) is refused here, as Node would,
 * but in the error table's shape.
 */
export function installRequestContext(app: FastifyInstance): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('lang', 'en');
  // A callback, not an async function: it runs on every request, and a promise per hook is measurable.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // No answer is to be read as another type than it says: a JSON error quoting the caller's text is
    // never sniffed into HTML. (Pages and downloads set it too, with their own policies.)
    reply.header('x-content-type-options', 'nosniff');
    const query = request.query as Record<string, unknown> | undefined;
    request.lang = negotiateLang(query?.lang, request.headers['accept-language']);
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
      done(errors.missingHost());
      return;
    }
    done();
  });
}
