/**
 * How each engine reads the transfers of `captureMany`'s batch: by their key, the batch's JSON read once.
 * On SQLite a list of the ids beside the join made the list drive the index and each transfer scan the
 * whole JSON for its row (2 ms a batch of 64 against 0.16 ms); on PostgreSQL the join alone, planned for a
 * guessed 100 rows, read every transfer (docs/performance.md, "A twenty-third session" and "A twenty-fourth
 * session"). SQLite by default; a fresh PostgreSQL database when TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { openTestDatabase } from '../../test/databases.ts';
import type { Db } from '../db/index.ts';
import { rowsJson } from '../db/index.ts';
import { POSTED_COLUMNS, transfersPosted } from './ledger.ts';

let db: Db;
let drop: () => Promise<void>;
/** The batch: 64 of the transfers, as `captureMany` gives them. */
let rows: string;
before(async () => {
  ({ db, drop } = await openTestDatabase('gta_capture_plan'));
  rows = rowsJson(
    db.db,
    POSTED_COLUMNS,
    Array.from({ length: 64 }, (_, i) => ({ id: `t${i + 1}`, settled_at: 'y' })),
  );
  await db.db
    .insertInto('accounts')
    .values({ id: 'acc', name: 'plan', credited_minor: 0, captured_minor: 0, held_minor: 0, created_at: 'x' })
    .execute();
  await sql`insert into transfers (id, account_id, key_id, amount_minor, status, created_at)
    with recursive n(i) as (select 1 union all select i + 1 from n where i < 20000)
    select 't' || i, 'acc', null, 10, 'pending', '2026-11-28T00:00:00.000Z' from n`.execute(db.db);
  if (db.dialect.name === 'postgres') await sql`analyze transfers`.execute(db.db);
});
after(() => drop());

async function planOf(): Promise<string> {
  const query = transfersPosted.compiled(db.db, { rows });
  const prefix = db.dialect.name === 'postgres' ? 'explain ' : 'explain query plan ';
  const { rows: plan } = await db.db.executeQuery(
    CompiledQuery.raw(prefix + query.sql, [...query.parameters]),
  );
  return plan.map((row) => Object.values(row as object).join(' ')).join('\n');
}

test('the batch reads its transfers by their key and its JSON once', async () => {
  const plan = await planOf();
  if (db.dialect.name === 'sqlite') {
    assert.match(plan, /SEARCH transfers USING INDEX sqlite_autoindex_transfers_1 \(id=\?\)/);
    assert.equal(plan.match(/SCAN jsonb_each/g)?.length, 1, plan);
  } else {
    assert.doesNotMatch(plan, /Seq Scan on transfers/);
    assert.match(plan, /Index Scan .*on transfers|Bitmap Index Scan on transfers_pkey/);
  }
});

test('the batch moves exactly its pending transfers to posted', async () => {
  const { rows: moved } = await db.dialect.transaction(db.db, (tx) => transfersPosted(tx, { rows }));
  assert.deepEqual(moved.map((t) => t.id).sort(), Array.from({ length: 64 }, (_, i) => `t${i + 1}`).sort());
  const { rows: again } = await db.dialect.transaction(db.db, (tx) => transfersPosted(tx, { rows }));
  assert.deepEqual(again, []);
  const posted = await db.db.selectFrom('transfers').select('id').where('status', '=', 'posted').execute();
  assert.equal(posted.length, 64);
});
