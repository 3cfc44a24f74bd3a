import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { type ApiError, errors } from '../errors.ts';
import { decodeOrKeep } from '../lib/index.ts';

const METHODS: readonly HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
/** The model key of an address under `/v1/models/{key}/…`. */
const MODEL_PATH = /^\/v1\/models\/([^/]+)\/./;

/** Longest path echoed in a not_found message: a 5,000-character path is not worth sending back. */
const ECHOED_PATH_CHARS = 100;

/** The `docs`, `openapi` and `llms` links of 404 and 405 bodies (CONTRACT §8). */
export type ApiLinks = Readonly<Record<'docs' | 'openapi' | 'llms', string>>;

export function apiLinks(baseUrl: string): ApiLinks {
  return { docs: `${baseUrl}/docs`, openapi: `${baseUrl}/openapi.json`, llms: `${baseUrl}/llms.txt` };
}

/** 404 not_found for `url` (query left out, long paths cut). */
export function notFoundAt(links: ApiLinks, method: string, url: string): ApiError {
  const path = url.split('?')[0] ?? '/';
  const shown = path.length > ECHOED_PATH_CHARS ? `${path.slice(0, ECHOED_PATH_CHARS)}…` : path;
  return errors.notFound(links, method, shown);
}

/** A page answering a browser's visit to an address nobody serves (the dashboard's 404 page). */
export type NotFoundPage = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

/**
 * Whether a request reaches no route that serves it: an address nobody serves (`is404`), or an OPTIONS
 * request the CORS plugin's catch-all route took only to hand it to the not-found handler (a preflight is
 * answered before any body is read). Either is answered 404 or 405 whatever its body, which is not read.
 */
export function servesNothing(request: FastifyRequest): boolean {
  return request.is404 || (request.method === 'OPTIONS' && request.routeOptions.url === '*');
}

/**
 * Whether a visit is a browser's page load outside the API: a GET or HEAD that asks for HTML (browsers'
 * navigations do; API clients, curl and fetch do not) at a path outside `/v1/` and `/admin/v1/`.
 */
export function isPageVisit(request: FastifyRequest, path: string): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  if (path.startsWith('/v1/') || path.startsWith('/admin/v1/')) return false;
  return (request.headers.accept ?? '').includes('text/html');
}

/**
 * 404 not_found for addresses nobody serves and 405 method_not_allowed (with Allow) for addresses that
 * exist under other methods. A shadow router of every registered route answers which methods exist.
 * `pages.page`, once set, answers a browser's page load instead (`isPageVisit`), of a POST-only address too.
 */
export function installNotFound(
  app: FastifyInstance,
  links: ApiLinks,
  pages: { page: NotFoundPage | null } = { page: null },
  isModel: (key: string) => boolean = () => true,
): void {
  const shadow = FindMyWay({ ignoreTrailingSlash: false });
  const noop = (): void => {};
  app.addHook('onRoute', (route) => {
    // The CORS plugin's catch-all OPTIONS route answers preflights of the API only and hands every other
    // OPTIONS request back to this handler: it serves no address of its own.
    if (route.url === '*' || route.url === '/*') return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (METHODS.includes(method as HTTPMethod) && !shadow.hasRoute(method as HTTPMethod, route.url)) {
        shadow.on(method as HTTPMethod, route.url, noop);
      }
    }
  });
  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    // An empty path segment (`/v1/tasks/`) names nothing under any method (error-handler.ts): a route it
    // matches only with an empty parameter does not make its methods allowed there.
    const allow = METHODS.filter((m) => {
      const found = shadow.find(m, path);
      return found !== null && !Object.values(found.params).some((value) => value === '');
    });
    // A person who mistyped an address of the dashboard gets its 404 page, not the API's JSON; so does one
    // who opens an address only the dashboard's forms post to (`/signout`): there is no page there.
    if (pages.page !== null && isPageVisit(request, path)) return pages.page(request, reply);
    // A route of this very method that found nothing (a missing static file) is a plain 404.
    if (allow.length > 0 && !allow.includes(request.method as HTTPMethod)) {
      throw errors.methodNotAllowed(links, allow, request.method);
    }
    // An address under a model key that no model has (`/v1/models/nope/elements`): the reference's
    // "Unknown model key: 404 model_not_found", rather than a bare not_found.
    const modelKey = MODEL_PATH.exec(path)?.[1];
    const key = modelKey === undefined ? undefined : decodeOrKeep(modelKey);
    if (key !== undefined && !isModel(key)) throw errors.modelNotFound(key);
    throw notFoundAt(links, request.method, request.url);
  });
}
