import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import pg from 'pg';
import { freshPostgres } from '../../test/databases.ts';
import { createDb, type Db } from './connect.ts';
import { notifyOnCommit, pgInlined, pgQuoted } from './dialect.ts';

// `writeAtCommit`: a write whose result nobody reads, run as part of the transaction. PostgreSQL sends it
// with the COMMIT (one round trip less), its values written in as literals; SQLite runs it at once.

let current: Db;
/** The INSERT as the engine's compiler writes it (`$n` on PostgreSQL, `?` on SQLite). */
const insertMark = (name: string, weight: number | null): CompiledQuery =>
  sql`insert into marks (name, weight) values (${name}, ${weight})`.compile(current.db);

test('pgInlined writes each value of a compiled query in as a literal, quotes and backslashes escaped', () => {
  assert.equal(
    pgInlined(
      CompiledQuery.raw('update t set a = $1, b = $2, c = $3, d = $10 where e = any($11::json)', [
        "it's",
        7,
        null,
        4,
        5,
        6,
        7,
        8,
        9,
        true,
        'back\\slash $1',
      ]),
    ),
    "update t set a = 'it''s', b = 7, c = null, d = true where e = any( E'back\\\\slash $1'::json)",
  );
  assert.throws(() => pgInlined(CompiledQuery.raw('select $1', [{ a: 1 }])), TypeError);
  assert.throws(() => pgInlined(CompiledQuery.raw('select $1', [Number.NaN])), TypeError);
});

test("pgQuoted gives pg.escapeLiteral's literal of any text", () => {
  const texts = [
    '',
    'plain',
    "it's",
    "''",
    'back\\slash',
    "both ' and \\",
    '\\',
    'ромашка «ёж»',
    '$1 $$ ;--',
    '{"a":"b\\"c"}',
  ];
  let seed = 7;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const alphabet = ["'", '\\', 'a', 'я', ' ', '"', '$', '\n'];
  for (let i = 0; i < 200; i++)
    texts.push(
      Array.from(
        { length: 1 + Math.floor(random() * 12) },
        () => alphabet[Math.floor(random() * alphabet.length)],
      ).join(''),
    );
  for (const text of texts) assert.equal(pgQuoted(text), pg.escapeLiteral(text), JSON.stringify(text));
});

async function marks(db: Db): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from marks order by name`.execute(db.db);
  return rows.map((row) => row.name);
}

async function checkWrites(db: Db, sentWithCommit: boolean): Promise<void> {
  current = db;
  await sql`create table marks (name text primary key, weight integer)`.execute(db.db);
  // Part of the transaction: committed with it, with the transaction's other writes.
  const seenInside = await db.dialect.transaction(db.db, async (tx) => {
    await sql`insert into marks (name) values ('first')`.execute(tx);
    await db.dialect.writeAtCommit(tx, insertMark("it's second", 2));
    await notifyOnCommit(tx, 'marks', 'x');
    const { rows } = await sql<{ n: number }>`select count(*) as n from marks`.execute(tx);
    return Number(rows[0]?.n);
  });
  assert.equal(seenInside, sentWithCommit ? 1 : 2, 'PostgreSQL writes it with the COMMIT, SQLite at once');
  assert.deepEqual(await marks(db), ['first', "it's second"]);
  // Rolled back with the transaction when the transaction fails after it.
  await assert.rejects(
    db.dialect.transaction(db.db, async (tx) => {
      await db.dialect.writeAtCommit(tx, insertMark('third', 3));
      throw new Error('boom');
    }),
    /boom/,
  );
  // A write that fails fails the transaction whole: nothing of it is kept.
  await assert.rejects(
    db.dialect.transaction(db.db, async (tx) => {
      await sql`insert into marks (name) values ('fourth')`.execute(tx);
      await db.dialect.writeAtCommit(tx, insertMark('first', 1));
    }),
    (error: Error) => /UNIQUE|unique|duplicate/.test(error.message),
  );
  assert.deepEqual(await marks(db), ['first', "it's second"]);
  // Outside a transaction it runs at once; the pool's connections are usable after the failures.
  await db.dialect.writeAtCommit(db.db, insertMark('loose', null));
  for (let i = 0; i < 12; i++)
    await db.dialect.transaction(db.db, (tx) => db.dialect.writeAtCommit(tx, insertMark(`after ${i}`, i)));
  assert.equal((await marks(db)).length, 15);
}

test('SQLite: a write at commit runs at once, inside the transaction', async () => {
  const db = createDb('sqlite::memory:');
  try {
    await checkWrites(db, false);
  } finally {
    await db.close();
  }
});

test('PostgreSQL: a write at commit goes with the COMMIT and fails the transaction whole', async (t) => {
  const server = process.env.TEST_DATABASE_URL;
  if (!server) return t.skip('TEST_DATABASE_URL is not set');
  const { url, drop } = await freshPostgres(server, 'gta_write_at_commit');
  const db = createDb(url);
  try {
    await checkWrites(db, true);
  } finally {
    await db.close();
    await drop();
  }
});
