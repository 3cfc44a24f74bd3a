import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { CompiledQuery } from 'kysely';
import { createDb, type Db, migrateToLatest } from './connect.ts';
import { execute } from './dialect.ts';

// `execute` runs a compiled query straight on the SQLite handle inside this module's transactions, and
// through Kysely everywhere else. Either way a caller must see what Kysely's own SQLite driver gives:
// the same result shapes, errors as rejected promises, and never a statement run inside a transaction
// that is not the caller's.

/** The database, and the epochs' names written since the migrations (which write some of their own). */
async function withDb(fn: (db: Db, namesAdded: () => Promise<string[]>) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-execute-'));
  const db = createDb(`sqlite:${path.join(dir, 'e.db')}`);
  const names = async () =>
    (
      await db.db.executeQuery<{ name: string }>(CompiledQuery.raw('select name from epochs order by name'))
    ).rows.map((row) => row.name);
  try {
    await migrateToLatest(db);
    const before = new Set(await names());
    await fn(db, async () => (await names()).filter((name) => !before.has(name)));
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const insert = (name: string, value: number) =>
  CompiledQuery.raw('insert into epochs (name, value) values (?, ?)', [name, value]);
const select = (name: string) => CompiledQuery.raw('select name, value from epochs where name = ?', [name]);
const bump = (name: string) =>
  CompiledQuery.raw('update epochs set value = value + 1 where name = ? returning value', [name]);

test('inside a transaction and a group commit, results have the shapes of Kysely’s driver', async () => {
  await withDb(async (db) => {
    const viaKysely = {
      insert: await db.db.executeQuery(insert('k', 1)),
      select: await db.db.executeQuery(select('k')),
      bump: await db.db.executeQuery(bump('k')),
    };
    for (const run of [db.dialect.transaction, db.dialect.groupCommit]) {
      const direct = await run(db.db, async (tx) => ({
        insert: await execute(tx, insert('d', 1)),
        select: await execute(tx, select('d')),
        bump: await execute(tx, bump('d')),
      }));
      await db.db.executeQuery(CompiledQuery.raw("delete from epochs where name = 'd'"));
      assert.deepEqual(
        { ...direct.insert, insertId: typeof direct.insert.insertId },
        { ...viaKysely.insert, insertId: typeof viaKysely.insert.insertId },
      );
      assert.equal(direct.insert.numAffectedRows, 1n);
      assert.deepEqual(direct.select.rows, [{ name: 'd', value: 1 }]);
      assert.deepEqual(viaKysely.select.rows, [{ name: 'k', value: 1 }]);
      assert.deepEqual(direct.bump.rows, viaKysely.bump.rows);
    }
  });
});

test('a failing statement rejects its promise, and its group member alone is undone', async () => {
  await withDb(async (db, namesAdded) => {
    await db.db.executeQuery(insert('taken', 1));
    const calls = ['a', 'taken', 'b'].map((name) =>
      db.dialect.groupCommit(db.db, async (tx) => {
        await execute(tx, insert(`${name}-first`, 1));
        const pending = execute(tx, insert(name, 2));
        assert.ok(pending instanceof Promise, 'a promise even when the statement fails at once');
        await pending;
        return name;
      }),
    );
    const outcomes = await Promise.allSettled(calls);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(await namesAdded(), ['a', 'a-first', 'b', 'b-first', 'taken']);
  });
});

test('outside a transaction it waits for the open one and is not undone with it', async () => {
  await withDb(async (db, namesAdded) => {
    let outside: Promise<unknown> | null = null;
    await assert.rejects(
      db.dialect.transaction(db.db, async (tx) => {
        await execute(tx, insert('inside', 1));
        // Another caller writes on the handle itself while this transaction holds the connection.
        outside = execute(db.db, insert('outside', 1));
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Error('roll back');
      }),
      /roll back/,
    );
    await outside;
    assert.deepEqual(await namesAdded(), ['outside']);
  });
});
