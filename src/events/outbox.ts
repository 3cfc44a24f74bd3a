/**
 * Events into the durable delivery queue (CONTRACT §12), in the transaction of the change that causes
 * them: the change and its deliveries commit together or not at all, so an event is never lost nor sent
 * for a change that rolled back. Each receiver subscribed to the event type gets one delivery row whose
 * body is frozen now; retries send those bytes under the same `webhook-id` (the row's id).
 */
import {
  type EpochReader,
  epochReaderOf,
  KeptUntilEpoch,
  notifyOnCommit,
  prepared,
  type Tx,
  type WebhookEndpointsTable,
} from '../db/index.ts';
import { uuidv7 } from '../lib/index.ts';
import { receiverOf } from './delivery-queue.ts';

export const TASK_EVENT_TYPES = [
  'task.started',
  'task.progress',
  'task.succeeded',
  'task.failed',
  'task.canceled',
] as const;
export const LIBRARY_EVENT_TYPES = ['library.ready', 'library.failed'] as const;
export const EVENT_TYPES = [...TASK_EVENT_TYPES, ...LIBRARY_EVENT_TYPES] as const;

export type TaskEventType = (typeof TASK_EVENT_TYPES)[number];
export type LibraryEventType = (typeof LIBRARY_EVENT_TYPES)[number];
export type EventType = (typeof EVENT_TYPES)[number];

/** Events a task's own `webhook_url` gets when `webhook_events` is not given. */
export const DEFAULT_TASK_WEBHOOK_EVENTS: readonly TaskEventType[] = [
  'task.succeeded',
  'task.failed',
  'task.canceled',
];

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

/** Notification channel of new deliveries, so senders in every process start at once. */
export const WEBHOOKS_CHANNEL = 'gta_webhooks_queued';

export interface EventInput {
  accountId: string;
  type: EventType;
  /** The task of a `task.*` event. */
  taskId?: string;
  /** The library record of a `library.*` event. */
  recordId?: string;
  /** A task's own webhook, with the event types it asked for. */
  own?: { url: string; events: readonly string[] } | null;
  at: Date;
  /** The object as GET answers it now; asked for only when some receiver wants the event. */
  data: () => Promise<unknown>;
}

const endpointsOf = prepared<{ accountId: string }, Pick<WebhookEndpointsTable, 'id' | 'url' | 'events'>>(
  (db, value) =>
    db
      .selectFrom('webhook_endpoints')
      .select(['id', 'url', 'events'])
      .where('account_id', '=', value('accountId'))
      .where('deleted_at', 'is', null)
      .orderBy('id'),
);

/** The `epochs` counter that every creation and deletion of a webhook endpoint moves (webhook-service.ts). */
export const ENDPOINTS_EPOCH = 'webhook_endpoints';

interface Endpoint {
  id: string;
  url: string;
  events: readonly string[];
}

/** Accounts whose endpoints a SQLite handle keeps. */
const ENDPOINT_CACHE_SIZE = 10_000;

/** Per SQLite handle: the accounts' live endpoints, kept while the endpoints' epoch stays. */
const endpointCaches = new WeakMap<EpochReader, KeptUntilEpoch<string, Endpoint[]>>();

/**
 * The account's live endpoints, as the transaction sees them. Every task event asks (two a task at the
 * least), and almost every account has none or the same few for months, so on SQLite they are kept per
 * handle until an endpoint is created or deleted, in any process: the endpoints' epoch, read straight on
 * the handle inside this transaction, which holds SQLite's only write lock, so it is the committed value
 * (an endpoint's change commits in a transaction of its own, never shared with an event's). PostgreSQL
 * reads them every time: a counter read there would cost the round trip it saves.
 */
async function endpointsOfAccount(tx: Tx, accountId: string): Promise<readonly Endpoint[]> {
  const read = epochReaderOf(tx);
  if (read === null) return parsed((await endpointsOf(tx, { accountId })).rows);
  let cache = endpointCaches.get(read);
  if (cache === undefined) {
    cache = new KeptUntilEpoch(ENDPOINT_CACHE_SIZE);
    endpointCaches.set(read, cache);
  }
  const epoch = read(ENDPOINTS_EPOCH);
  const kept = cache.get(epoch, accountId);
  if (kept !== undefined) return kept;
  const endpoints = parsed((await endpointsOf(tx, { accountId })).rows);
  cache.set(epoch, accountId, endpoints);
  return endpoints;
}

function parsed(rows: ReadonlyArray<Pick<WebhookEndpointsTable, 'id' | 'url' | 'events'>>): Endpoint[] {
  return rows.map((row) => ({ id: row.id, url: row.url, events: JSON.parse(row.events) as string[] }));
}

/** Queues the event for every receiver subscribed to its type. Returns how many deliveries were queued. */
export async function emitEvent(tx: Tx, event: EventInput): Promise<number> {
  const targets: Array<{ webhookId: string | null; url: string }> = [];
  if (event.own?.events.includes(event.type)) targets.push({ webhookId: null, url: event.own.url });
  for (const endpoint of await endpointsOfAccount(tx, event.accountId)) {
    if (endpoint.events.includes(event.type)) targets.push({ webhookId: endpoint.id, url: endpoint.url });
  }
  if (targets.length === 0) return 0;
  const at = event.at.toISOString();
  const body = JSON.stringify({ type: event.type, timestamp: at, data: await event.data() });
  await tx
    .insertInto('webhook_deliveries')
    .values(
      targets.map((target) => ({
        id: `msg_${uuidv7(event.at.getTime()).replaceAll('-', '')}`,
        account_id: event.accountId,
        webhook_id: target.webhookId,
        task_id: event.taskId ?? null,
        record_id: event.recordId ?? null,
        type: event.type,
        url: target.url,
        receiver: receiverOf(target.url),
        body,
        state: 'pending' as const,
        attempts: 0,
        last_status_code: null,
        last_error: null,
        next_attempt_at: at,
        lease_owner: null,
        lease_until: null,
        created_at: at,
        updated_at: at,
      })),
    )
    .execute();
  await notifyOnCommit(tx, WEBHOOKS_CHANNEL);
  return targets.length;
}
