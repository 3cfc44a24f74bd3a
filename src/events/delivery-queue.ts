/**
 * The delivery queue's claims and outcomes (`webhook_deliveries`, CONTRACT §12). A sender leases due
 * deliveries (`lease_owner`, `lease_until`); one whose process died mid-send is taken again once its lease
 * runs out, so every event is sent at least once. Outcomes are written only by the lease's holder.
 */
import { sql } from 'kysely';
import type { Db } from '../db/index.ts';

/** A claimed delivery: what one attempt needs. */
export interface ClaimedDelivery {
  id: string;
  accountId: string;
  webhookId: string | null;
  url: string;
  body: string;
  attempts: number;
  /** Deliveries of one task (or record) to one URL share it; they go out one at a time, oldest first. */
  orderKey: string;
  /** Its `next_attempt_at` when claimed: a later one was set by a manual retry during the attempt. */
  dueAt: string;
}

export interface ClaimInput {
  owner: string;
  limit: number;
  now: Date;
  leaseMs: number;
  /** Order keys with a delivery in flight in this process: their later deliveries wait for it. */
  busyKeys: ReadonlySet<string>;
  /**
   * Receivers' hosts (`receiverOf`) with deliveries in flight in this process, and how many, and the most
   * one host may have: a host past it waits, so a dead or slow one never takes every slot. (Default: none)
   */
  hostShare?: { busy: ReadonlyMap<string, number>; max: number };
}

/** The receiver a delivery's slots are shared by: its URL's host and port (`http://r:81/a` → `r:81`). */
export function receiverOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** Looks of one claim past rows it cannot take; bounds a claim's work and the size of its exclusions. */
const MAX_LOOKS = 8;

/** A delivery's order key (`ClaimedDelivery.orderKey`): its task, else its record, else itself, and its URL. */
const ORDER_KEY = sql<string>`coalesce(task_id, record_id, id) || '|' || url`;

/**
 * Leases up to `limit` due deliveries, oldest due first, at most one per order key, and none of a key
 * with a delivery in flight (here: `busyKeys`; at any sender: an unexpired lease), so a later event of a
 * task never overtakes an earlier one to the same receiver. Claims take turns across processes (an
 * advisory lock on PostgreSQL, the single writer lock on SQLite), so each sees the leases of the one before.
 */
export async function claimDeliveries(db: Db, input: ClaimInput): Promise<ClaimedDelivery[]> {
  if (input.limit <= 0) return [];
  const now = input.now.toISOString();
  const leaseUntil = new Date(input.now.getTime() + input.leaseMs).toISOString();
  return db.dialect.transaction(db.db, async (tx) => {
    await db.dialect.lockStep(tx, 'webhook-claims');
    // In flight somewhere: leased, not expired. Such rows were due when claimed, so the range is the due one.
    const leased = await tx
      .selectFrom('webhook_deliveries')
      .select(ORDER_KEY.as('key'))
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where('lease_until', '>=', now)
      .execute();
    const busy = new Set([...input.busyKeys, ...leased.map((row) => row.key)]);
    const chosen: ClaimedDelivery[] = [];
    const hosts = new Map(input.hostShare?.busy ?? []);
    // Hosts that have their share: left out of every look, like busy keys, so that a full host's backlog
    // (many tasks' events to a dead receiver, older than everything else, each task's to a URL of its own)
    // does not fill every look and starve the other hosts. Rows written before deliveries kept their
    // receiver are left out by their URL instead.
    const fullHosts = new Set<string>();
    const fullUrls = new Set<string>();
    for (const [host, used] of hosts) if (input.hostShare && used >= input.hostShare.max) fullHosts.add(host);
    // Room for deliveries left out because an earlier one of their key goes first.
    const batch = input.limit * 4;
    for (let look = 0; look < MAX_LOOKS && chosen.length < input.limit; look++) {
      let due = tx
        .selectFrom('webhook_deliveries')
        .select(['id', 'account_id', 'webhook_id', 'url', 'body', 'attempts', 'next_attempt_at'])
        .select(ORDER_KEY.as('order_key'))
        .where('state', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]));
      // Busy keys are left out by the query itself: a dead receiver's backlog of one task, older than
      // everything else, would otherwise fill every batch and starve the other receivers.
      if (busy.size > 0) due = due.where(ORDER_KEY, 'not in', [...busy]);
      if (fullHosts.size > 0)
        due = due.where((eb) =>
          eb.or([eb('receiver', 'is', null), eb('receiver', 'not in', [...fullHosts])]),
        );
      if (fullUrls.size > 0) due = due.where('url', 'not in', [...fullUrls]);
      due = due.orderBy('next_attempt_at').orderBy('id').limit(batch);
      if (db.dialect.supportsSkipLocked) due = due.forUpdate().skipLocked();
      const rows = await due.execute();
      for (const row of rows) {
        if (chosen.length >= input.limit) break;
        const orderKey = row.order_key;
        if (busy.has(orderKey)) continue;
        if (input.hostShare) {
          const host = receiverOf(row.url);
          const used = hosts.get(host) ?? 0;
          if (used >= input.hostShare.max) {
            fullHosts.add(host);
            fullUrls.add(row.url);
            continue;
          }
          hosts.set(host, used + 1);
          if (used + 1 >= input.hostShare.max) fullHosts.add(host);
        }
        busy.add(orderKey);
        chosen.push({
          id: row.id,
          accountId: row.account_id,
          webhookId: row.webhook_id,
          url: row.url,
          body: row.body,
          attempts: row.attempts,
          orderKey,
          dueAt: row.next_attempt_at ?? now,
        });
      }
      // Every row seen is now chosen, or left out of the next look by its key or its URL.
      if (rows.length < batch) break;
    }
    if (chosen.length === 0) return [];
    await tx
      .updateTable('webhook_deliveries')
      .set({ lease_owner: input.owner, lease_until: leaseUntil })
      .where(
        'id',
        'in',
        chosen.map((c) => c.id),
      )
      .execute();
    return chosen;
  });
}

/** When the sender should look again: the next future due time or lease expiry, or null with none. */
export async function nextDueAt(db: Db, now: Date): Promise<Date | null> {
  const at = now.toISOString();
  const [due, lease] = await Promise.all([
    db.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.min('next_attempt_at').as('t'))
      .where('state', '=', 'pending')
      .where('next_attempt_at', '>', at)
      .executeTakeFirst(),
    db.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.min('lease_until').as('t'))
      .where('state', '=', 'pending')
      .where('lease_until', '>', at)
      .executeTakeFirst(),
  ]);
  const times = [due?.t, lease?.t].filter((t): t is string => typeof t === 'string');
  return times.length === 0 ? null : new Date(times.sort()[0] as string);
}

export type Outcome =
  | { kind: 'succeeded'; status: number }
  | { kind: 'failed'; status: number | null; error: string; retryAt: Date | null }
  /** Not attempted (shutdown): the lease is given back and nothing is counted. */
  | { kind: 'released' }
  /** Never to be sent (its endpoint was deleted). */
  | { kind: 'dropped'; error: string };

/**
 * Records an attempt's outcome, if this sender still holds the lease. A failed attempt during which a
 * manual retry moved the delivery to a later time than it was claimed at (`dueAt`) keeps that time and
 * stays pending: the retry asked for an attempt after this one, which its schedule must not put off (by
 * up to 10 hours) or end (the schedule used up).
 */
export async function recordOutcome(
  db: Db,
  input: { id: string; owner: string; attempts: number; dueAt: string; now: Date; outcome: Outcome },
): Promise<void> {
  const { outcome } = input;
  const updatedAt = input.now.toISOString();
  const base = { lease_owner: null, lease_until: null, updated_at: updatedAt };
  const retryAsked = sql<boolean>`next_attempt_at > ${input.dueAt}`;
  const set =
    outcome.kind === 'succeeded'
      ? {
          ...base,
          state: 'succeeded' as const,
          attempts: input.attempts + 1,
          last_status_code: outcome.status,
          last_error: null,
          next_attempt_at: null,
        }
      : outcome.kind === 'failed'
        ? {
            ...base,
            state: sql<
              'pending' | 'failed'
            >`case when ${retryAsked} then 'pending' else ${outcome.retryAt === null ? 'failed' : 'pending'} end`,
            attempts: input.attempts + 1,
            last_status_code: outcome.status,
            last_error: outcome.error,
            next_attempt_at: sql<
              string | null
            >`case when ${retryAsked} then next_attempt_at else ${outcome.retryAt?.toISOString() ?? null} end`,
          }
        : outcome.kind === 'dropped'
          ? { ...base, state: 'failed' as const, last_error: outcome.error, next_attempt_at: null }
          : base;
  const recorded = await db.db
    .updateTable('webhook_deliveries')
    .set(set)
    .where('id', '=', input.id)
    .where('lease_owner', '=', input.owner)
    // Ended while in flight (its endpoint deleted): the attempt's outcome does not bring it back.
    .where('state', '=', 'pending')
    .executeTakeFirst();
  if (Number(recorded.numUpdatedRows) > 0 || (outcome.kind !== 'succeeded' && outcome.kind !== 'failed'))
    return;
  // But the receiver got the request all the same: the log counts the attempt and its status. Only the
  // deletion ends a delivery and leaves its lease, so this lease's holder finds it failed.
  await db.db
    .updateTable('webhook_deliveries')
    .set({ ...base, attempts: input.attempts + 1, last_status_code: outcome.status })
    .where('id', '=', input.id)
    .where('lease_owner', '=', input.owner)
    .where('state', '=', 'failed')
    .execute();
}
