import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { idsJson } from '../src/db/index.ts';
import { claimJobs, dueQuery } from '../src/worker/queue.ts';
import { startTestApp, type TestApp } from './helpers.ts';

// The claim hands each run its task's row, read in the claim's own transaction, so a run does not read
// it again; a job whose task is gone comes with null, and the run removes the job.

let t: TestApp;
before(async () => {
  t = await startTestApp({ worker: false });
});
after(() => t.close());

test('claimed jobs carry their task rows, as the database holds them; a lost task is null', async () => {
  const acct = await t.account({ balanceMinor: 1_000_000 });
  const ids: string[] = [];
  for (const prompt of ['one', 'two', 'three']) {
    const res = await t.call(acct.key, 'POST', '/v1/tasks', { model: 'image', settings: { prompt } });
    assert.equal(res.statusCode, 202, res.body);
    ids.push(res.json().id as string);
  }
  const { db } = t.container.db;
  // A job left behind by a task that no longer exists (as after a hand-made deletion).
  await db
    .insertInto('jobs')
    .values({ id: 'run-task:lost', task_id: 'lost', run_at: new Date(0).toISOString(), attempts: 0 })
    .execute();
  const jobs = await claimJobs(t.container.db, {
    workerId: 'w',
    limit: 10,
    now: new Date(),
    leaseMs: 30_000,
  });
  assert.equal(jobs.length, 4);
  for (const job of jobs) {
    if (job.taskId === 'lost') {
      assert.equal(job.task, null);
      continue;
    }
    const row = await db
      .selectFrom('tasks')
      .selectAll()
      .where('id', '=', job.taskId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(job.task, row);
    assert.equal(job.task?.status, 'queued');
  }
  assert.deepEqual(
    jobs
      .map((j) => j.taskId)
      .filter((id) => id !== 'lost')
      .sort(),
    [...ids].sort(),
  );
});

test('a claim takes due free jobs oldest first, then jobs whose lease ran out; never live leases or its own', async () => {
  const { db } = t.container.db;
  await db.deleteFrom('jobs').execute();
  const now = new Date();
  const at = (ms: number): string => new Date(now.getTime() + ms).toISOString();
  const job = (id: string, runAt: string, lockedUntil: string | null) => ({
    id,
    task_id: `task-${id}`,
    run_at: runAt,
    locked_by: lockedUntil === null ? null : 'another',
    locked_until: lockedUntil,
    attempts: 0,
  });
  await db
    .insertInto('jobs')
    .values([
      job('free-old', at(-60_000), null),
      job('free-new', at(-1_000), null),
      job('later', at(60_000), null),
      job('held', at(-120_000), at(30_000)),
      job('lapsed', at(-120_000), at(-5_000)),
      job('mine', at(-90_000), null),
    ])
    .execute();
  const claim = (limit: number) =>
    claimJobs(t.container.db, { workerId: 'w', limit, now, leaseMs: 30_000, exclude: ['mine'] });
  assert.deepEqual(
    (await claim(2)).map((j) => j.id),
    ['free-old', 'free-new'],
  );
  assert.deepEqual(
    (await claim(5)).map((j) => j.id),
    ['lapsed'],
  );
  assert.deepEqual(await claim(5), [], 'a live lease, a job not yet due and its own job stay');
  const lapsed = await db.selectFrom('jobs').selectAll().where('id', '=', 'lapsed').executeTakeFirstOrThrow();
  assert.equal(lapsed.locked_by, 'w');
  assert.equal(lapsed.locked_until, at(30_000));
});

test('a claim with nothing due answers from a read, without a write transaction', async () => {
  // Every new task's notice and every run's end ask for a claim, and most find nothing: the write
  // transaction (on SQLite the database's write lock) is taken only when a job is due.
  const { db } = t.container.db;
  await db.deleteFrom('jobs').execute();
  let transactions = 0;
  const real = t.container.db;
  const counted = {
    ...real,
    dialect: {
      ...real.dialect,
      transaction: ((inner, fn) => {
        transactions++;
        return real.dialect.transaction(inner, fn);
      }) as typeof real.dialect.transaction,
      groupCommit: ((inner, fn) => {
        transactions++;
        return real.dialect.groupCommit(inner, fn);
      }) as typeof real.dialect.groupCommit,
    },
  };
  const now = new Date();
  const at = (ms: number): string => new Date(now.getTime() + ms).toISOString();
  await db
    .insertInto('jobs')
    .values([
      { id: 'later', task_id: 'task-later', run_at: at(60_000), attempts: 0 },
      {
        id: 'held',
        task_id: 'task-held',
        run_at: at(-1_000),
        locked_by: 'another',
        locked_until: at(30_000),
        attempts: 0,
      },
      { id: 'mine', task_id: 'task-mine', run_at: at(-1_000), attempts: 0 },
    ])
    .execute();
  const claim = () =>
    claimJobs(counted, { workerId: 'w', limit: 5, now, leaseMs: 30_000, exclude: ['mine'] });
  assert.deepEqual(await claim(), []);
  assert.equal(transactions, 0, 'a job not yet due, a live lease and its own job: no transaction');
  // Once a job is due, the read finds it and the claim takes it in one transaction.
  const becomesDue = async (id: string, change: { locked_until: string } | { run_at: string }) => {
    await db.updateTable('jobs').set(change).where('id', '=', id).execute();
    return (await claim()).map((j) => j.id);
  };
  assert.deepEqual(await becomesDue('held', { locked_until: at(-1) }), ['held'], 'a lapsed lease');
  assert.equal(transactions, 1);
  assert.deepEqual(await becomesDue('later', { run_at: at(-1) }), ['later'], 'a free job now due');
  assert.equal(transactions, 2);
});

test('an account holding its share of the slots leaves the reserve to others, past its own older jobs', async () => {
  const { db } = t.container.db;
  await db.deleteFrom('jobs').execute();
  assert.equal((await t.admin('PATCH', '/admin/v1/models/image', { max_active: 100 })).statusCode, 200);
  try {
    const heavy = await t.account({ balanceMinor: 10_000_000 });
    const other = await t.account({ balanceMinor: 1_000_000 });
    const create = async (key: string, prompt: string): Promise<string> => {
      const res = await t.call(key, 'POST', '/v1/tasks', { model: 'image', settings: { prompt } });
      assert.equal(res.statusCode, 202, res.body);
      return res.json().id as string;
    };
    const heavyTasks: string[] = [];
    for (let i = 0; i < 12; i++) heavyTasks.push(await create(heavy.key, `heavy ${i}`));
    const otherTask = await create(other.key, 'other');
    const claim = (shares?: Parameters<typeof claimJobs>[1]['shares']) =>
      claimJobs(t.container.db, { workerId: 'w', limit: 4, now: new Date(), leaseMs: 30_000, shares });
    // The heavy account already runs 2 here (its share): of 4 free slots it takes the 2 outside the
    // reserve, oldest first; the other account's job, behind ten more of the heavy one's, gets the reserve.
    const taken = await claim({ running: new Map([[heavy.id, 2]]), share: 2, reserve: 2 });
    assert.deepEqual(
      taken.map((j) => j.taskId),
      [heavyTasks[0], heavyTasks[1], otherTask],
    );
    assert.equal(taken[2]?.task?.account_id, other.id);
    // Without shares, or under its share, the queue's order alone: the heavy account's next four.
    assert.deepEqual(
      (await claim()).map((j) => j.taskId),
      heavyTasks.slice(2, 6),
    );
    assert.deepEqual(
      (await claim({ running: new Map([[heavy.id, 1]]), share: 2, reserve: 2 })).map((j) => j.taskId),
      heavyTasks.slice(6, 8),
      'the two slots outside the reserve (the first within its share); the reserve stays free',
    );
  } finally {
    await t.admin('PATCH', '/admin/v1/models/image', { max_active: null });
  }
});

test('a claim reads the due jobs in their index order, whatever the statistics of jobs say', async () => {
  // PostgreSQL plans the claim's read from the statistics of `jobs`; after a burst of tasks that autovacuum
  // has not analyzed yet it read every due job through a bitmap and sorted them all to take the first
  // (docs/performance.md, "A twenty-fifth session"). The claim's transaction turns bitmap scans off.
  const real = t.container.db;
  const { db } = real;
  const options: unknown[] = [];
  const seen = {
    ...real,
    dialect: {
      ...real.dialect,
      groupCommit: ((inner, fn, given) => {
        options.push(given);
        return real.dialect.groupCommit(inner, fn, given);
      }) as typeof real.dialect.groupCommit,
    },
  };
  await db.deleteFrom('jobs').execute();
  const postgres = real.dialect.name === 'postgres';
  // The statistics of an empty table, then 3,000 due jobs; autovacuum kept off the table meanwhile, so that
  // it cannot analyze the burst before the plans below are read.
  if (postgres)
    await sql`alter table jobs set (autovacuum_enabled = off); truncate jobs; analyze jobs`.execute(db);
  const now = new Date();
  const runAt = (i: number): string => new Date(now.getTime() - 60_000 + i).toISOString();
  const ids = Array.from({ length: 3_000 }, (_, i) => `burst-${String(i).padStart(4, '0')}`);
  for (let from = 0; from < ids.length; from += 500) {
    await db
      .insertInto('jobs')
      .values(
        ids
          .slice(from, from + 500)
          .map((id, k) => ({ id, task_id: `t-${id}`, run_at: runAt(from + k), attempts: 0 })),
      )
      .execute();
  }
  const claimed = await claimJobs(seen, { workerId: 'w', limit: 64, now, leaseMs: 30_000, expectDue: true });
  assert.deepEqual(
    claimed.map((job) => job.id),
    ids.slice(0, 64),
    'the 64 oldest',
  );
  assert.deepEqual(options, [{ orderedReads: true }]);
  if (postgres) {
    const planOf = (given?: { orderedReads: boolean }) =>
      real.dialect.groupCommit(
        db,
        async (tx) => {
          const query = dueQuery(false, true, false).compiled(tx, {
            now: now.toISOString(),
            limit: 64,
            exclude: idsJson(ids.slice(0, 64)),
            capped: '[]',
          });
          const { rows } = await tx.executeQuery<{ 'QUERY PLAN': string }>(
            CompiledQuery.raw(`explain ${query.sql}`, [...query.parameters]),
          );
          const setting = await sql<{ enable_bitmapscan: string }>`show enable_bitmapscan`.execute(tx);
          return {
            plan: rows.map((row) => row['QUERY PLAN']).join('\n'),
            bitmaps: setting.rows[0]?.enable_bitmapscan,
          };
        },
        given,
      );
    const ordered = await planOf({ orderedReads: true });
    assert.equal(ordered.bitmaps, 'off');
    assert.match(ordered.plan, /Index Scan using jobs_free/);
    assert.doesNotMatch(ordered.plan, /Bitmap|Sort/);
    // Local to that transaction: the next one on the pool plans as it always did, which here is the
    // gathering and the sort the setting avoids.
    const plain = await planOf();
    assert.equal(plain.bitmaps, 'on');
    assert.match(plain.plan, /Bitmap Index Scan on jobs_free/);
    assert.match(plain.plan, /Sort/);
    await sql`alter table jobs reset (autovacuum_enabled)`.execute(db);
  }
  await db.deleteFrom('jobs').execute();
});
