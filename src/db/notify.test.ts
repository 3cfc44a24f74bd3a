import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { freshPostgres } from '../../test/databases.ts';
import { createDb } from './connect.ts';
import { notifyAndCommit, notifyOnCommit } from './dialect.ts';

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

test('notifyAndCommit: each channel and payload once, quoted as literals, then the COMMIT', () => {
  assert.equal(
    notifyAndCommit([
      ['gta_task_changed', 'a'],
      ['gta_task_changed', 'a'],
      ['other', "it's \\ here"],
    ]),
    "select pg_notify('gta_task_changed', 'a'), pg_notify('other',  E'it''s \\\\ here'); commit",
  );
});

test('PostgreSQL: notifications travel with the COMMIT; a rollback or a refused one tells nobody', async (t) => {
  const server = process.env.TEST_DATABASE_URL;
  if (!server) return t.skip('TEST_DATABASE_URL is not set');
  const { url, drop } = await freshPostgres(server, 'gta_notify');
  const db = createDb(url);
  try {
    await sql`create table marks (name text primary key)`.execute(db.db);
    const heard: string[] = [];
    const stop = await db.listen('things', (payload) => heard.push(String(payload)));
    const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
    await db.dialect.transaction(db.db, async (tx) => {
      await notifyOnCommit(tx, 'things', "it's a");
      await notifyOnCommit(tx, 'things', "it's a");
      await notifyOnCommit(tx, 'things', 'back\\slash');
      await sql`insert into marks values ('one')`.execute(tx);
    });
    await settle();
    assert.deepEqual(heard, ["it's a", 'back\\slash'], 'once per payload, exactly as sent');
    await assert.rejects(
      db.dialect.transaction(db.db, async (tx) => {
        await notifyOnCommit(tx, 'things', 'rolled back');
        await sql`insert into marks values ('two')`.execute(tx);
        throw new Error('boom');
      }),
      /boom/,
    );
    // PostgreSQL refuses a payload of 8,000 bytes or more: the COMMIT sent after it must not run.
    await assert.rejects(
      db.dialect.transaction(db.db, async (tx) => {
        await sql`insert into marks values ('three')`.execute(tx);
        await notifyOnCommit(tx, 'things', 'x'.repeat(9000));
      }),
      /payload string too long/,
    );
    await settle();
    assert.deepEqual(heard, ["it's a", 'back\\slash'], 'a rollback tells nobody');
    const { rows } = await sql<{ name: string }>`select name from marks order by name`.execute(db.db);
    assert.deepEqual(
      rows.map((r) => r.name),
      ['one'],
      'neither the rolled-back nor the refused transaction wrote anything',
    );
    // The pool's connections are usable after both.
    for (let i = 0; i < 12; i++)
      await db.dialect.transaction(db.db, (tx) => notifyOnCommit(tx, 'things', `after ${i}`));
    await settle();
    assert.equal(heard.length, 14);
    await stop();
  } finally {
    await db.close();
    await drop();
  }
});
