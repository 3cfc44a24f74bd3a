export {
  DEFAULT_TASK_WEBHOOK_EVENTS,
  ENDPOINTS_EPOCH_COLUMN,
  EVENT_TYPES,
  type EventInput,
  type EventType,
  emitEvent,
  isEventType,
  LIBRARY_EVENT_TYPES,
  type LibraryEventType,
  MAX_EVENT_LIST_ITEMS,
  TASK_EVENT_TYPES,
  TASK_MAY_HAVE_RECEIVERS,
  type TaskEventType,
  WEBHOOKS_CHANNEL,
} from './outbox.ts';
export { WebhookSender, type WebhookSenderDeps, type WebhookSenderOptions } from './sender.ts';
export { newSecret, type SignedHeaders, signDelivery } from './signing.ts';
export {
  type DeliveryView,
  ENDPOINT_DELETED,
  MAX_WEBHOOKS,
  ROTATION_OVERLAP_MS,
  WebhookService,
  type WebhookServiceDeps,
  type WebhookView,
} from './webhook-service.ts';
export { assertWebhookUrl, WEBHOOK_URL_MAX_LENGTH, type WebhookUrlPolicy } from './webhook-url.ts';
