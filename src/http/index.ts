export { installBodyGate } from './body-gate.ts';
export { CONNECTIONS_CHECK_MS, HEADERS_TIMEOUT_MS, installBodyPace } from './body-pace.ts';
export { installCors } from './cors.ts';
export { installErrorHandler, installNulGuard } from './error-handler.ts';
export { clientErrorHandler, frameworkErrorHandler } from './framework-errors.ts';
export { installJsonParser } from './json-body.ts';
export { DEFAULT_BODY_LIMIT, PATH_PARAM_MAX } from './limits.ts';
export { apiLinks, installNotFound, type NotFoundPage } from './not-found.ts';
export {
  finishDocument,
  type OpenApiDocument,
  type OpenApiOperation,
  operatorDocument,
  publicDocument,
  swaggerOptions,
} from './openapi.ts';
export { installAdminAuth } from './plugins/admin-auth.ts';
export { installApiKeyAuth } from './plugins/auth.ts';
export { RequestLimiter } from './plugins/rate-limit.ts';
export { installRequestContext, originFormOf, requestIdOf } from './plugins/request-context.ts';
export { adminRoutes } from './routes/admin.ts';
export { adminChannelRoutes } from './routes/admin-channels.ts';
export { adminPeopleRoutes } from './routes/admin-people.ts';
export { callbackRoutes } from './routes/callbacks.ts';
export { docsRoutes, operatorDocsRoutes } from './routes/docs.ts';
export { directLinkRoutes, fileRoutes } from './routes/files.ts';
export { healthRoutes } from './routes/health.ts';
export { helperRoutes } from './routes/helpers.ts';
export { libraryRoutes } from './routes/libraries.ts';
export { metricsRoutes } from './routes/metrics.ts';
export { modelRoutes } from './routes/models.ts';
export { taskEventRoutes } from './routes/task-events.ts';
export { taskRoutes } from './routes/tasks.ts';
export { adminTopupRoutes, paymentNotificationRoutes, topupRoutes } from './routes/topups.ts';
export { webhookRoutes } from './routes/webhooks.ts';
export { coalesceTurnWrites } from './turn-writes.ts';
export { type AppDeps, requestLimitsOf, type Services } from './types.ts';
export { installLangQuery, validatorCompiler } from './validator.ts';
