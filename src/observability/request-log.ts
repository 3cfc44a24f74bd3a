/**
 * One log line and the HTTP series per answered request (CONTRACT §15), written when the answer ends. The
 * line carries the route's pattern and a URL with its secrets taken out (`safeUrl`), never headers or
 * bodies; a refusal names its error code, and an error the handler threw comes with its cause chain.
 * Hooks take callbacks, not promises: they run on every request, polls included.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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
/** pino's level numbers: a line below the logger's level is not even built. */
const LEVELS: Readonly<Record<string, number>> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
};
const INFO = 30;
/** The status of a request its client closed before the answer ended (nginx's 499). */
const CLIENT_CLOSED = 499;
const ERROR = 50;

/** Installs the request scope, the per-request line and the HTTP series on the app. */
export function installRequestTelemetry(app: FastifyInstance, metrics: Metrics): void {
  installRequestScope(app);
  app.addHook('onError', (request, _reply, error, done) => {
    outcomes.set(request, { ...outcomes.get(request), error });
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode >= 400 && typeof payload === 'string') {
      const code = ERROR_CODE.exec(payload)?.[1];
      if (code !== undefined) outcomes.set(request, { ...outcomes.get(request), errorCode: code });
    }
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    line(metrics, request, reply.statusCode, reply.elapsedTime / 1_000);
    done();
  });
  // A client that leaves before its answer ends (an event stream closed, a long-poll or a creation's
  // wait given up) gets no onResponse: the waiting routes call this when they see it go (`clientGone`),
  // so only they pay for noticing, and the line and series carry 499, nginx's "client closed request".
  app.decorateReply('closedByClient', function (this: FastifyReply) {
    line(metrics, this.request, CLIENT_CLOSED, this.elapsedTime / 1_000);
  });
}

/**
 * The line and series of a request the router refused before any hook ran (Fastify's `frameworkErrors`:
 * a bad escape in the path, a path parameter over its length). Such a request runs none of the app's
 * hooks, so the refusal calls this as it answers, with the error code it sends; the line and the series
 * (`route="unmatched"`) are written when the answer ends.
 */
export function observeRefusedRequest(
  metrics: Metrics,
  request: FastifyRequest,
  reply: FastifyReply,
  errorCode?: string,
): void {
  const started = performance.now();
  if (errorCode !== undefined) outcomes.set(request, { errorCode });
  reply.raw.once('finish', () =>
    line(metrics, request, reply.statusCode, (performance.now() - started) / 1_000),
  );
}

/** Writes a request's line (unless below the logger's level) and counts it in the HTTP series. */
function line(metrics: Metrics, request: FastifyRequest, status: number, seconds: number): void {
  const route = request.routeOptions.url;
  metrics.observeRequest({ route, method: request.method, status }, seconds);
  const failed = status >= 500;
  if ((LEVELS[request.log.level] ?? Number.POSITIVE_INFINITY) > (failed ? ERROR : INFO)) return;
  const outcome = outcomes.get(request);
  const fields = {
    method: request.method,
    route: route ?? UNMATCHED_ROUTE,
    url: safeUrl(request.url),
    status,
    durationMs: Math.round(seconds * 10_000) / 10,
    ...(request.principal ? { accountId: request.principal.accountId } : {}),
    ...(outcome?.errorCode ? { errorCode: outcome.errorCode } : {}),
    // The cause of a server error; a refusal's code says enough.
    ...(failed && outcome?.error !== undefined ? { err: outcome.error } : {}),
  };
  if (failed) request.log.error(fields, 'request failed');
  else request.log.info(fields, status === CLIENT_CLOSED ? 'request closed by the client' : 'request');
}

declare module 'fastify' {
  interface FastifyReply {
    /** Writes the request's line and series for a client that left before the answer ended (499). */
    closedByClient(): void;
  }
}
