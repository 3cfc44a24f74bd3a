import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { SIM_MARKERS } from '../src/generators/index.ts';
import { startTestApp } from './helpers.ts';
import { exited, ROOT, type Server, startWorker } from './processes.ts';
import { body3d, until } from './worker-kit.ts';

const workerIdOf = (server: Server): string => {
  const id = /"worker":"([^"]+)"/.exec(server.output())?.[1];
  assert.ok(id, server.output());
  return id;
};

describe('clocks', () => {
  test('[10.5] a worker whose clock is 30 s ahead does not take over a live worker’s job', async () => {
    const t = await startTestApp({ worker: false });
    const { config } = t.container;
    const env = {
      DATABASE_URL: config.databaseUrl,
      STORAGE_URL: config.storageUrl,
      DATA_DIR: t.dir,
      SIM_SPEED: '100',
      JOB_LEASE: '10s',
      RENDER_THREADS: '0',
    };
    const workers: Server[] = [];
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      // About 18 s of work: long enough to watch both workers while it runs.
      const created = await t.call(acct.key, 'POST', '/v1/tasks', body3d(`slow ${SIM_MARKERS.slow}`));
      assert.equal(created.statusCode, 202, created.body);
      const id = created.json().id as string;
      const jobOwner = async (): Promise<string | null> =>
        (await t.container.db.db.selectFrom('jobs').select('locked_by').executeTakeFirst())?.locked_by ??
        null;

      workers.push(await startWorker(env));
      const live = workerIdOf(workers[0] as Server);
      await until(async () => (await jobOwner()) === live, 'the first worker to claim the task');

      const ahead = await startWorker({
        ...env,
        NODE_OPTIONS: `--import ${path.join(ROOT, 'test/skewed-clock.ts')}`,
        TEST_CLOCK_SKEW_MS: '30000',
      });
      workers.push(ahead);
      // The second worker polls every second; give it several chances to misjudge the lease.
      for (let i = 0; i < 20; i++) {
        assert.equal(await jobOwner(), live, 'the live worker keeps its job');
        await new Promise((r) => setTimeout(r, 250));
      }
      assert.equal((await t.call(acct.key, 'GET', `/v1/tasks/${id}`)).json().status, 'running');
      assert.equal((await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`)).statusCode, 200);
    } finally {
      for (const w of workers) w.child.kill('SIGTERM');
      for (const w of workers) await exited(w.child);
      await t.close();
    }
  });
});
