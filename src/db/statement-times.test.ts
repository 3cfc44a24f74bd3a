import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openTestDatabase } from '../../test/databases.ts';
import { type Db, prepared, recordStatementTimes } from './index.ts';

// recordStatementTimes(): while a recording runs, each statement run through `execute` (the prepared
// ones; on SQLite also a transaction's begin and commit) adds a call and its time under its SQL text;
// nothing is counted before it starts or after it ends; the longest total comes first; a new recording
// replaces the last. SQLite by default; a fresh PostgreSQL database when TEST_DATABASE_URL is set.

let db: Db;
let drop: () => Promise<void>;
before(async () => {
  ({ db, drop } = await openTestDatabase('gta_statement_times'));
});
after(() => drop());

const jobsAt = prepared<{ runAt: string }, { id: string }>((d, value) =>
  d.selectFrom('jobs').select('id').where('run_at', '=', value('runAt')),
);
const jobsLocked = prepared<{ by: string }, { id: string }>((d, value) =>
  d.selectFrom('jobs').select('id').where('locked_by', '=', value('by')),
);

test('a recording counts each SQL text from its start to its end', async () => {
  await jobsAt(db.db, { runAt: 'before' });
  const stop = recordStatementTimes();
  for (let i = 0; i < 3; i++) await jobsAt(db.db, { runAt: `r${i}` });
  await jobsLocked(db.db, { by: 'w' });
  const times = stop();
  await jobsAt(db.db, { runAt: 'after' });

  const at = times.find((t) => t.sql === jobsAt.compiled(db.db, { runAt: 'x' }).sql);
  const locked = times.find((t) => t.sql === jobsLocked.compiled(db.db, { by: 'x' }).sql);
  assert.equal(at?.calls, 3);
  assert.equal(locked?.calls, 1);
  assert.ok((at?.totalMs ?? -1) > 0);
  assert.equal(times.length, 2, JSON.stringify(times));
  for (let i = 1; i < times.length; i++) {
    assert.ok((times[i - 1]?.totalMs ?? 0) >= (times[i]?.totalMs ?? 0), 'the longest total first');
  }
});

test("a transaction's statements count, on SQLite with its begin and commit", async () => {
  const stop = recordStatementTimes();
  await db.dialect.transaction(db.db, (tx) => jobsAt(tx, { runAt: 'in-tx' }));
  const sqls = stop().map((t) => t.sql);
  assert.ok(sqls.includes(jobsAt.compiled(db.db, { runAt: 'x' }).sql));
  if (db.dialect.name === 'sqlite') {
    assert.ok(sqls.includes('begin immediate'), sqls.join('\n'));
    assert.ok(sqls.includes('commit'), sqls.join('\n'));
  }
});

test('a new recording replaces the last; the replaced one counts nothing more', async () => {
  const first = recordStatementTimes();
  const second = recordStatementTimes();
  await jobsAt(db.db, { runAt: 'second' });
  assert.deepEqual(first(), []);
  assert.equal(second()[0]?.calls, 1);
  await jobsAt(db.db, { runAt: 'none' });
  const third = recordStatementTimes();
  assert.deepEqual(third(), []);
});
