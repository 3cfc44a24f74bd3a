import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { createDb } from './connect.ts';
import { notifyOnCommit } from './dialect.ts';

// SQLite has no LISTEN/NOTIFY: this process's listeners hear a transaction's notifications once it commits,
// never when it rolls back, once per channel and payload, as PostgreSQL delivers them.

test('SQLite notifications reach listeners after commit only, once per payload', async () => {
  const db = createDb('sqlite::memory:');
  const heard: string[] = [];
  const stop = await db.listen('things', (payload) => heard.push(String(payload)));
  await db.dialect.transaction(db.db, async (tx) => {
    await notifyOnCommit(tx, 'things', 'a');
    await notifyOnCommit(tx, 'things', 'a');
    await notifyOnCommit(tx, 'things', 'b');
    await notifyOnCommit(tx, 'others', 'c');
    await sql`select 1`.execute(tx);
    assert.deepEqual(heard, [], 'nothing before the commit');
  });
  assert.deepEqual(heard, ['a', 'b']);
  await assert.rejects(
    db.dialect.transaction(db.db, async (tx) => {
      await notifyOnCommit(tx, 'things', 'rolled back');
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.deepEqual(heard, ['a', 'b'], 'a rollback tells nobody');
  // Outside a transaction the change is already committed: heard right after.
  await notifyOnCommit(db.db, 'things', 'loose');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(heard, ['a', 'b', 'loose']);
  await stop();
  await db.dialect.transaction(db.db, (tx) => notifyOnCommit(tx, 'things', 'unheard'));
  assert.deepEqual(heard, ['a', 'b', 'loose'], 'stopped listening');
  await db.close();
});

test('two SQLite handles do not hear each other', async () => {
  const one = createDb('sqlite::memory:');
  const two = createDb('sqlite::memory:');
  const heard: string[] = [];
  const stop = await two.listen('things', (payload) => heard.push(String(payload)));
  await one.dialect.transaction(one.db, (tx) => notifyOnCommit(tx, 'things', 'x'));
  assert.deepEqual(heard, []);
  await stop();
  await one.close();
  await two.close();
});
