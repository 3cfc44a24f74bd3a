/**
 * One log line and the HTTP series per answered request (CONTRACT §15), written when the answer ends. The
 * line carries the route's pattern and a URL with its secrets taken out (`safeUrl`), never headers or
 * bodies; a refusal names its error code, and an error the handler threw comes with its cause chain.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { safeUrl } from './logger.ts';
import type { Metrics } from './metrics.ts';
import { UNMATCHED_ROUTE } from './metrics.ts';
import { installRequestScope } from './request-scope.ts';

/** What an answer said about itself on the way out: its error code, the error thrown. */
interface Outcome {
  errorCode?: string;
  error?: unknown;
}

const outcomes = new WeakMap<FastifyRequest, Outcome>();
/** The code of an error body (`{"error":{"code":"…"`), read without parsing the whole body. */
const ERROR_CODE = /^\{"error":\{"code":"([a-z0-9_]{1,64})"/;

/** Installs the request scope, the per-request line and the HTTP series on the app. */
export function installRequestTelemetry(app: FastifyInstance, metrics: Metrics): void {
  installRequestScope(app);
  app.addHook('onError', async (request, _reply, error) => {
    outcomes.set(request, { ...outcomes.get(request), error });
  });
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode >= 400 && typeof payload === 'string') {
      const code = ERROR_CODE.exec(payload)?.[1];
      if (code !== undefined) outcomes.set(request, { ...outcomes.get(request), errorCode: code });
    }
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url;
    const status = reply.statusCode;
    const seconds = reply.elapsedTime / 1_000;
    metrics.observeRequest({ route, method: request.method, status }, seconds);
    const outcome = outcomes.get(request);
    const fields = {
      method: request.method,
      route: route ?? UNMATCHED_ROUTE,
      url: safeUrl(request.url),
      status,
      durationMs: Math.round(reply.elapsedTime * 10) / 10,
      ...(request.principal ? { accountId: request.principal.accountId } : {}),
      ...(outcome?.errorCode ? { errorCode: outcome.errorCode } : {}),
      // The cause of a server error; a refusal's code says enough.
      ...(status >= 500 && outcome?.error !== undefined ? { err: outcome.error } : {}),
    };
    if (status >= 500) request.log.error(fields, 'request failed');
    else request.log.info(fields, 'request');
  });
}
