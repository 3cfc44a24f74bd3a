import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { openTestDatabase } from '../../test/databases.ts';
import { type Db, idsJson, type JobsTable, type JsonRowOf, rowsJson } from './index.ts';
import { prepared } from './prepared.ts';

// prepared(): a query built once per dialect with named values, then run with new values. Each rule its
// doc gives: every named value lands where `value(name)` stood (also twice, and inside sql``); values
// built in stay as built; a missing value is refused before anything runs; it runs in the caller's
// transaction and rolls back with it; a list goes as one JSON value, whatever its length, with its texts,
// numbers and nulls as given (`jsonIn`, `jsonRows`). Runs on SQLite and, with TEST_DATABASE_URL, on PostgreSQL.

let db: Db;
let drop: () => Promise<void>;
before(async () => {
  ({ db, drop } = await openTestDatabase('gta_prepared'));
});
after(() => drop());

const job = (id: string, attempts = 0): JobsTable => ({
  id,
  task_id: `task-${id}`,
  run_at: '2026-11-28T00:00:00.000Z',
  locked_by: null,
  locked_until: null,
  attempts,
});

const jobsOf = prepared<{ taskId: string }, JobsTable>((d, value) =>
  d.selectFrom('jobs').selectAll().where('task_id', '=', value('taskId')).where('attempts', '>=', 0),
);

const bumped = prepared<{ by: number; id: string; lockedBy: string | null }, Pick<JobsTable, 'attempts'>>(
  (d, value) =>
    d
      .updateTable('jobs')
      .set({ attempts: sql`attempts + ${value('by')} + ${value('by')}`, locked_by: value('lockedBy') })
      .where('id', '=', value('id'))
      .where('run_at', '<', '2027-01-01T00:00:00.000Z')
      .returning('attempts'),
);

test('every call runs the same query with its own values, as the built query would', async () => {
  await db.db
    .insertInto('jobs')
    .values([job('a'), job('b', 5)])
    .execute();
  const a = await jobsOf(db.db, { taskId: 'task-a' });
  assert.deepEqual(
    a.rows,
    await db.db.selectFrom('jobs').selectAll().where('task_id', '=', 'task-a').execute(),
  );
  const b = await jobsOf(db.db, { taskId: 'task-b' });
  assert.deepEqual(
    b.rows.map((r) => [r.id, r.attempts]),
    [['b', 5]],
  );
  assert.deepEqual((await jobsOf(db.db, { taskId: 'task-none' })).rows, []);
});

test('a value used twice and inside sql`` gets the same value; built-in values stay; counts are told', async () => {
  await db.db.insertInto('jobs').values(job('c', 1)).execute();
  const result = await bumped(db.db, { by: 2, id: 'c', lockedBy: 'w1' });
  assert.deepEqual(result.rows, [{ attempts: 5 }]);
  const row = await db.db.selectFrom('jobs').selectAll().where('id', '=', 'c').executeTakeFirstOrThrow();
  assert.equal(row.locked_by, 'w1');
  assert.equal(Number(row.attempts), 5);
  const none = await bumped(db.db, { by: 1, id: 'missing', lockedBy: null });
  assert.deepEqual(none.rows, []);
  const removed = prepared<{ id: string }, never>((d, value) =>
    d.deleteFrom('jobs').where('id', '=', value('id')),
  );
  assert.equal(Number((await removed(db.db, { id: 'c' })).numAffectedRows), 1);
  assert.equal(Number((await removed(db.db, { id: 'c' })).numAffectedRows ?? 0), 0);
});

test('a missing value is refused before the query runs', async () => {
  await db.db.insertInto('jobs').values(job('d')).execute();
  await assert.rejects(
    bumped(db.db, { by: 1, id: 'd' } as unknown as { by: number; id: string; lockedBy: null }),
    /no value for "lockedBy"/,
  );
  const row = await db.db
    .selectFrom('jobs')
    .select('attempts')
    .where('id', '=', 'd')
    .executeTakeFirstOrThrow();
  assert.equal(Number(row.attempts), 0);
});

test("it runs in the caller's transaction and rolls back with it", async () => {
  await db.db.insertInto('jobs').values(job('e')).execute();
  await assert.rejects(
    db.dialect.transaction(db.db, async (tx) => {
      assert.deepEqual((await bumped(tx, { by: 1, id: 'e', lockedBy: 'w2' })).rows, [{ attempts: 2 }]);
      assert.deepEqual(
        (await jobsOf(tx, { taskId: 'task-e' })).rows.map((r) => Number(r.attempts)),
        [2],
      );
      throw new Error('roll back');
    }),
    /roll back/,
  );
  const row = await db.db.selectFrom('jobs').selectAll().where('id', '=', 'e').executeTakeFirstOrThrow();
  assert.equal(Number(row.attempts), 0);
  assert.equal(row.locked_by, null);
});

const jobsIn = prepared<{ ids: string }, Pick<JobsTable, 'id'>>((d, value, dialect) =>
  d
    .selectFrom('jobs')
    .select('id')
    .where(dialect.jsonIn('id', value('ids')))
    .orderBy('id'),
);

const jobsNotIn = prepared<{ ids: string }, Pick<JobsTable, 'id'>>((d, value, dialect) =>
  d
    .selectFrom('jobs')
    .select('id')
    .where('id', 'like', 'n%')
    .where(dialect.jsonNotIn('id', value('ids')))
    .orderBy('id'),
);

const ATTEMPT_COLUMNS = { id: 'text', attempts: 'bigint', locked_by: 'text' } as const;
const attemptsSet = prepared<{ rows: string }, Pick<JobsTable, 'id' | 'attempts' | 'locked_by'>>(
  (d, value, dialect) =>
    d
      .updateTable('jobs')
      .from(dialect.jsonRows(value('rows'), ATTEMPT_COLUMNS))
      .set((eb) => ({ attempts: eb.ref('v.attempts'), locked_by: eb.ref('v.locked_by') }))
      .whereRef('jobs.id', '=', 'v.id')
      .returning(['jobs.id', 'jobs.attempts', 'jobs.locked_by']),
);

test('a list goes as one JSON value: any length, with its texts, numbers and nulls kept', async () => {
  const ids = ['f1', 'f2', "f'3", 'f"4'];
  await db.db
    .insertInto('jobs')
    .values(ids.map((id) => job(id)))
    .execute();
  const read = async (list: string[]) => (await jobsIn(db.db, { ids: idsJson(list) })).rows.map((r) => r.id);
  assert.deepEqual(await read([]), []);
  assert.deepEqual(await read(['f2']), ['f2']);
  assert.deepEqual(await read([...ids, 'missing']), [...ids].sort());
  const { rows } = await attemptsSet(db.db, {
    rows: rowsJson(db.db, ATTEMPT_COLUMNS, [
      { id: 'f1', attempts: 7, locked_by: null },
      { id: "f'3", attempts: 1_234_567, locked_by: 'w "3"' },
    ]),
  });
  const byId = new Map(rows.map((r) => [r.id, [Number(r.attempts), r.locked_by]]));
  assert.deepEqual(byId.get('f1'), [7, null]);
  assert.deepEqual(byId.get("f'3"), [1_234_567, 'w "3"']);
  assert.equal(byId.size, 2);
});

test('a list left out goes as one JSON value too: none, some, all, and ids that are not there', async () => {
  const ids = ['n1', 'n2', "n'3", 'n"4'];
  await db.db
    .insertInto('jobs')
    .values(ids.map((id) => job(id)))
    .execute();
  const read = async (list: string[]) =>
    (await jobsNotIn(db.db, { ids: idsJson(list) })).rows.map((r) => r.id);
  assert.deepEqual(await read([]), [...ids].sort());
  assert.deepEqual(await read(['n2', "n'3", 'missing']), ['n"4', 'n1']);
  assert.deepEqual(await read(ids), []);
  // A value a row of `rowsJson` leaves out reads as null, on both engines.
  const lacking = [{ id: 'n1', attempts: 2 }] as Array<JsonRowOf<typeof ATTEMPT_COLUMNS>>;
  const { rows } = await attemptsSet(db.db, { rows: rowsJson(db.db, ATTEMPT_COLUMNS, lacking) });
  assert.deepEqual(
    rows.map((r) => [r.id, Number(r.attempts), r.locked_by]),
    [['n1', 2, null]],
  );
});

test('a list left out is checked against a hash of it, not id by id', async (t) => {
  if (db.dialect.name !== 'postgres') {
    t.skip('PostgreSQL only: SQLite builds an index of the list by itself');
    return;
  }
  // `not (id = any(…))` compared every row read with every id in the list: a claim's 128 running jobs
  // took a tenth of PostgreSQL's CPU in a drain (docs/performance.md, "A twenty-third session").
  const plan = await db.db
    .selectFrom('jobs')
    .select('id')
    .where(db.dialect.jsonNotIn('id', idsJson(['h1', 'h2'])))
    .explain();
  const text = plan.map((row) => Object.values(row).join(' ')).join('\n');
  assert.match(text, /hashed SubPlan/);
  assert.doesNotMatch(text, /ALL/);
});

test('a list of ids is read through the index, also where a join over the JSON would read the table', async (t) => {
  if (db.dialect.name !== 'postgres') {
    t.skip('PostgreSQL only: SQLite loops over the list and reads the index by itself');
    return;
  }
  // At 20,000 rows PostgreSQL's planner, guessing 100 rows for the JSON function, reads the whole table
  // for `in (select … from json_array_elements(…))` (docs/performance.md, "A twenty-second session").
  await sql`insert into jobs (id, task_id, run_at, attempts)
    select 'g' || n, 'task-g' || n, '2026-11-28T00:00:00.000Z', 0 from generate_series(1, 20000) as n`.execute(
    db.db,
  );
  await sql`analyze jobs`.execute(db.db);
  const plan = await db.db
    .selectFrom('jobs')
    .select('id')
    .where(db.dialect.jsonIn('id', idsJson(['g5', 'g7'])))
    .explain();
  const text = plan.map((row) => Object.values(row).join(' ')).join('\n');
  assert.doesNotMatch(text, /Seq Scan on jobs/);
  assert.match(text, /Index (Only )?Scan .*on jobs|Bitmap Index Scan on jobs_pkey/);
  assert.deepEqual(
    (await jobsIn(db.db, { ids: idsJson(['g5', 'g7']) })).rows.map((r) => r.id),
    ['g5', 'g7'],
  );
});
