import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { claimJobs } from '../src/worker/queue.ts';
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
