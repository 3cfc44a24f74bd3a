import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openTestDatabase } from '../../test/databases.ts';
import type { Db } from './index.ts';
import { insertRow } from './insert-row.ts';

let db: Db;
let drop: () => Promise<void>;
before(async () => {
  ({ db, drop } = await openTestDatabase('gta_insert_row'));
});
after(() => drop());

const job = (id: string) => ({
  id,
  task_id: `task-${id}`,
  run_at: '2026-11-28T00:00:00.000Z',
  locked_by: 'worker-1',
  locked_until: '2026-11-28T00:01:00.000Z',
  attempts: 2,
});

test('insertRow writes the row the query builder writes', async () => {
  await db.db.insertInto('jobs').values(job('built')).execute();
  await insertRow(db.db, 'jobs', job('kept'));
  await insertRow(db.db, 'jobs', job('kept-again'));
  const rows = await db.db.selectFrom('jobs').selectAll().orderBy('id').execute();
  const { id: _built, task_id: _builtTask, ...built } = rows.find((r) => r.id === 'built') ?? {};
  for (const id of ['kept', 'kept-again']) {
    const { id: got, task_id: task, ...rest } = rows.find((r) => r.id === id) ?? {};
    assert.equal(got, id);
    assert.equal(task, `task-${id}`);
    assert.deepEqual(rest, built);
  }
});

test('a column left undefined is left out (its default or null), in a statement of its own', async () => {
  await insertRow(db.db, 'jobs', { ...job('no-lock'), locked_by: undefined, locked_until: undefined });
  await insertRow(db.db, 'jobs', job('with-lock'));
  const rows = await db.db
    .selectFrom('jobs')
    .select(['id', 'locked_by', 'attempts'])
    .where('id', 'in', ['no-lock', 'with-lock'])
    .orderBy('id')
    .execute();
  assert.deepEqual(
    rows.map((r) => ({ ...r, attempts: Number(r.attempts) })),
    [
      { id: 'no-lock', locked_by: null, attempts: 2 },
      { id: 'with-lock', locked_by: 'worker-1', attempts: 2 },
    ],
  );
});

test('inside a transaction, a rollback takes the row back', async () => {
  await assert.rejects(
    db.db.transaction().execute(async (tx) => {
      await insertRow(tx, 'jobs', job('rolled-back'));
      throw new Error('undo');
    }),
    /undo/,
  );
  const rows = await db.db.selectFrom('jobs').select('id').where('id', '=', 'rolled-back').execute();
  assert.deepEqual(rows, []);
});
