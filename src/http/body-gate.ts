import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type ApiError, errors } from '../errors.ts';
import { servesNothing } from './not-found.ts';
import { queryRefusal } from './validator.ts';

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
 * A body whose type is given on more than one Content-Type line: Node keeps the first, where a proxy in
 * front may have read (or checked) the body as another type. The header is one value; 422 invalid_request,
 * as for two Idempotency-Key lines. Null with one line or none, and for a request whose body is not read:
 * none at all (neither length nor chunks; an empty one lost its type in the request context) or a GET's.
 */
function contentTypeRefusal(request: FastifyRequest): ApiError | null {
  const headers = request.headers;
  if (headers['content-type'] === undefined) return null;
  if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) return null;
  if (request.method === 'GET' || request.method === 'HEAD') return null;
  const raw = request.raw.rawHeaders;
  let lines = 0;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]?.length === 12 && raw[i]?.toLowerCase() === 'content-type') lines += 1;
  }
  if (lines < 2) return null;
  return errors.invalidRequest({
    en: 'Send one Content-Type header, not several.',
    ru: 'Отправьте один заголовок Content-Type, а не несколько.',
  });
}

/**
 * What the app decides of a request body from its headers alone, before asking for it or reading it. A
 * transfer coding nothing decodes is refused (`transferCodingRefusal`), and so is a type given twice
 * (`contentTypeRefusal`). Node answers `Expect: 100-continue`
 * with `100 Continue` as soon as the headers arrive, so a caller without a valid key, or with a body past
 * the route's limit, was told to send it and then refused; the 100 now goes out once the request passed its
 * `onRequest` hooks (authentication, the rate limit, an upload's declared size), just before the body is
 * read (Fastify reads it at an address nobody serves too), never for a declared length past the route's
 * body limit, whose 413 comes without the body, nor for a query the route's schema refuses (`queryRefusal`),
 * whose 422 used to follow the 100 since the query is validated after the body is parsed.
 */
export function installBodyGate(app: FastifyInstance): void {
  app.server.on('checkContinue', (req, res) => app.server.emit('request', req, res));
  // A callback, not an async function: it runs on every request.
  app.addHook('preParsing', (request, reply, payload, done) => {
    const refused = servesNothing(request)
      ? null
      : (transferCodingRefusal(request) ?? contentTypeRefusal(request));
    if (refused) return done(refused);
    if (!expectsContinue(request)) return done(null, payload);
    // A query the route refuses is refused now, without asking for the body (an upload's 100 MB).
    const query = queryRefusal(request);
    if (query) return done(query);
    const declared = Number(request.headers['content-length']);
    if (!(declared > request.routeOptions.bodyLimit)) reply.raw.writeContinue();
    done(null, payload);
  });
}

/** Node's own test of an `Expect` header (lib/_http_server.js). */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;

/** Whether the client waits for `100 Continue` before its body: Node asks only on HTTP/1.1. */
function expectsContinue(request: FastifyRequest): boolean {
  const expect = request.headers.expect;
  return expect !== undefined && request.raw.httpVersion === '1.1' && CONTINUE.test(expect);
}
