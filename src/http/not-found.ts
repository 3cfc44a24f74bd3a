import type { FastifyInstance } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { errors } from '../errors.ts';

const METHODS: readonly HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * 404 not_found for addresses nobody serves and 405 method_not_allowed (with Allow) for addresses that
 * exist under other methods. A shadow router of every registered route answers which methods exist.
 */
export function installNotFound(app: FastifyInstance, baseUrl: string): void {
  const shadow = FindMyWay({ ignoreTrailingSlash: false });
  const noop = (): void => {};
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (METHODS.includes(method as HTTPMethod) && !shadow.hasRoute(method as HTTPMethod, route.url)) {
        shadow.on(method as HTTPMethod, route.url, noop);
      }
    }
  });
  const links = { docs: `${baseUrl}/docs`, openapi: `${baseUrl}/openapi.json`, llms: `${baseUrl}/llms.txt` };
  app.setNotFoundHandler(async (request) => {
    const path = request.url.split('?')[0] ?? '/';
    const allow = METHODS.filter((m) => shadow.find(m, path) !== null);
    if (allow.length > 0) throw errors.methodNotAllowed(links, allow, request.method);
    throw errors.notFound(links, request.method, path);
  });
}
