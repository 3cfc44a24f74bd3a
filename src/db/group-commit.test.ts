import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { createDb, migrateToLatest } from './connect.ts';
import { notifyOnCommit } from './dialect.ts';

// Group commit (DialectCapabilities.groupCommit) on SQLite: calls that arrive together share one
// transaction, each in its own savepoint; a failing call undoes only its own writes; every call settles
// after the commit, and only committed calls' notifications are heard.

async function migrated(file: string) {
  const db = createDb(`sqlite:${file}`);
  await migrateToLatest(db);
  return db;
}

test('concurrent calls share one commit; a failing call undoes only its own writes', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-group-'));
  const db = await migrated(path.join(dir, 'g.db'));
  try {
    const heard: string[] = [];
    await db.listen('things', (payload) => heard.push(String(payload)));
    const calls = Array.from({ length: 10 }, (_, i) =>
      db.dialect.groupCommit(db.db, async (tx) => {
        await tx
          .insertInto('epochs')
          .values({ name: `e${i}`, value: i })
          .execute();
        await notifyOnCommit(tx, 'things', `n${i}`);
        if (i % 3 === 0) throw new Error(`refused ${i}`);
        return i;
      }),
    );
    const outcomes = await Promise.allSettled(calls);
    assert.deepEqual(
      outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message)),
      ['refused 0', 1, 2, 'refused 3', 4, 5, 'refused 6', 7, 8, 'refused 9'],
    );
    const rows = await db.db
      .selectFrom('epochs')
      .select('name')
      .where('name', 'like', 'e%')
      .orderBy('name')
      .execute();
    assert.deepEqual(
      rows.map((r) => r.name),
      ['e1', 'e2', 'e4', 'e5', 'e7', 'e8'],
      'the refused calls left nothing',
    );
    assert.deepEqual(heard.sort(), ['n1', 'n2', 'n4', 'n5', 'n7', 'n8'], 'only committed calls notify');
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('calls of one group are committed together: none is answered before the commit', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-group-'));
  const file = path.join(dir, 'g.db');
  const db = await migrated(file);
  // Another handle on the same file plays another process: it sees nothing until the group commits.
  const other = createDb(`sqlite:${file}`);
  try {
    let seenByOtherDuringGroup = -1;
    const first = db.dialect.groupCommit(db.db, async (tx) => {
      await tx.insertInto('epochs').values({ name: 'a', value: 1 }).execute();
      return 'a';
    });
    const second = db.dialect.groupCommit(db.db, async (tx) => {
      await tx.insertInto('epochs').values({ name: 'b', value: 2 }).execute();
      return 'b';
    });
    const third = db.dialect.groupCommit(db.db, async (tx) => {
      await tx.insertInto('epochs').values({ name: 'c', value: 3 }).execute();
      const row = await other.db
        .selectFrom('epochs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('name', 'in', ['a', 'b', 'c'])
        .executeTakeFirst();
      seenByOtherDuringGroup = Number(row?.n);
      return 'c';
    });
    assert.deepEqual(await Promise.all([first, second, third]), ['a', 'b', 'c']);
    // Made in the same turn of the event loop, the three share one commit: while the third ran, the
    // other process saw none of them.
    assert.equal(seenByOtherDuringGroup, 0);
    const after = await other.db
      .selectFrom('epochs')
      .select('name')
      .where('name', 'in', ['a', 'b', 'c'])
      .execute();
    assert.equal(after.length, 3);
  } finally {
    await other.close();
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('an error that ends the whole transaction fails every call of the group', async () => {
  const db = createDb('sqlite::memory:');
  await migrateToLatest(db);
  try {
    const ok = db.dialect.groupCommit(db.db, async () => 'first alone');
    // A later turn of the event loop: the next group.
    await ok;
    const a = db.dialect.groupCommit(db.db, async (tx) => {
      await tx.insertInto('epochs').values({ name: 'x', value: 1 }).execute();
      return 'a';
    });
    const b = db.dialect.groupCommit(db.db, async (tx) => {
      // Ends the transaction under the group: its commit cannot happen.
      await sql`rollback`.execute(tx);
      return 'b';
    });
    assert.equal(await ok, 'first alone', 'an earlier group is not touched');
    const outcomes = await Promise.allSettled([a, b]);
    assert.ok(
      outcomes.every((o) => o.status === 'rejected'),
      'neither is answered as done',
    );
    const rows = await db.db.selectFrom('epochs').select('name').where('name', '=', 'x').execute();
    assert.equal(rows.length, 0);
  } finally {
    await db.close();
  }
});

test('closing a file database waits for its checkpoint thread and keeps the process alive meanwhile', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-ckpt-'));
  const db = await migrated(path.join(dir, 'c.db'));
  await db.db.insertInto('epochs').values({ name: 'c', value: 1 }).execute();
  // Nothing else holds the event loop here: if the close did not, the test would end unfinished.
  await db.close();
  const again = createDb(`sqlite:${path.join(dir, 'c.db')}`);
  const row = await again.db.selectFrom('epochs').select('value').where('name', '=', 'c').executeTakeFirst();
  assert.equal(Number(row?.value), 1);
  await again.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
