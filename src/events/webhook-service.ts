/**
 * Webhook endpoints of an account, its default secret, and the delivery log (CONTRACT §12). Endpoints are
 * account-level: any key of the account manages them (docs/decisions.md, "Webhooks (issue 13)").
 */
import type { Db } from '../db/index.ts';
import { bumpEpoch, notifyOnCommit } from '../db/index.ts';
import { errors } from '../errors.ts';
import type { Clock } from '../lib/index.ts';
import { uuidv7, wordSet } from '../lib/index.ts';
import type { CompleteClaim, IdempotencyStore } from '../tasks/index.ts';
import { ENDPOINTS_EPOCH, type EventType, isEventType, WEBHOOKS_CHANNEL } from './outbox.ts';
import { newSecret } from './signing.ts';
import { assertWebhookUrl, type WebhookUrlPolicy } from './webhook-url.ts';

/** Live endpoints one account may have; the next one is 409 too_many_webhooks. */
export const MAX_WEBHOOKS = 10;
/** How long the previous secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;
/** Why a pending delivery to a deleted endpoint is never sent. */
export const ENDPOINT_DELETED = 'endpoint deleted';

/** An endpoint as GET /v1/webhooks lists it: never its secret. */
export interface WebhookView {
  id: string;
  url: string;
  events: EventType[];
  description: string | null;
  created_at: string;
}

/** One delivery as the log shows it; the body is not shown (it may be large; the receiver has it). */
export interface DeliveryView {
  id: string;
  webhook_id: string | null;
  task_id: string | null;
  record_id: string | null;
  type: string;
  url: string;
  state: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  created_at: string;
}

export interface WebhookServiceDeps {
  db: Db;
  clock: Clock;
  /** Which addresses an endpoint may name (CONTRACT §6). */
  urls: WebhookUrlPolicy;
  /** Replays of a creation under an Idempotency-Key (as for tasks, CONTRACT §4). */
  idempotency: IdempotencyStore;
}

/** A creation's answer: 201 with the endpoint and its secret, or the replay of an earlier one. */
export interface CreatedWebhook {
  status: number;
  webhook: WebhookView & { secret: string };
  replayed: boolean;
}

type EndpointRow = {
  id: string;
  url: string;
  events: string;
  description: string | null;
  created_at: string;
};

const DELIVERY_COLUMNS = [
  'id',
  'webhook_id',
  'task_id',
  'record_id',
  'type',
  'url',
  'state',
  'attempts',
  'last_status_code',
  'last_error',
  'next_attempt_at',
  'created_at',
] as const;

export class WebhookService {
  readonly #deps: WebhookServiceDeps;

  constructor(deps: WebhookServiceDeps) {
    this.#deps = deps;
  }

  /** The account's default secret, made on first use; concurrent first uses agree (insert-or-ignore, read). */
  async defaultSecret(accountId: string): Promise<string> {
    const { db } = this.#deps.db;
    await db
      .insertInto('webhook_secrets')
      .values({ account_id: accountId, secret: newSecret(), created_at: this.#now() })
      .onConflict((oc) => oc.column('account_id').doNothing())
      .execute();
    const row = await db
      .selectFrom('webhook_secrets')
      .select('secret')
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return row.secret;
  }

  /**
   * POST /v1/webhooks: the 11th live endpoint is refused, also when several are created at once. Under an
   * Idempotency-Key the same request answers the endpoint it made, with its secret (the one signing now),
   * and `replayed`; another request under the key is 409 idempotency_conflict, as for tasks.
   */
  async create(
    accountId: string,
    input: { url: string; events: readonly string[]; description?: string | null | undefined },
    idempotencyKey: string | null = null,
  ): Promise<CreatedWebhook> {
    const unknown = input.events.filter((event) => !isEventType(event));
    if (input.events.length === 0 || unknown.length > 0)
      throw errors.invalidRequest({
        en: `events: ${unknown.length > 0 ? `unknown event type "${unknown[0]}"` : 'give at least one event type'}.`,
        ru: `events: ${unknown.length > 0 ? `неизвестный тип события «${unknown[0]}»` : 'укажите хотя бы один тип события'}.`,
      });
    return this.#deps.idempotency.run<CreatedWebhook>(
      {
        accountId,
        key: idempotencyKey,
        scope: 'POST /v1/webhooks',
        // The events are a set (an endpoint keeps each once): their order and repeats change nothing.
        body: { url: input.url, events: wordSet(input.events), description: input.description ?? null },
      },
      {
        // Deleted since, it is answered as it was, as a library record's replay is: the request made it.
        replay: async (id, status) => ({
          status,
          webhook: await this.#withSecret(accountId, id, { deletedToo: true }),
          replayed: true,
        }),
        // The address is checked for a new endpoint only: a replay answers the one the request made,
        // even when the name resolves elsewhere (or not at all) by now; a refusal frees the key.
        create: async (complete) => {
          await assertWebhookUrl(input.url, 'url', this.#deps.urls);
          return this.#insert(accountId, input, complete);
        },
      },
    );
  }

  async #insert(
    accountId: string,
    input: { url: string; events: readonly string[]; description?: string | null | undefined },
    complete: CompleteClaim | null,
  ): Promise<CreatedWebhook> {
    const { db, dialect } = this.#deps.db;
    const row = {
      id: `wh_${uuidv7().replaceAll('-', '')}`,
      account_id: accountId,
      // As the URL parser reads it: spaces around the address are no part of it.
      url: input.url.trim(),
      events: JSON.stringify([...new Set(input.events)]),
      description: input.description ?? null,
      secret: newSecret(),
      previous_secret: null,
      previous_secret_expires_at: null,
      created_at: this.#now(),
      deleted_at: null,
    };
    await dialect.transaction(db, async (tx) => {
      // The account's lock makes count-then-insert atomic across concurrent creations and processes.
      await dialect.lockAccount(tx, accountId);
      const { n } = await tx
        .selectFrom('webhook_endpoints')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .where('deleted_at', 'is', null)
        .executeTakeFirstOrThrow();
      if (Number(n) >= MAX_WEBHOOKS) throw errors.tooManyWebhooks(MAX_WEBHOOKS);
      await tx.insertInto('webhook_endpoints').values(row).execute();
      await bumpEpoch(tx, ENDPOINTS_EPOCH);
      await complete?.(tx, 201, row.id);
    });
    return { status: 201, webhook: { ...toView(row), secret: row.secret }, replayed: false };
  }

  /** GET /v1/webhooks/{id}: a live endpoint of the account, without its secret; 404 webhook_not_found. */
  async get(accountId: string, id: string): Promise<WebhookView> {
    const { secret: _secret, ...view } = await this.#withSecret(accountId, id);
    return view;
  }

  /**
   * A live endpoint of the account with the secret that signs now (`deletedToo`: or the one it had when
   * deleted); 404 webhook_not_found otherwise.
   */
  async #withSecret(
    accountId: string,
    id: string,
    { deletedToo = false } = {},
  ): Promise<WebhookView & { secret: string }> {
    const row = await this.#deps.db.db
      .selectFrom('webhook_endpoints')
      .select(['id', 'url', 'events', 'description', 'created_at', 'secret'])
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .$if(!deletedToo, (qb) => qb.where('deleted_at', 'is', null))
      .executeTakeFirst();
    if (!row) throw errors.webhookNotFound(id);
    return { ...toView(row), secret: row.secret };
  }

  /** GET /v1/webhooks: live endpoints, oldest first, without secrets. */
  async list(accountId: string): Promise<WebhookView[]> {
    const rows = await this.#deps.db.db
      .selectFrom('webhook_endpoints')
      .select(['id', 'url', 'events', 'description', 'created_at'])
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .execute();
    return rows.map(toView);
  }

  /**
   * DELETE /v1/webhooks/{id}: the endpoint gets no more events, and its pending deliveries are marked
   * failed ("endpoint deleted") rather than sent to a receiver its owner took away.
   */
  async remove(accountId: string, id: string): Promise<void> {
    const { db, dialect } = this.#deps.db;
    const now = this.#now();
    await dialect.transaction(db, async (tx) => {
      const result = await tx
        .updateTable('webhook_endpoints')
        .set({ deleted_at: now })
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) throw errors.webhookNotFound(id);
      await bumpEpoch(tx, ENDPOINTS_EPOCH);
      await tx
        .updateTable('webhook_deliveries')
        .set({ state: 'failed', last_error: ENDPOINT_DELETED, next_attempt_at: null, updated_at: now })
        .where('webhook_id', '=', id)
        .where('state', '=', 'pending')
        .execute();
    });
  }

  /**
   * POST /v1/webhooks/{id}/rotate-secret: a new secret signs from now on; the one it replaces signs too
   * for 24 hours. A second rotation within them drops the oldest secret at once.
   */
  async rotate(accountId: string, id: string): Promise<{ secret: string }> {
    const { db, dialect } = this.#deps.db;
    const secret = newSecret();
    const expires = new Date(this.#deps.clock.now().getTime() + ROTATION_OVERLAP_MS).toISOString();
    await dialect.transaction(db, async (tx) => {
      // Two rotations at once take turns, so the secret answered is the one stored.
      await dialect.lockAccount(tx, accountId);
      const row = await tx
        .selectFrom('webhook_endpoints')
        .select(['secret'])
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (!row) throw errors.webhookNotFound(id);
      await tx
        .updateTable('webhook_endpoints')
        .set({ secret, previous_secret: row.secret, previous_secret_expires_at: expires })
        .where('id', '=', id)
        .execute();
    });
    return { secret };
  }

  /** GET /v1/webhook-deliveries: the account's deliveries, newest first, keyset pages on the time-ordered id. */
  async deliveries(
    accountId: string,
    query: {
      task_id?: string | undefined;
      webhook_id?: string | undefined;
      cursor?: string | undefined;
      limit: number;
    },
  ): Promise<{ deliveries: DeliveryView[]; next_cursor: string | null }> {
    let q = this.#deps.db.db
      .selectFrom('webhook_deliveries')
      .select(DELIVERY_COLUMNS)
      .where('account_id', '=', accountId);
    if (query.task_id !== undefined) q = q.where('task_id', '=', query.task_id);
    if (query.webhook_id !== undefined) q = q.where('webhook_id', '=', query.webhook_id);
    if (query.cursor !== undefined) q = q.where('id', '<', decodeCursor(query.cursor));
    const rows = await q
      .orderBy('id', 'desc')
      .limit(query.limit + 1)
      .execute();
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      deliveries: page,
      next_cursor: rows.length > query.limit && last ? Buffer.from(last.id).toString('base64url') : null,
    };
  }

  /**
   * POST /v1/webhook-deliveries/{id}/retry: the same id and body go out again now. A finished delivery
   * becomes pending for one more attempt; if that fails, the schedule goes on where it stopped (used up:
   * failed again). A pending one is only moved to now. A delivery of a deleted endpoint: 404 webhook_not_found.
   */
  async retry(accountId: string, id: string): Promise<DeliveryView> {
    const { db, dialect } = this.#deps.db;
    const now = this.#now();
    return dialect.transaction(db, async (tx) => {
      // Locked (PostgreSQL; SQLite's writer lock is held already): an attempt's outcome written meanwhile
      // would otherwise be read stale, and a delivery its last attempt failed left `failed` for good.
      const row = await tx
        .selectFrom('webhook_deliveries')
        .select(DELIVERY_COLUMNS)
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .$if(dialect.supportsSkipLocked, (qb) => qb.forUpdate())
        .executeTakeFirst();
      if (!row) throw errors.deliveryNotFound(id);
      if (row.webhook_id !== null) {
        const endpoint = await tx
          .selectFrom('webhook_endpoints')
          .select('id')
          .where('id', '=', row.webhook_id)
          .where('deleted_at', 'is', null)
          .executeTakeFirst();
        if (!endpoint) throw errors.webhookNotFound(row.webhook_id);
      }
      const update =
        row.state === 'pending'
          ? { next_attempt_at: now, updated_at: now }
          : {
              state: 'pending' as const,
              next_attempt_at: now,
              lease_owner: null,
              lease_until: null,
              updated_at: now,
            };
      await tx.updateTable('webhook_deliveries').set(update).where('id', '=', id).execute();
      await notifyOnCommit(tx, WEBHOOKS_CHANNEL);
      return { ...row, state: 'pending' as const, next_attempt_at: now };
    });
  }

  #now(): string {
    return this.#deps.clock.now().toISOString();
  }
}

function toView(row: EndpointRow): WebhookView {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as EventType[],
    description: row.description,
    created_at: row.created_at,
  };
}

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^msg_[0-9a-f]{32}$/.test(id))
    throw errors.invalidRequest({
      en: 'cursor is not one this API gave out',
      ru: 'cursor не выдан этим API',
    });
  return id;
}
