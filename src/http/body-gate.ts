import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type ApiError, errors } from '../errors.ts';

/**
 * A body under a transfer coding other than `chunked` (`gzip, chunked`): Node takes the chunks apart and
 * hands the rest over still coded, so it was read as plain bytes (a JSON body parsed as garbage, an upload
 * stored compressed). Nothing decodes it; 422 invalid_request, as for a Content-Encoding (the error table
 * has no 501 or 415). Node itself refuses a coding after `chunked` and one without it. Null when none.
 */
function transferCodingRefusal(request: FastifyRequest): ApiError | null {
  const coding = request.headers['transfer-encoding'];
  if (coding === undefined) return null;
  if (coding.split(',').every((part) => part.trim().toLowerCase() === 'chunked')) return null;
  return errors.invalidRequest({
    en: 'Transfer-Encoding other than chunked is not supported on a request: send the body uncompressed.',
    ru: 'Transfer-Encoding в запросе допускается только chunked: отправьте тело без сжатия.',
  });
}

/**
 * What the app decides of a request body from its headers alone, before reading it: a transfer coding
 * nothing decodes is refused (`transferCodingRefusal`), at an address someone serves.
 */
export function installBodyGate(app: FastifyInstance): void {
  // A callback, not an async function: it runs on every request.
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const refused = request.is404 ? null : transferCodingRefusal(request);
    if (refused) return done(refused);
    done(null, payload);
  });
}
