import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MINUTE_MS } from '../src/config.ts';
import type { Db } from '../src/db/index.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { balances, startTestApp, waitForFinal } from './helpers.ts';
import { body3d, FakeGenerator, statusOf, taskRow, until, workerOf } from './worker-kit.ts';

describe('run lifecycle', () => {
  test('[10.3] restarts and lease take-overs do not use up the retry budget', async () => {
    const clock = new ManualClock();
    const t = await startTestApp({ clock });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body3d())).json().id;
      // Six graceful stops (SIGTERM) and one lease that ran out while its worker was gone.
      const claimed = async (): Promise<boolean> => {
        const job = await t.container.db.db.selectFrom('jobs').select('locked_by').executeTakeFirst();
        return (await taskRow(t, id)).provider_ref !== null && Boolean(job?.locked_by);
      };
      for (let i = 0; i < 6; i++) {
        await until(claimed, 'a claimed run');
        await t.container.worker.stop();
        t.container.worker.start();
      }
      await until(claimed, 'a claimed run');
      await t.container.worker.stop();
      await t.container.db.db
        .updateTable('jobs')
        .set({ locked_by: 'a-crashed-worker', locked_until: clock.now().toISOString() })
        .execute();
      clock.advance(1_000);
      t.container.worker.start();
      const done = await waitForFinal(t, acct.key, id);
      assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
      assert.equal((await balances(t, acct.id)).balance_minor, 10_000 - 1500);
    } finally {
      await t.close();
    }
  });

  test('[10.4] a generator call that ignores its signal and never answers ends at the deadline: timeout, hold voided', async () => {
    const clock = new ManualClock();
    const generator = new FakeGenerator(clock);
    generator.onStatus = (call) => (call > 1 ? generator.hang() : null);
    const t = await startTestApp({ clock, generator });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body3d())).json().id;
      await until(async () => generator.statusCalls >= 2, 'a stalled poll');
      clock.advance(10 * MINUTE_MS);
      const done = await waitForFinal(t, acct.key, id, 10_000);
      assert.equal(done.status, 'failed');
      assert.equal((done.error as { code: string }).code, 'timeout');
      assert.equal((await balances(t, acct.id)).held_minor, 0);
      assert.equal((await balances(t, acct.id)).available_minor, 10_000);
    } finally {
      generator.releaseAll();
      await t.close();
    }
  });

  test('[10.4] a task resumed after its deadline passed (a long outage) fails with timeout at once, starting nothing', async () => {
    const clock = new ManualClock();
    const generator = new FakeGenerator(clock);
    // The first create stalls until the worker stops: the task is running without a handle.
    generator.onCreate = (call, reached, signal) =>
      call === 1
        ? new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)))
        : reached();
    const t = await startTestApp({ clock, generator });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body3d())).json().id;
      await until(async () => generator.creates === 1, 'a create');
      await t.container.worker.stop();
      clock.advance(60 * MINUTE_MS);
      t.container.worker.start();
      const done = await waitForFinal(t, acct.key, id, 10_000);
      assert.equal(done.status, 'failed');
      assert.equal((done.error as { code: string }).code, 'timeout');
      assert.equal(generator.creates, 1, 'no run is started past the deadline');
      assert.equal((await balances(t, acct.id)).available_minor, 10_000);
    } finally {
      generator.releaseAll();
      await t.close();
    }
  });

  test('[10.7] a task canceled just before it is marked running starts no provider run', async () => {
    const clock = new ManualClock();
    const generator = new FakeGenerator(clock);
    const t = await startTestApp({ clock, generator, worker: false });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body3d())).json().id;
      // The cancel lands after the worker read the queued task and before its first write to it.
      const real = t.container.db;
      // Its first write is the move to running, the second group commit (after the claim's).
      let groupCommits = 0;
      const db: Db = {
        ...real,
        dialect: {
          ...real.dialect,
          groupCommit: async (handle, fn) => {
            groupCommits += 1;
            if (groupCommits === 2) {
              const res = await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`);
              assert.equal(res.statusCode, 200, res.body);
            }
            return real.dialect.groupCommit(handle, fn);
          },
        },
      };
      const worker = workerOf(t, { db, generator });
      try {
        assert.equal(await worker.tick(), 1);
        await until(async () => worker.activeCount === 0, 'the run to end');
      } finally {
        await worker.stop();
      }
      assert.equal(generator.creates, 0, 'no provider run for a canceled task');
      assert.equal((await statusOf(t, acct.key, id)).status, 'canceled');
      assert.equal((await balances(t, acct.id)).available_minor, 10_000);
      const jobs = await real.db.selectFrom('jobs').selectAll().execute();
      assert.deepEqual(jobs, []);
    } finally {
      await t.close();
    }
  });

  test('[10.8] a crash between create and saving the handle never starts a second upstream run', async () => {
    const clock = new ManualClock();
    const generator = new FakeGenerator(clock);
    // The upstream starts the run, then the answer never comes back before the process goes away.
    generator.onCreate = async (call, reached, signal) => {
      const handle = await reached();
      if (call > 1) return handle;
      return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    };
    const t = await startTestApp({ clock, generator });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body3d())).json().id;
      await until(async () => generator.upstreamRuns === 1, 'the upstream run');
      await t.container.worker.stop();
      assert.equal((await taskRow(t, id)).provider_ref, null, 'the handle was never saved');
      clock.advance(1_000);
      t.container.worker.start();
      await until(async () => {
        clock.advance(1_000);
        return (await statusOf(t, acct.key, id)).status === 'succeeded';
      }, 'success');
      assert.equal(generator.upstreamRuns, 1, 'one upstream run');
      assert.equal((await balances(t, acct.id)).balance_minor, 10_000 - 1500);
    } finally {
      generator.releaseAll();
      await t.close();
    }
  });
});
