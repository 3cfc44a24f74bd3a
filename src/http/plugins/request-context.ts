import { randomUUID } from 'node:crypto';
import type { FastifyInstance, RawRequestDefaultExpression } from 'fastify';
import { errors } from '../../errors.ts';
import { negotiateLang } from '../../i18n/index.ts';
import { servesNothing } from '../not-found.ts';

/** CONTRACT §15: an incoming X-Request-Id of printable ASCII, at most 128 characters, is kept. */
const REQUEST_ID = /^[\x20-\x7e]{1,128}$/;

/** A caller's X-Request-Id is kept when it is printable and short; otherwise the service makes one. */
export function requestIdOf(req: RawRequestDefaultExpression): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** The scheme and authority of an absolute-form request target (`http://host:8080`). */
const ABSOLUTE = /^https?:\/\/([^/?#]*)/i;

/**
 * A request target in its origin form (RFC 9112 §3.2): `GET http://host/v1/models?lang=ru`, the absolute
 * form a server must accept (§3.2.2), is served as `GET /v1/models?lang=ru`. The router found the route
 * either way, but everything reading the URL saw the absolute form: a CORS preflight was 405, the sign-in
 * page redirected to itself, 404 messages quoted the host. Any other target is left as it came.
 */
export function originFormOf(req: RawRequestDefaultExpression): string {
  const url = req.url ?? '/';
  if (url.charCodeAt(0) === 47) return url;
  const target = ABSOLUTE.exec(url);
  // An authority that is no host (`user@host`, `[::1`, none at all) is left as it came, to be refused.
  if (target === null || !target[1] || !HOST.test(target[1])) return url;
  const rest = url.slice(target[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/**
 * X-Request-Id and `X-Content-Type-Options: nosniff` on every response and the message language of every
 * request (CONTRACT §8). An HTTP/1.1 request without Host, and any with more than one or with one that
 * names no host (RFC 9112 §3.2), is refused here, as Node would refuse the first, but in the error
 * table's shape. So is a request that comes while the app closes, on a connection opened before (Fastify's
 * own answer to it is a 503 in its shape, without a request id): `503 sg_unavailable`, to be sent again.
 */
export function installRequestContext(app: FastifyInstance): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('lang', 'en');
  const served = servedMethods(app);
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // A callback, not an async function: it runs on every request, and a promise per hook is measurable.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // No answer is to be read as another type than it says: a JSON error quoting the caller's text is
    // never sniffed into HTML. (Pages and downloads set it too, with their own policies.)
    reply.header('x-content-type-options', 'nosniff');
    const query = request.query as Record<string, unknown> | undefined;
    request.lang = negotiateLang(query?.lang, request.headers['accept-language']);
    if (closing) {
      done(errors.shuttingDown());
      return;
    }
    const host = request.headers.host;
    if (host === undefined && request.raw.httpVersion === '1.1') {
      done(errors.missingHost());
      return;
    }
    // Node keeps the first of several Host lines, where a proxy in front may have read another.
    if (host !== undefined && (!HOST.test(host) || hostLines(request.raw.rawHeaders) > 1)) {
      done(errors.badHost());
      return;
    }
    // An empty body is no body, whatever type it says it has (`curl -d ''` says a form, `fetch` with ''
    // says text): Fastify would hand nothing to that type's parser and refuse the type, on a cancel or a
    // delete that takes no body at all. Without its type Fastify reads it as the absent body it is.
    // An address nobody serves (or an OPTIONS call that is no preflight, which the CORS plugin's catch-all
    // route hands on) answers 404 or 405 whatever its body (not-found.ts), so its type goes too:
    // its body then reaches only the fallback parser, which leaves it unread (json-body.ts), and a type
    // that names no media type (`Content-Type: foo`) is not refused before any parser looks at it.
    const headers = request.headers;
    if (
      headers['content-type'] !== undefined &&
      ((headers['content-length'] === '0' && !headers['transfer-encoding']) || servesNothing(request))
    )
      delete headers['content-type'];
    // Every target but the odd ones is a path by now (`originFormOf`): one test of its first character
    // keeps the checks below off the requests that make up the traffic.
    if (request.url.charCodeAt(0) === 47) {
      done();
      return;
    }
    // An absolute-form target `originFormOf` left as it came names no host (`http://user@host/`: RFC 9110
    // §4.2.4 has userinfo treated as an error). The router would serve it all the same, while CORS, the
    // pages and 404 messages read the target as sent. (One it cannot read, `http:///`, it answers 404.)
    if (ABSOLUTE.test(request.url)) {
      done(errors.invalidRequest(AUTHORITY_REFUSAL));
      return;
    }
    // The asterisk form names the server, not a resource, and only OPTIONS takes it (RFC 9112 §3.2.4); the
    // router would take it for `/`, the dashboard's page, with a query after it (`*?lang=ru`) too.
    if (isAsterisk(request.raw.url)) {
      if (request.method !== 'OPTIONS') {
        done(errors.invalidRequest(ASTERISK_REFUSAL));
        return;
      }
      reply.code(204).header('allow', served()).send();
      return;
    }
    done();
  });
}

/** Whether a request target is the asterisk form, a query after it read as on any other target. */
function isAsterisk(url: string | undefined): boolean {
  return url !== undefined && url.charCodeAt(0) === 42 && (url.length === 1 || url.charCodeAt(1) === 63);
}

/** The methods an `Allow` lists, in the order it lists them. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * Every method some address of the service answers, read from the routes as they are added: what
 * `OPTIONS *` tells of the server as a whole. A fixed list left out the operator's PATCH. OPTIONS is
 * always answered (CORS preflights, the 405 of an address), as the asterisk form itself is.
 */
function servedMethods(app: FastifyInstance): () => string {
  const methods = new Set<string>(['OPTIONS']);
  let allow: string | null = null;
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) methods.add(method);
    allow = null;
  });
  return () => {
    allow ??= METHOD_ORDER.filter((method) => methods.has(method)).join(', ');
    return allow;
  };
}

const AUTHORITY_REFUSAL = {
  en: 'The request target must name a host (http://host/path) or be a path such as /v1/models.',
  ru: 'Цель запроса должна называть хост (http://host/path) или быть путём, например /v1/models.',
};

const ASTERISK_REFUSAL = {
  en: 'The request target "*" is for OPTIONS only: name a path such as /v1/models.',
  ru: 'Цель запроса "*" допустима только для OPTIONS: укажите путь, например /v1/models.',
};

/** A Host value (RFC 9112 §3.2, RFC 3986 §3.2.2): a name, an IPv4 or a bracketed IPv6 address, a port. */
const HOST = /^(?:\[[0-9A-Za-z:.%]+\]|[\w\-.~!$&'()*+,;=%]*)(?::\d*)?$/;

function hostLines(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.length === 4 && rawHeaders[i]?.toLowerCase() === 'host') count += 1;
  }
  return count;
}
