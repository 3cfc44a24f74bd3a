/**
 * Client of the Generation Task API: `import { Client } from '@generation-task-api/sdk'`. Runs on Node ≥ 20
 * and in browsers (only `fetch`, streams, `TextDecoder` and `crypto` random values are used).
 */
export {
  Client,
  type LibraryClient,
  type LibraryKey,
  type LibraryOf,
  type Model,
  type UploadOptions,
} from './client.ts';
export * from './errors.ts';
export { parseEventStream, type SseEvent } from './sse.ts';
export {
  type CreateOptions,
  isFinal,
  type ListQuery,
  type ModelKey,
  type SettingsOf,
  type TaskEventType,
  type TaskParams,
  Tasks,
  type WaitOptions,
} from './tasks.ts';
export { type ClientOptions, DEFAULT_BASE_URL, type FetchLike } from './transport.ts';
export type * from './types.gen.ts';
export {
  type HeadersLike,
  verify,
  type WebhookEndpoint,
  type WebhookEvent,
  type WebhookEventType,
  WebhookVerificationError,
  webhooks,
} from './webhooks.ts';
