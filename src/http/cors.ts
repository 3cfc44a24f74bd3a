import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * What a page of another origin may do with the API (CONTRACT §16: the client kit runs in browsers). Keys
 * travel in `Authorization`, never in cookies, so any origin may call it: a page learns nothing it was
 * not given the key for, and no credentials are allowed (`Access-Control-Allow-Credentials` is never sent).
 */
const API_CORS = {
  origin: '*',
  methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
  // What the client kit and a waiting or resuming caller send.
  allowedHeaders: [
    'Authorization',
    'Content-Type',
    'Accept',
    'Accept-Language',
    'Idempotency-Key',
    'Prefer',
    'Last-Event-ID',
    'Range',
    'If-Range',
    'If-None-Match',
    'If-Match',
    'X-Request-Id',
  ],
  // What a caller reads back: request ids for support, the limits' headers to pace itself, the methods
  // a 405 allows, replays, ranges and file names of downloads.
  exposedHeaders: [
    'X-Request-Id',
    'Retry-After',
    'Allow',
    'RateLimit',
    'RateLimit-Policy',
    'Idempotent-Replayed',
    'Preference-Applied',
    'Location',
    'Content-Disposition',
    'Content-Range',
    'Accept-Ranges',
    'ETag',
  ],
  maxAge: 600,
} satisfies FastifyCorsOptions;

/**
 * The same for a request that is no preflight: an OPTIONS call without `Access-Control-Request-Method`
 * is a page's own request, answered as any other method the address does not take (405 with `Allow`, or
 * 404), with the headers that let the page read it. With preflights on, the plugin answered it 400
 * "Invalid Preflight Request" in plain text, outside the error table.
 */
const API_CORS_ACTUAL = { ...API_CORS, preflight: false } satisfies FastifyCorsOptions;

/** Nothing for the dashboard, the console and the rest: their pages are served from this origin only. */
const NO_CORS: FastifyCorsOptions = { origin: false };

/**
 * Cross-origin access to the API under /v1, answered before a key is asked for (a preflight carries
 * none). Only requests that name an `Origin` are looked at; without one nothing changes, so same-origin
 * and server-side callers pay for one comparison. Elsewhere an OPTIONS request is answered as before
 * (404 or 405 with `Allow`).
 */
export async function installCors(app: FastifyInstance): Promise<void> {
  await app.register(cors, {
    delegator: (request, callback) =>
      callback(null, !isApiCall(request) ? NO_CORS : isPreflight(request) ? API_CORS : API_CORS_ACTUAL),
  });
}

/** A page of another origin calling the API. */
function isApiCall(request: FastifyRequest): boolean {
  return request.headers.origin !== undefined && (request.raw.url ?? request.url).startsWith('/v1/');
}

/** A browser's preflight: an OPTIONS request naming the method it asks for. */
function isPreflight(request: FastifyRequest): boolean {
  return request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
}

/**
 * The plugin's headers for a request no hook sees: the router refuses a path it cannot read (bad
 * percent-encoding, a parameter over its length) before the plugin runs (framework-errors.ts). A page
 * of another origin must still pass the preflight of such an address and read its 404, as it does for
 * any other address nobody serves. True for a preflight, which the caller answers 204 as the plugin does.
 */
export function corsOutsideRouter(request: FastifyRequest, reply: FastifyReply): boolean {
  if (!isApiCall(request)) return false;
  reply.header('access-control-allow-origin', API_CORS.origin);
  if (isPreflight(request)) {
    reply.headers({
      'access-control-allow-methods': API_CORS.methods.join(', '),
      'access-control-allow-headers': API_CORS.allowedHeaders.join(', '),
      'access-control-max-age': String(API_CORS.maxAge),
    });
    return true;
  }
  reply.header('access-control-expose-headers', API_CORS.exposedHeaders.join(', '));
  return false;
}
