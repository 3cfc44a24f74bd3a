export { lazyChildLogger } from './lazy-logger.ts';
export {
  createLogger,
  type LoggerOptions,
  REDACTED,
  safeUrl,
  scrubSecrets,
  secretsOfUrl,
} from './logger.ts';
export { DEFAULT_CHANNEL, Metrics, type MetricsOptions, UNMATCHED_ROUTE } from './metrics.ts';
export { type MetricsServerOptions, startMetricsServer } from './metrics-server.ts';
export { installRequestTelemetry, observeRefusedRequest } from './request-log.ts';
export { currentRequestId } from './request-scope.ts';
export { type ChannelState, registerStateGauges, STATE_CACHE_MS, type StateSources } from './state-gauges.ts';
export { TaskTelemetry, type Transition, type TransitionStatus } from './task-telemetry.ts';
