/**
 * The ledger page's reader (CONTRACT §13): newest first, cursor pages that neither skip nor repeat,
 * filters by kind and period, the available amount after each entry, and one account only.
 * SQLite by default; a fresh PostgreSQL database when TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { openTestDatabase } from '../../test/databases.ts';
import type { Db } from '../db/index.ts';
import { ApiError } from '../errors.ts';
import { uuidv7 } from '../lib/ids.ts';
import { credit, EntriesReader, type EntryView, entriesOf, hold, settle } from './index.ts';

async function newAccount(db: Db): Promise<string> {
  const id = randomUUID();
  await db.db
    .insertInto('accounts')
    .values({
      id,
      name: 'entries',
      credited_minor: 0,
      captured_minor: 0,
      held_minor: 0,
      created_at: new Date(0).toISOString(),
    })
    .execute();
  return id;
}

const at = (minute: number) => new Date(Date.UTC(2026, 2, 10, 12, minute));

async function creditAt(db: Db, accountId: string, amountMinor: number, minute: number): Promise<void> {
  await db.dialect.transaction(db.db, (tx) =>
    credit(tx, { accountId, amountMinor, reference: `r-${randomUUID()}`, at: at(minute) }),
  );
}

/** A task's hold at `minute`, settled a minute later unless pending. */
async function task(
  db: Db,
  accountId: string,
  amountMinor: number,
  minute: number,
  outcome: 'capture' | 'void' | 'pending',
): Promise<string> {
  const id = uuidv7(at(minute).getTime());
  await db.dialect.transaction(db.db, async (tx) => {
    await hold(tx, { accountId, keyId: null, taskId: id, amountMinor, at: at(minute) });
    if (outcome !== 'pending') await settle(tx, id, outcome, at(minute + 1));
  });
  return id;
}

async function all(db: Db, accountId: string, limit: number, filter = {}): Promise<EntryView[]> {
  const seen: EntryView[] = [];
  let cursor: string | null = null;
  do {
    const page = await entriesOf(db.db, accountId, { filter, cursor, limit });
    assert.ok(page.entries.length <= limit);
    seen.push(...page.entries);
    cursor = page.next;
  } while (cursor);
  return seen;
}

describe('ledger entries reader', () => {
  let db: Db;
  let drop: () => Promise<void>;
  let account: string;
  let captured: string;
  before(async () => {
    ({ db, drop } = await openTestDatabase('gta_entries'));
    account = await newAccount(db);
    await creditAt(db, account, 10_000, 0);
    captured = await task(db, account, 1_500, 10, 'capture');
    await task(db, account, 700, 20, 'void');
    await task(db, account, 300, 30, 'pending');
    await creditAt(db, account, 5_000, 40);
    const other = await newAccount(db);
    await creditAt(db, other, 99_999, 5);
  });
  after(() => drop());

  test('newest first with the available amount after each entry', async () => {
    const page = await entriesOf(db.db, account, {});
    assert.deepEqual(
      page.entries.map((e) => [e.type, e.amount_minor, e.available_after_minor]),
      [
        ['credit', 5_000, 13_200],
        ['hold', 300, 8_200],
        ['void', 700, 8_500],
        ['hold', 700, 7_800],
        ['capture', 1_500, 8_500],
        ['hold', 1_500, 8_500],
        ['credit', 10_000, 10_000],
      ],
    );
    assert.equal(page.next, null);
    assert.equal(page.entries[4]?.task_id, captured);
    assert.match(page.entries[0]?.reference ?? '', /^r-/);
  });

  test('cursor pages neither skip nor repeat, with the same amounts as one page', async () => {
    const whole = (await entriesOf(db.db, account, {})).entries;
    for (const limit of [1, 2, 3]) {
      const paged = await all(db, account, limit);
      assert.deepEqual(paged, whole, `pages of ${limit}`);
    }
  });

  test('filters by kind and by period; the amounts stay those of the whole ledger', async () => {
    const credits = await all(db, account, 1, { kinds: ['credit'] });
    assert.deepEqual(
      credits.map((e) => [e.amount_minor, e.available_after_minor]),
      [
        [5_000, 13_200],
        [10_000, 10_000],
      ],
    );
    const holds = await all(db, account, 2, { kinds: ['hold', 'void'] });
    assert.deepEqual(
      holds.map((e) => e.type),
      ['hold', 'void', 'hold', 'hold'],
    );
    const period = await all(db, account, 2, { from: at(10).toISOString(), to: at(21).toISOString() });
    assert.deepEqual(
      period.map((e) => [e.type, e.amount_minor]),
      [
        ['hold', 700],
        ['capture', 1_500],
        ['hold', 1_500],
      ],
    );
  });

  test('another account and an unknown account show nothing of this one', async () => {
    const reader = new EntriesReader({ db });
    const none = await reader.page(randomUUID());
    assert.deepEqual(none, { entries: [], next: null });
    const theirs = await reader.page(account);
    assert.ok(theirs.entries.every((e) => e.amount_minor !== 99_999));
  });

  test('a cursor it did not make is 400 invalid_request', async () => {
    const made = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const bad = ['nope', made({ a: 1 }), made(['a', 'b']), made(['2026-11-30T00:00:00.000Z', 'b'])];
    for (const cursor of [...bad, made(['yesterday', '0193b2c4-0000-7000-8000-000000000000'])]) {
      await assert.rejects(
        entriesOf(db.db, account, { cursor }),
        (error) => error instanceof ApiError && error.code === 'invalid_request',
      );
    }
  });
});
