import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql } from 'kysely';
import { createDb, type Db, migrateToLatest } from './connect.ts';

// Db.readNow on SQLite (committed-reads.ts): reads of committed data at once, kept until the database
// changes. Each rule the docs give: this process's own writes (plain, RETURNING, in a transaction, rolled
// back) are seen by its very next read; another connection's commit by the next turn of the event loop; a
// read inside a transaction is refused (null); PostgreSQL never answers here.

async function withDb(fn: (db: Db, file: string) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-readnow-'));
  const file = path.join(dir, 'r.db');
  const db = createDb(`sqlite:${file}`);
  try {
    await migrateToLatest(db);
    await db.db.insertInto('epochs').values({ name: 'x', value: 1 }).execute();
    await fn(db, file);
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function readX(db: Db): Array<{ value: number }> | null {
  const query = db.db.selectFrom('epochs').select('value').where('name', '=', 'x').compile();
  return db.readNow(query);
}

function valueNow(db: Db): number | undefined {
  const rows = readX(db);
  assert.ok(rows !== null, 'read at once outside a transaction');
  return rows[0]?.value;
}

test('reads the committed rows as Kysely would, and gives the same frozen rows while nothing changes', async () => {
  await withDb(async (db) => {
    const first = readX(db);
    assert.deepEqual(first, [{ value: 1 }]);
    const again = readX(db);
    assert.equal(again, first, 'kept: the same result until a change');
    assert.ok(Object.isFrozen(first?.[0]), 'rows shared by later reads cannot be changed');
    const none = db.readNow(db.db.selectFrom('epochs').select('value').where('name', '=', 'nope').compile());
    assert.deepEqual(none, []);
  });
});

test("this process's own writes are seen by its very next read", async () => {
  await withDb(async (db) => {
    assert.equal(valueNow(db), 1);
    await db.db.updateTable('epochs').set({ value: 2 }).where('name', '=', 'x').execute();
    assert.equal(valueNow(db), 2, 'plain UPDATE');
    await db.db.updateTable('epochs').set({ value: 3 }).where('name', '=', 'x').returningAll().execute();
    assert.equal(valueNow(db), 3, 'UPDATE … RETURNING (a statement that reads and writes)');
    await sql`update epochs set value = 4 where name = 'x'`.execute(db.db);
    assert.equal(valueNow(db), 4, 'raw SQL');
    await db.db.deleteFrom('epochs').where('name', '=', 'x').execute();
    assert.equal(valueNow(db), undefined, 'DELETE');
  });
});

test('inside a transaction nothing is read at once; after it, the committed or rolled-back state', async () => {
  await withDb(async (db) => {
    assert.equal(valueNow(db), 1);
    await db.dialect.transaction(db.db, async (tx) => {
      await tx.updateTable('epochs').set({ value: 5 }).where('name', '=', 'x').execute();
      assert.equal(readX(db), null, 'an open transaction would show its uncommitted write');
    });
    assert.equal(valueNow(db), 5, 'committed');
    await assert.rejects(
      db.dialect.transaction(db.db, async (tx) => {
        await tx.updateTable('epochs').set({ value: 6 }).where('name', '=', 'x').execute();
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.equal(valueNow(db), 5, 'rolled back: the value before');
  });
});

test("another connection's commit is seen from the next turn of the event loop on", async () => {
  await withDb(async (db, file) => {
    const other = createDb(`sqlite:${file}`);
    try {
      assert.equal(valueNow(db), 1);
      await other.db.updateTable('epochs').set({ value: 7 }).where('name', '=', 'x').execute();
      await nextTurn();
      assert.equal(valueNow(db), 7, 'data_version moved: the kept rows were dropped');
      await other.db.updateTable('epochs').set({ value: 8 }).where('name', '=', 'x').execute();
      // Within one turn the version is read again once the last read is a millisecond old.
      const until = performance.now() + 5;
      while (performance.now() < until) {
        /* a turn longer than a millisecond */
      }
      assert.equal(valueNow(db), 8);
    } finally {
      await other.close();
    }
  });
});

test('reads with parameters that cannot make an unambiguous key are answered but not kept', async () => {
  await withDb(async (db) => {
    const query = (name: string) =>
      db.db.selectFrom('epochs').select('value').where('name', '=', name).compile();
    await db.db.insertInto('epochs').values({ name: 'a\u0000b', value: 9 }).execute();
    const first = db.readNow(query('a\u0000b'));
    assert.deepEqual(first, [{ value: 9 }]);
    assert.notEqual(db.readNow(query('a\u0000b')), first, 'read again, not kept');
  });
});

test('PostgreSQL answers nothing at once', { skip: !process.env.TEST_DATABASE_URL }, async () => {
  const db = createDb(process.env.TEST_DATABASE_URL ?? '');
  try {
    assert.equal(db.readNow(db.db.selectFrom('epochs').select('value').compile()), null);
  } finally {
    await db.close();
  }
});
