/**
 * The ledger's entries as the dashboard shows them (CONTRACT §13): an account's entries newest first,
 * filtered by kind and period, one page at a time after a cursor, each with the available amount right
 * after it. A page is one bounded query plus one sum, so an export pages through any number of entries
 * without holding them all.
 */
import type { Db, LedgerEntriesTable, Tx } from '../db/index.ts';
import { errors } from '../errors.ts';
import type { LedgerEntry } from './ledger.ts';

/** A kind of entry: credit, hold, capture or void. */
export type EntryKind = LedgerEntriesTable['type'];

/** The kinds of entries, in the order the filters list them. */
export const ENTRY_KINDS: readonly EntryKind[] = ['credit', 'hold', 'capture', 'void'];

/** Which entries to read. Times are ISO 8601 instants in UTC; `to` is exclusive. */
export interface EntryFilter {
  kinds?: readonly EntryKind[];
  from?: string;
  to?: string;
}

/** An entry and the account's available amount right after it (kopecks). */
export interface EntryView extends LedgerEntry {
  available_after_minor: number;
}

/** One page of entries, newest first; `next` continues after the last one (null at the end). */
export interface EntryPage {
  entries: EntryView[];
  next: string | null;
}

/** Which page to read. */
export interface PageOptions {
  filter?: EntryFilter;
  /** The `next` of the page before. */
  cursor?: string | null;
  /** Entries per page, 1 to MAX_PAGE. (Default: 50) */
  limit?: number;
  /** Whether to work out `available_after_minor` (0 when false, for exports). (Default: true) */
  balances?: boolean;
}

/** Most entries one page holds. */
export const MAX_PAGE = 1000;

interface Position {
  created_at: string;
  id: string;
}

function encodeCursor(at: Position): string {
  return Buffer.from(JSON.stringify([at.created_at, at.id])).toString('base64url');
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function decodeCursor(cursor: string): Position {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    // Only what encodeCursor writes: an entry's ISO time and its UUID. Any other pair of strings would
    // have been read as a position and answered from an arbitrary place (the top, for `["a","b"]`).
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      typeof value[1] === 'string' &&
      ISO_TIME.test(value[0]) &&
      UUID.test(value[1])
    ) {
      return { created_at: value[0], id: value[1] };
    }
  } catch {
    // Refused below.
  }
  throw errors.invalidRequest({ en: 'The page cursor is not valid.', ru: 'Неверный курсор страницы.' });
}

/** How an entry changes the available amount: credits and voids add, holds take, captures move nothing. */
function availableEffect(entry: { type: EntryKind; amount_minor: number }): number {
  if (entry.type === 'credit' || entry.type === 'void') return entry.amount_minor;
  if (entry.type === 'hold') return -entry.amount_minor;
  return 0;
}

/** The available amount right after the entry at `at`: every entry up to it, summed by kind. */
async function availableAfter(tx: Tx, accountId: string, at: Position): Promise<number> {
  const rows = await tx
    .selectFrom('ledger_entries')
    .select((eb) => ['type', eb.fn.sum<number | string>('amount_minor').as('total')])
    .where('account_id', '=', accountId)
    .where((eb) =>
      eb.or([
        eb('created_at', '<', at.created_at),
        eb.and([eb('created_at', '=', at.created_at), eb('id', '<=', at.id)]),
      ]),
    )
    .groupBy('type')
    .execute();
  return rows.reduce(
    (sum, row) => sum + availableEffect({ type: row.type, amount_minor: Number(row.total) }),
    0,
  );
}

/**
 * A page of the account's entries, newest first (by time, then id), after `cursor` when given.
 * Throws 400 invalid_request for a cursor this function did not make.
 */
export async function entriesOf(tx: Tx, accountId: string, options: PageOptions = {}): Promise<EntryPage> {
  const limit = Math.max(1, Math.min(options.limit ?? 50, MAX_PAGE));
  const filter = options.filter ?? {};
  const after = options.cursor ? decodeCursor(options.cursor) : null;
  let query = tx.selectFrom('ledger_entries').selectAll().where('account_id', '=', accountId);
  if (filter.kinds && filter.kinds.length > 0) query = query.where('type', 'in', [...filter.kinds]);
  if (filter.from) query = query.where('created_at', '>=', filter.from);
  if (filter.to) query = query.where('created_at', '<', filter.to);
  if (after) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', after.created_at),
        eb.and([eb('created_at', '=', after.created_at), eb('id', '<', after.id)]),
      ]),
    );
  }
  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  const entries: EntryView[] = [];
  const everyKind = !filter.kinds || filter.kinds.length === 0;
  let previous: EntryView | null = null;
  for (const { account_id: _account, ...row } of page) {
    const entry = { ...row, amount_minor: Number(row.amount_minor) };
    // Without a kind filter the next (older) entry's amount is this one's minus this one's effect; with
    // one, entries between two shown ones are not read here, so each is summed.
    const available_after_minor: number =
      options.balances === false
        ? 0
        : everyKind && previous
          ? previous.available_after_minor - availableEffect(previous)
          : await availableAfter(tx, accountId, entry);
    previous = { ...entry, available_after_minor };
    entries.push(previous);
  }
  const last = page.at(-1);
  return { entries, next: more && last ? encodeCursor(last) : null };
}

/** The ledger's entries as a service, for the dashboard's ledger page and the operator console. */
export class EntriesReader {
  readonly #db: Db;

  constructor(deps: { db: Db }) {
    this.#db = deps.db;
  }

  /** A page of the account's entries (see `entriesOf`). */
  page(accountId: string, options: PageOptions = {}): Promise<EntryPage> {
    return entriesOf(this.#db.db, accountId, options);
  }
}

/**
 * A page of the account's entries as the operator API and the command line give them, newest first:
 * `limit` of them (default and most: MAX_PAGE) after `cursor`, and the cursor of the next page (null at
 * the end). Throws 422 invalid_request for a cursor it did not make.
 */
export async function ledgerOf(
  tx: Tx,
  accountId: string,
  options: { cursor?: string | null | undefined; limit?: number | undefined } = {},
): Promise<{ entries: LedgerEntry[]; next: string | null }> {
  const page = await entriesOf(tx, accountId, {
    cursor: options.cursor ?? null,
    limit: options.limit ?? MAX_PAGE,
    balances: false,
  });
  return {
    entries: page.entries.map(({ available_after_minor: _available, ...entry }) => entry),
    next: page.next,
  };
}
