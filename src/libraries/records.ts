/**
 * Library records in the database: reading with the pending step applied lazily (state advances on
 * read with the injected clock, persisted by the first reader; no timers), writing, soft deletion, and
 * the record's public view.
 */
import type { Selectable } from 'kysely';
import type { Db, LibraryRecordsTable, Tx } from '../db/index.ts';
import { scrubSecrets } from '../observability/index.ts';
import { SETTLE_ASK_MS } from './polled-steps.ts';
import { recordChanged } from './record-events.ts';
import type { LibraryDecl, PrivateData, StoredRecord } from './types.ts';

type Row = Selectable<LibraryRecordsTable>;

export function fromRow(row: Row): StoredRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    model: row.model,
    library: row.library,
    name: row.name,
    status: row.status,
    data: JSON.parse(row.data) as Record<string, unknown>,
    private: JSON.parse(row.private) as PrivateData,
    uniqueKey: row.unique_key,
    error: row.error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    readyAt: row.ready_at,
    deletedAt: row.deleted_at,
  };
}

/** The record's own columns (the provider deletion owed after it is deleted is the sweeper's). */
export function toRow(r: StoredRecord): Omit<Row, 'upstream_delete_at'> {
  return {
    id: r.id,
    account_id: r.accountId,
    model: r.model,
    library: r.library,
    name: r.name,
    status: r.status,
    data: JSON.stringify(r.data),
    private: JSON.stringify(r.private),
    unique_key: r.uniqueKey,
    error: r.error,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    ready_at: r.readyAt,
    deleted_at: r.deletedAt,
  };
}

/**
 * The record as it is at `now`: its pending step applied once `ready_at` has passed. Pure. A step the
 * generator ends (`private.poll`) stays pending here: `StepAsker` settles it.
 */
export function settled(r: StoredRecord, now: Date): StoredRecord {
  const next = r.private.next;
  if (!next || r.private.poll || r.readyAt === null || r.readyAt > now.toISOString()) return r;
  const { next: _done, ...rest } = r.private;
  return {
    ...r,
    status: next.status,
    name: next.name ?? r.name,
    data: { ...r.data, ...next.data },
    error: next.error ?? null,
    readyAt: null,
    private: rest,
    updatedAt: r.readyAt,
  };
}

/** Live records of the account by id (any library), with pending steps applied (not persisted). */
export async function liveRecords(
  db: Db['db'] | Tx,
  accountId: string,
  ids: readonly string[],
  now: Date,
): Promise<StoredRecord[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('library_records')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', 'in', [...ids])
    .where('deleted_at', 'is', null)
    .execute();
  return rows.map((row) => settled(fromRow(row), now));
}

/**
 * Writes a record's change of state; only a writer that still sees the old status succeeds (a lazily
 * applied step is stored once, a verify or retry races safely). A record that became ready or failed
 * queues its `library.*` webhooks in the same transaction (record-events.ts). Returns whether it wrote.
 */
export async function transition(db: Db, before: StoredRecord, after: StoredRecord): Promise<boolean> {
  if (before === after) return false;
  return db.dialect.transaction(db.db, async (tx) => {
    if (!(await writeTransition(tx, before, after))) return false;
    await recordChanged(tx, before.status, after, new Date(after.updatedAt));
    return true;
  });
}

async function writeTransition(tx: Tx, before: StoredRecord, after: StoredRecord): Promise<boolean> {
  const row = toRow(after);
  const result = await tx
    .updateTable('library_records')
    .set({
      status: row.status,
      name: row.name,
      data: row.data,
      private: row.private,
      error: row.error,
      ready_at: row.ready_at,
      updated_at: row.updated_at,
    })
    .where('id', '=', before.id)
    .where('status', '=', before.status)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Settles a due step the generator ends (polled-steps.ts); answers the record unchanged otherwise, also
 * when `signal` ends the question first.
 */
export type StepAsker = (r: StoredRecord, now: Date, signal?: AbortSignal) => Promise<StoredRecord>;

/** Due steps of one list asked at once. */
const LIST_ASKS_AT_ONCE = 4;

export interface RecordQuery {
  accountId: string;
  model: string;
  library: string;
}

/** One live record of the caller's library, settled and persisted; undefined when unknown. */
export async function findRecord(
  db: Db,
  q: RecordQuery,
  id: string,
  now: Date,
  ask?: StepAsker,
): Promise<StoredRecord | undefined> {
  const row = await db.db
    .selectFrom('library_records')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', q.accountId)
    .where('model', '=', q.model)
    .where('library', '=', q.library)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const before = fromRow(row);
  const due = settled(before, now);
  const after = ask ? await ask(due, now) : due;
  await transition(db, before, after);
  return after;
}

/**
 * The caller's live records of a library, newest first, settled and persisted. Due steps the generator
 * ends are asked a few at a time within one time budget for the whole list (`budgetMs`, one question's
 * limit): a provider that hangs delays a list once, not once per record. Records not asked in time stay
 * as they are until the next read.
 */
export async function listRecords(
  db: Db,
  q: RecordQuery,
  now: Date,
  ask?: StepAsker,
  budgetMs: number = SETTLE_ASK_MS,
): Promise<StoredRecord[]> {
  const rows = await db.db
    .selectFrom('library_records')
    .selectAll()
    .where('account_id', '=', q.accountId)
    .where('model', '=', q.model)
    .where('library', '=', q.library)
    .where('deleted_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  const deadline = AbortSignal.timeout(budgetMs);
  const records: StoredRecord[] = new Array(rows.length);
  let next = 0;
  const settleNext = async (): Promise<void> => {
    while (next < rows.length) {
      const at = next++;
      const before = fromRow(rows[at]!);
      const due = settled(before, now);
      const after = ask && !deadline.aborted ? await ask(due, now, deadline) : due;
      await transition(db, before, after);
      records[at] = after;
    }
  };
  await Promise.all(Array.from({ length: Math.min(LIST_ASKS_AT_ONCE, rows.length) }, settleNext));
  return records;
}

/** The record as the API shows it: id, name, status (where it learns or waits), fields, error, created_at. */
export function viewOf(decl: LibraryDecl, r: StoredRecord): Record<string, unknown> {
  return {
    id: r.id,
    name: r.name,
    ...(decl.states ? { status: r.status } : {}),
    ...(decl.view ? decl.view(r) : r.data),
    // The provider's reason, which may quote the request it got (our key with it), never shows a secret.
    ...(r.status === 'failed' && r.error !== null ? { error: scrubSecrets(r.error) } : {}),
    created_at: r.createdAt,
  };
}
