/**
 * Events into the durable delivery queue (CONTRACT §12), in the transaction of the change that causes
 * them: the change and its deliveries commit together or not at all, so an event is never lost nor sent
 * for a change that rolled back. Each receiver subscribed to the event type gets one delivery row whose
 * body is frozen now; retries send those bytes under the same `webhook-id` (the row's id).
 */
import { sql } from 'kysely';
import {
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

/**
 * Most items an event list of a request may have (a task's `webhook_events`, an endpoint's `events`).
 * Repeats count once for the subscription, so a list may hold more items than there are types; the cap
 * only bounds the work of reading one.
 */
export const MAX_EVENT_LIST_ITEMS = 50;

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
  /**
   * The endpoints' epoch as a statement of this transaction read it (`ENDPOINTS_EPOCH_COLUMN` in the
   * RETURNING of the change that causes the event), null when no endpoint was ever made: on PostgreSQL
   * the account's endpoints are then kept under it instead of read (text: PostgreSQL's bigint). Unset:
   * they are read.
   */
  endpointsEpoch?: number | string | null;
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

/**
 * The endpoints' epoch, as a column a statement of the event's transaction returns (`endpoints_epoch`):
 * the moves of a task add it to their `UPDATE … RETURNING` (transitions.ts), so that PostgreSQL learns it
 * without a round trip of its own (`EventInput.endpointsEpoch`).
 */
export const ENDPOINTS_EPOCH_COLUMN = sql<
  number | string | null
>`(select value from epochs where name = ${sql.lit(ENDPOINTS_EPOCH)})`.as('endpoints_epoch');

/**
 * Whether anyone may want the body of an event of the task row `tasks` (a statement's target): its own
 * webhook, or any endpoint of its account. A superset of who gets it (an endpoint may not subscribe to the
 * event, or be deleted), read in the same statement as `ENDPOINTS_EPOCH_COLUMN`, so with the same view.
 */
export const TASK_MAY_HAVE_RECEIVERS = sql<boolean>`(tasks.webhook_url is not null or exists (
  select 1 from webhook_endpoints where webhook_endpoints.account_id = tasks.account_id))`;

/** Accounts whose endpoints a handle keeps. */
const ENDPOINT_CACHE_SIZE = 10_000;

/** Per handle (its Kysely adapter): the accounts' live endpoints, kept while the endpoints' epoch stays. */
const endpointCaches = new WeakMap<object, KeptUntilEpoch<string, Endpoint[]>>();

/**
 * The account's live endpoints, as the transaction sees them. Every task event asks (two a task at the
 * least), and almost every account has none or the same few for months, so they are kept per handle until
 * an endpoint is created or deleted, in any process, which moves the endpoints' epoch in the same
 * transaction. They are kept under the epoch the event's own change read (`knownEpoch`) when it read one:
 * on PostgreSQL reading the counter apart would cost the round trip it saves, and on SQLite a synchronous
 * read per event cost more than the column in the change's RETURNING. An endpoint's change that commits
 * between that statement and this read can only be one made at the same moment as the event (on SQLite
 * none can: the event's transaction holds the only write lock, and an endpoint's change commits in a
 * transaction of its own, never shared with an event's). Without it SQLite reads the epoch straight on
 * the handle, which is the committed value for the same reason; PostgreSQL reads the endpoints.
 */
async function endpointsOfAccount(
  tx: Tx,
  accountId: string,
  knownEpoch: EventInput['endpointsEpoch'],
): Promise<readonly Endpoint[]> {
  const epoch =
    knownEpoch !== undefined ? Number(knownEpoch ?? 0) : (epochReaderOf(tx)?.(ENDPOINTS_EPOCH) ?? null);
  if (epoch === null) return parsed((await endpointsOf(tx, { accountId })).rows);
  const handle = tx.getExecutor().adapter;
  let cache = endpointCaches.get(handle);
  if (cache === undefined) {
    cache = new KeptUntilEpoch(ENDPOINT_CACHE_SIZE);
    endpointCaches.set(handle, cache);
  }
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
  for (const endpoint of await endpointsOfAccount(tx, event.accountId, event.endpointsEpoch)) {
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
