import http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import {
  type AppDeps,
  adminChannelRoutes,
  adminPeopleRoutes,
  adminRoutes,
  adminTopupRoutes,
  apiLinks,
  CONNECTIONS_CHECK_MS,
  callbackRoutes,
  clientErrorHandler,
  coalesceTurnWrites,
  DEFAULT_BODY_LIMIT,
  directLinkRoutes,
  docsRoutes,
  fileRoutes,
  frameworkErrorHandler,
  HEADERS_TIMEOUT_MS,
  healthRoutes,
  helperRoutes,
  installAdminAuth,
  installApiKeyAuth,
  installBodyGate,
  installBodyPace,
  installCors,
  installErrorHandler,
  installJsonParser,
  installLangQuery,
  installNotFound,
  installNulGuard,
  installRequestContext,
  libraryRoutes,
  metricsRoutes,
  modelRoutes,
  type NotFoundPage,
  type OpenApiDocument,
  operatorDocsRoutes,
  originFormOf,
  PATH_PARAM_MAX,
  paymentNotificationRoutes,
  publicDocument,
  RequestLimiter,
  requestIdOf,
  requestLimitsOf,
  swaggerOptions,
  taskEventRoutes,
  taskRoutes,
  topupRoutes,
  validatorCompiler,
  webhookRoutes,
} from './http/index.ts';
import { EntriesReader, WalletReader } from './ledger/index.ts';
import { installRequestTelemetry, lazyChildLogger } from './observability/index.ts';
import { AttemptLimiter, DEFAULT_LOGIN_LIMITS, ExpiringMarks } from './people/index.ts';
import { consolePort, webRoutes } from './web/index.ts';

/**
 * The policy of the Swagger UI pages at `/docs`: the plugin's own (`staticCSP: true`) refused the inline
 * styles Swagger UI applies (a console error on every load) and asked browsers to upgrade every load to
 * https, which breaks the page of a service served over plain http on a host name. Everything is served
 * from this origin; only styles may be inline (Swagger UI sets them from its scripts), never scripts.
 */
const DOCS_CSP =
  "default-src 'self'; base-uri 'self'; font-src 'self' data:; frame-ancestors 'self'; img-src 'self' data:; " +
  "object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' 'unsafe-inline'";

/** Builds the HTTP app without listening; `main.ts` listens, tests inject. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const links = apiLinks(deps.config.publicBaseUrl);
  // The dashboard's 404 page answers browsers' page loads once the dashboard is registered (below).
  const pageNotFound: { page: NotFoundPage | null } = { page: null };
  const app = Fastify({
    // The process's logger (redaction, secret scrub), shared with the worker (CONTRACT §15).
    loggerInstance: deps.log,
    bodyLimit: DEFAULT_BODY_LIMIT,
    genReqId: requestIdOf,
    // An absolute-form target (`GET http://host/v1/models`) is served as its path and query.
    rewriteUrl: originFormOf,
    routerOptions: { maxParamLength: PATH_PARAM_MAX },
    // A request on an open connection while the app closes is refused by the request context instead, in
    // the error table's shape (http/plugins/request-context.ts).
    return503OnClosing: false,
    // Only the proxies TRUST_PROXY names may say who the client is (X-Forwarded-For).
    trustProxy: deps.config.trustProxy.length > 0 ? [...deps.config.trustProxy] : false,
    // Node's cap on receiving a whole request; slow bodies are cut much sooner by the body pace.
    requestTimeout: deps.config.requestTimeoutMs,
    // Node checks those two timeouts on this period (30 s by default, which would triple the headers' 10 s).
    // Node's own answer to an HTTP/1.1 request without Host is a bare 400 with no body and no request id:
    // the request context refuses it instead, through the error table (http/plugins/request-context.ts).
    http: { connectionsCheckingInterval: CONNECTIONS_CHECK_MS, requireHostHeader: false },
    // Every refusal, including the router's and Node's own, goes through the error table.
    frameworkErrors: frameworkErrorHandler(links, deps.metrics, pageNotFound),
    clientErrorHandler: clientErrorHandler(deps.log, deps.metrics),
    // Fastify's two lines per request are replaced by one line when the answer ends (observability/).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    // A request's logger is made when it first logs (observability/lazy-logger.ts).
    childLoggerFactory: lazyChildLogger,
  });
  // Headers trickled a line at a time (slowloris) hold a connection for Node's default minute otherwise.
  app.server.headersTimeout = Math.min(HEADERS_TIMEOUT_MS, deps.config.requestTimeoutMs);
  // The answers of one turn of the event loop go out together at its end (http/turn-writes.ts).
  coalesceTurnWrites(app.server);
  // Node answers an Expect other than 100-continue with a bare 417 (no error object, no request id); such
  // an expectation is ignored instead (RFC 9110 §10.1.1 allows it) and the request is served as any other.
  app.server.on('checkExpectation', (req, res) => app.server.emit('request', req, res));
  // Node hands a CONNECT (a proxy's tunnel request) over as a bare socket and, with no listener, closes it
  // unanswered; it is served as any other request instead, so it gets the error table's answer.
  app.server.on('connect', (req: http.IncomingMessage, socket: Duplex) => {
    // Node took its own listeners off the socket: an error of a client that resets it must not go uncaught.
    socket.on('error', () => socket.destroy());
    const res = new http.ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Socket);
    res.once('finish', () => socket.end());
    app.server.emit('request', req, res);
  });
  app.setValidatorCompiler(validatorCompiler);
  // Response schemas document the API; replies are plain JSON.stringify (no per-reply validation cost).
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  installRequestContext(app);
  installRequestTelemetry(app, deps.metrics);
  installJsonParser(app);
  installBodyGate(app);
  installBodyPace(app, deps.config.bodyTimeoutMs);
  installErrorHandler(app, links);
  installNulGuard(app);
  installNotFound(app, links, pageNotFound, (key) => deps.services.models.find(key) !== undefined);
  await installCors(app);
  // Open event streams and waiting calls end before the server waits for its connections to close.
  app.addHook('preClose', () => deps.services.watch.close());

  const models = deps.services.models;
  await app.register(
    swagger,
    swaggerOptions(deps.config.publicBaseUrl, {
      schemas: models.settingsSchemas(),
      modeField: (model) => models.find(model)?.modeField ?? null,
    }),
  );
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: DOCS_CSP,
    transformSpecification: (whole) => publicDocument(whole as OpenApiDocument),
  });

  await app.register(async (open) => {
    await healthRoutes(open, deps);
    await docsRoutes(open, deps.config.publicBaseUrl);
    await directLinkRoutes(open, deps);
    await callbackRoutes(open, deps, links);
    await paymentNotificationRoutes(open, deps);
  });

  const limiter = new RequestLimiter(deps.limits ?? requestLimitsOf(deps.config.rateLimits), deps.db.pgPool);
  const metricsToken = deps.config.metricsToken;
  if (metricsToken !== null) await metricsRoutes(app, { metrics: deps.metrics, metricsToken, limiter });
  await app.register(async (authenticated) => {
    installApiKeyAuth(authenticated, deps, limiter);
    installLangQuery(authenticated);
    await modelRoutes(authenticated, deps);
    await taskRoutes(authenticated, deps);
    await taskEventRoutes(authenticated, deps);
    await libraryRoutes(authenticated, deps);
    await helperRoutes(authenticated, deps);
    await webhookRoutes(authenticated, deps);
    await topupRoutes(authenticated, deps);
    // The upload gets a context of its own inside: its stream parser must not leak to other routes.
    await fileRoutes(authenticated, deps);
  });

  const adminToken = deps.config.adminToken;
  if (adminToken !== null) {
    await app.register(async (operator) => {
      installAdminAuth(operator, adminToken, limiter);
      installLangQuery(operator);
      await adminRoutes(operator, deps);
      await adminChannelRoutes(operator, deps);
      await adminPeopleRoutes(operator, deps);
      await adminTopupRoutes(operator, deps);
      await operatorDocsRoutes(operator);
    });
  }
  const entries = new EntriesReader({ db: deps.db });
  // The dashboard: its own context with cookies, forms and security headers (src/web/).
  pageNotFound.page = await webRoutes(app, {
    people: deps.people ?? deps.services.people,
    wallet: new WalletReader({ db: deps.db, clock: deps.clock }),
    models: deps.services.models,
    catalog: deps.services.models,
    tasks: deps.services.tasks,
    ledger: entries,
    console:
      adminToken === null
        ? null
        : {
            token: adminToken,
            port: consolePort({ ...deps.services, ledger: entries }),
            attempts: new AttemptLimiter('console-address', DEFAULT_LOGIN_LIMITS, deps.db.pgPool),
            signedOut: new ExpiringMarks('console-signed-out', deps.db.db),
          },
    publicBaseUrl: deps.config.publicBaseUrl,
    topups: deps.services.topups,
    libraries: deps.services.libraries,
    uploads: deps.services.uploads,
  });
  return app;
}
