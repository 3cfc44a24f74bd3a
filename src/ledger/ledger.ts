/**
 * The wallet: credits, and each task's price as a two-phase transfer — held at acceptance, then
 * captured on success or voided on failure or cancel, exactly once (CONTRACT §5). Every function
 * takes the caller's transaction so the money moves in the same commit as the state change causing it.
 *
 * Balances are kept as counters on the account row (credited, captured, held) and every movement is
 * also appended to `ledger_entries`; the invariant `available = credited − captured − held` and
 * "counters = sums of entries" are checked by the tests after every test.
 */

import { sql } from 'kysely';
import {
  type AccountsTable,
  type DialectCapabilities,
  insertRow,
  type KeyDaySpendTable,
  type LedgerEntriesTable,
  prepared,
  rowsJson,
  type TransfersTable,
  type Tx,
} from '../db/index.ts';
import { errors } from '../errors.ts';
import { moscowDay, uuidv7 } from '../lib/index.ts';

export const CURRENCY = 'RUB';

export interface Balances {
  /** Credited minus captured (kopecks). */
  balanceMinor: number;
  heldMinor: number;
  /** What new tasks may use now: credited − captured − held. */
  availableMinor: number;
}

export interface LedgerEntry {
  id: string;
  type: LedgerEntriesTable['type'];
  amount_minor: number;
  task_id: string | null;
  key_id: string | null;
  reference: string | null;
  created_at: string;
}

const countersOf = prepared<
  { accountId: string },
  Pick<AccountsTable, 'credited_minor' | 'captured_minor' | 'held_minor'>
>((db, value) =>
  db
    .selectFrom('accounts')
    .select(['credited_minor', 'captured_minor', 'held_minor'])
    .where('id', '=', value('accountId')),
);

export async function balancesOf(tx: Tx, accountId: string): Promise<Balances | null> {
  const row = (await countersOf(tx, { accountId })).rows[0];
  if (!row) return null;
  const balanceMinor = Number(row.credited_minor) - Number(row.captured_minor);
  return {
    balanceMinor,
    heldMinor: Number(row.held_minor),
    availableMinor: balanceMinor - Number(row.held_minor),
  };
}

async function appendEntry(
  tx: Tx,
  entry: Omit<LedgerEntry, 'id'> & { account_id: string },
): Promise<LedgerEntry> {
  const row = { id: uuidv7(entry.created_at ? Date.parse(entry.created_at) : Date.now()), ...entry };
  await insertRow(tx, 'ledger_entries', row);
  const { account_id: _account, ...rest } = row;
  return rest;
}

/**
 * Credits an account once per `reference`: a repeated reference with the same amount returns the first
 * entry and `created: false` (a replay); with another amount it is 409 credit_reference_conflict, since
 * answering the first entry would hide that the second amount was never credited. Runs inside the
 * caller's transaction, which must hold the account lock (`dialect.lockAccount`) when others may credit
 * the account at once, so the 2^53 check reads a balance no other credit is changing; a unique-index race
 * between two callers is resolved by the index (the loser's transaction fails and its caller re-reads).
 */
export async function credit(
  tx: Tx,
  input: { accountId: string; amountMinor: number; reference: string; at: Date },
): Promise<{ entry: LedgerEntry; created: boolean }> {
  const existing = await tx
    .selectFrom('ledger_entries')
    .selectAll()
    .where('account_id', '=', input.accountId)
    .where('reference', '=', input.reference)
    .executeTakeFirst();
  if (existing) {
    const { account_id: _account, ...entry } = existing;
    const amountMinor = Number(entry.amount_minor);
    if (amountMinor !== input.amountMinor) throw errors.creditReferenceConflict(input.reference, amountMinor);
    return { entry: { ...entry, amount_minor: amountMinor }, created: false };
  }
  // Amounts are JavaScript numbers: past 2^53 they would be rounded, so such a balance is refused whole.
  const account = await tx
    .selectFrom('accounts')
    .select('credited_minor')
    .where('id', '=', input.accountId)
    .executeTakeFirst();
  if (Number(account?.credited_minor ?? 0) + input.amountMinor > Number.MAX_SAFE_INTEGER) {
    throw errors.amountTooLarge('amount_minor');
  }
  const entry = await appendEntry(tx, {
    account_id: input.accountId,
    type: 'credit',
    amount_minor: input.amountMinor,
    task_id: null,
    key_id: null,
    reference: input.reference,
    created_at: input.at.toISOString(),
  });
  await tx
    .updateTable('accounts')
    .set({ credited_minor: sql`credited_minor + ${input.amountMinor}` })
    .where('id', '=', input.accountId)
    .execute();
  return { entry, created: true };
}

const held = prepared<{ amount: number; accountId: string }, never>((db, value) =>
  db
    .updateTable('accounts')
    .set({ held_minor: sql`held_minor + ${value('amount')}` })
    .where('id', '=', value('accountId')),
);

export interface HoldInput {
  accountId: string;
  keyId: string | null;
  taskId: string;
  amountMinor: number;
  at: Date;
  /** Daily spending limit of the key (kopecks), when the key has one. */
  keyLimitMinor?: number | null;
}

/**
 * What a key spent on the Moscow day starting at `dayStart`, once this hold's `amount` is added (CONTRACT
 * §5: captured plus held amounts of its tasks created that day). One row per key and day, kept by the
 * hold and the void that change it (migration 0024), so the limit is one row however many tasks the key
 * made that day.
 */
const keySpent = prepared<
  { keyId: string; dayStart: string; amount: number },
  Pick<KeyDaySpendTable, 'spent_minor'>
>((db, value) =>
  db
    .insertInto('key_day_spend')
    .values({ key_id: value('keyId'), day_start: value('dayStart'), spent_minor: value('amount') })
    .onConflict((oc) =>
      oc
        .columns(['key_id', 'day_start'])
        .doUpdateSet((eb) => ({ spent_minor: eb('key_day_spend.spent_minor', '+', value('amount')) })),
    )
    .returning('spent_minor'),
);

/** A voided transfer's amount no longer counts for the day it was created on. */
const keySpendVoided = prepared<{ keyId: string; dayStart: string; amount: number }, never>((db, value) =>
  db
    .updateTable('key_day_spend')
    .set((eb) => ({ spent_minor: eb('spent_minor', '-', value('amount')) }))
    .where('key_id', '=', value('keyId'))
    .where('day_start', '=', value('dayStart')),
);

const daySpend = prepared<{ keyId: string; dayStart: string }, Pick<KeyDaySpendTable, 'spent_minor'>>(
  (db, value) =>
    db
      .selectFrom('key_day_spend')
      .select('spent_minor')
      .where('key_id', '=', value('keyId'))
      .where('day_start', '=', value('dayStart')),
);

/**
 * Holds a task's price. The caller's transaction must already hold the account lock
 * (`dialect.lockAccount`), so concurrent creations are serialised per account and can never overspend the
 * wallet or the key's daily limit.
 * Throws 403 key_daily_limit_exceeded or 402 insufficient_funds, in this order, after writing the key's
 * spend of the day: the caller's transaction must roll back on a throw, as it does for every refusal of
 * a creation.
 */
export async function hold(tx: Tx, input: HoldInput): Promise<void> {
  const balances = await balancesOf(tx, input.accountId);
  if (!balances) throw new Error(`account ${input.accountId} vanished`);
  if (input.keyId !== null) {
    const { rows } = await keySpent(tx, {
      keyId: input.keyId,
      dayStart: moscowDay(input.at).start.toISOString(),
      amount: input.amountMinor,
    });
    const spent = Number(rows[0]?.spent_minor ?? 0);
    const limit = input.keyLimitMinor ?? null;
    if (limit !== null && spent > limit) {
      throw errors.keyDailyLimitExceeded(limit, spent - input.amountMinor);
    }
  }
  if (input.amountMinor > balances.availableMinor) {
    throw errors.insufficientFunds(input.amountMinor, balances.availableMinor);
  }
  const at = input.at.toISOString();
  await insertRow(tx, 'transfers', {
    id: input.taskId,
    account_id: input.accountId,
    key_id: input.keyId,
    amount_minor: input.amountMinor,
    status: 'pending',
    created_at: at,
    settled_at: null,
  });
  await held(tx, { amount: input.amountMinor, accountId: input.accountId });
  await appendEntry(tx, {
    account_id: input.accountId,
    type: 'hold',
    amount_minor: input.amountMinor,
    task_id: input.taskId,
    key_id: input.keyId,
    reference: null,
    created_at: at,
  });
}

/** Captured plus held amounts of the key's transfers created since `dayStart`, a Moscow day's start (CONTRACT §5). */
export async function spentToday(tx: Tx, keyId: string, dayStart: Date): Promise<number> {
  const { rows } = await daySpend(tx, { keyId, dayStart: dayStart.toISOString() });
  return Number(rows[0]?.spent_minor ?? 0);
}

const transferSettled = prepared<
  { status: 'posted' | 'voided'; settledAt: string; taskId: string },
  Pick<TransfersTable, 'account_id' | 'key_id' | 'amount_minor' | 'created_at'>
>((db, value) =>
  db
    .updateTable('transfers')
    .set({ status: value('status'), settled_at: value('settledAt') })
    .where('id', '=', value('taskId'))
    .where('status', '=', 'pending')
    .returning(['account_id', 'key_id', 'amount_minor', 'created_at']),
);

/** The held amount moves to captured (success). */
const captured = prepared<{ amount: number; accountId: string }, never>((db, value) =>
  db
    .updateTable('accounts')
    .set({
      held_minor: sql`held_minor - ${value('amount')}`,
      captured_minor: sql`captured_minor + ${value('amount')}`,
    })
    .where('id', '=', value('accountId')),
);

/** The held amount is released (failure, cancel). */
const released = prepared<{ amount: number; accountId: string }, never>((db, value) =>
  db
    .updateTable('accounts')
    .set({ held_minor: sql`held_minor - ${value('amount')}` })
    .where('id', '=', value('accountId')),
);

/**
 * Settles a task's hold: `capture` on success, `void` on failure or cancel. Exactly once: the
 * conditional update only matches a pending transfer, so a second call changes nothing and returns false.
 */
export async function settle(
  tx: Tx,
  taskId: string,
  outcome: 'capture' | 'void',
  at: Date,
): Promise<boolean> {
  const settled = await transferSettled(tx, {
    status: outcome === 'capture' ? 'posted' : 'voided',
    settledAt: at.toISOString(),
    taskId,
  });
  const transfer = settled.rows[0];
  if (!transfer) return false;
  const amount = Number(transfer.amount_minor);
  await appendEntry(tx, {
    account_id: transfer.account_id,
    type: outcome,
    amount_minor: amount,
    task_id: taskId,
    key_id: transfer.key_id,
    reference: null,
    created_at: at.toISOString(),
  });
  // The account's row last: its update locks the row every money change of the account waits for (on
  // PostgreSQL) until this transaction ends, so it comes after the entry, not before.
  await (outcome === 'capture' ? captured : released)(tx, { amount, accountId: transfer.account_id });
  // After the account's row, in the order a creation locks them (account, then the key's day).
  if (outcome === 'void' && transfer.key_id !== null) {
    await keySpendVoided(tx, {
      keyId: transfer.key_id,
      dayStart: moscowDay(new Date(transfer.created_at)).start.toISOString(),
      amount,
    });
  }
  return true;
}

/** The rows of `transfersPosted`. */
export const POSTED_COLUMNS = { id: 'text', settled_at: 'text' } as const;

/**
 * `captureMany`'s UPDATE of the transfers. On PostgreSQL the ids are also given as a list (`jsonIn` over the
 * same rows): guessing 100 rows for the JSON, it otherwise joined them by reading every transfer, 5 ms a
 * batch with 10,000-20,000 transfers. Not on SQLite: there the list drives the transfers' index and each
 * transfer then scans the whole JSON for its row, 2 ms a batch of 64 against 0.16 ms without it, which
 * already reads the JSON once and each transfer by its key (docs/performance.md, "A twenty-fourth session").
 */
export const transfersPosted = prepared<
  { rows: string },
  Pick<TransfersTable, 'id' | 'account_id' | 'key_id' | 'amount_minor'>
>((db, value, dialect) =>
  db
    .updateTable('transfers')
    .from(dialect.jsonRows(value('rows'), POSTED_COLUMNS))
    .set((eb) => ({ status: 'posted', settled_at: eb.ref('v.settled_at') }))
    .whereRef('transfers.id', '=', 'v.id')
    .$if(dialect.name === 'postgres', (update) => update.where(dialect.jsonIn('transfers.id', value('rows'))))
    .where('transfers.status', '=', 'pending')
    .returning(['transfers.id', 'transfers.account_id', 'transfers.key_id', 'transfers.amount_minor']),
);

/** The columns of a ledger entry as `captureMany` gives them to `entriesAppended`. */
const ENTRY_COLUMNS = {
  id: 'text',
  account_id: 'text',
  type: 'text',
  amount_minor: 'bigint',
  task_id: 'text',
  key_id: 'text',
  reference: 'text',
  created_at: 'text',
} as const;
const ENTRY_COLUMN_NAMES = Object.keys(ENTRY_COLUMNS) as Array<keyof typeof ENTRY_COLUMNS>;

/** `captureMany`'s entries: one INSERT of the rows given as JSON, in their order. */
const entriesAppended = prepared<{ rows: string }, never>((db, value, dialect) =>
  db
    .insertInto('ledger_entries')
    .columns(ENTRY_COLUMN_NAMES)
    .expression(db.selectFrom(dialect.jsonRows(value('rows'), ENTRY_COLUMNS)).select(ENTRY_COLUMN_NAMES)),
);

/** The rows of `accountsCaptured`. */
const CAPTURED_COLUMNS = { id: 'text', amount: 'bigint' } as const;

/** `captureMany`'s UPDATE of the accounts' counters. */
const accountsCaptured = prepared<{ rows: string }, never>((db, value, dialect) =>
  db
    .updateTable('accounts')
    .from(dialect.jsonRows(value('rows'), CAPTURED_COLUMNS))
    .set((eb) => ({
      held_minor: eb('accounts.held_minor', '-', eb.ref('v.amount')),
      captured_minor: eb('accounts.captured_minor', '+', eb.ref('v.amount')),
    }))
    .whereRef('accounts.id', '=', 'v.id'),
);

/**
 * `settle(tx, taskId, 'capture', at)` for every task of a batch (batches.ts), set-based: one statement
 * for the transfers, one for their entries, one lock of the accounts (in the order of their ids, so two
 * batches never wait for each other) and one statement for their counters. A transfer no longer pending
 * changes nothing, as `settle` would not.
 */
export async function captureMany(
  tx: Tx,
  dialect: DialectCapabilities,
  captures: ReadonlyArray<{ taskId: string; at: Date }>,
): Promise<void> {
  if (captures.length === 0) return;
  const at = new Map(captures.map((c) => [c.taskId, c.at.toISOString()]));
  const { rows: transfers } = await transfersPosted(tx, {
    rows: rowsJson(
      tx,
      POSTED_COLUMNS,
      [...at].map(([id, settled_at]) => ({ id, settled_at })),
    ),
  });
  if (transfers.length === 0) return;
  const byId = new Map(transfers.map((t) => [t.id, t]));
  const entries: Array<LedgerEntry & { account_id: string }> = [];
  const amounts = new Map<string, number>();
  // In the order of the batch, as one `settle` after another would have written them.
  for (const { taskId } of captures) {
    const transfer = byId.get(taskId);
    const createdAt = at.get(taskId);
    if (transfer === undefined || createdAt === undefined) continue;
    const amount = Number(transfer.amount_minor);
    entries.push({
      id: uuidv7(Date.parse(createdAt)),
      account_id: transfer.account_id,
      type: 'capture',
      amount_minor: amount,
      task_id: taskId,
      key_id: transfer.key_id,
      reference: null,
      created_at: createdAt,
    });
    amounts.set(transfer.account_id, (amounts.get(transfer.account_id) ?? 0) + amount);
  }
  // The writes below read nothing back: on PostgreSQL they go with the COMMIT, in this order
  // (`writeAtCommit`), four round trips fewer a batch.
  await entriesAppended.atCommit(tx, { rows: rowsJson(tx, ENTRY_COLUMNS, entries) });
  // The accounts' rows last, as in `settle`: every money change of an account waits for its row.
  const accounts = [...amounts.keys()].sort();
  await dialect.lockAccounts(tx, accounts, { atCommit: true });
  await accountsCaptured.atCommit(tx, {
    rows: rowsJson(
      tx,
      CAPTURED_COLUMNS,
      accounts.map((id) => ({ id, amount: amounts.get(id) ?? 0 })),
    ),
  });
}
