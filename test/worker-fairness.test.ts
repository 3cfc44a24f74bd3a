/**
 * CONTRACT §3: "a slow task never holds up others". One account's long runs may fill a worker's slots
 * only up to the reserve (a quarter of them), so another account's task starts at once, even behind more
 * of the first account's queued tasks (the noisy neighbour).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ZeroWorkGenerator } from '../bench/dispatch/zero-generator.ts';
import type { GenerationRequest, GenerationStatus } from '../src/generators/index.ts';
import { startTestApp } from './helpers.ts';
import { body3d, until, workerOf } from './worker-kit.ts';

/** Runs whose prompt says `long` stay running until the test ends; the others succeed at once. */
class LongRunsGenerator extends ZeroWorkGenerator {
  override async status(_handle: string, request: GenerationRequest): Promise<GenerationStatus> {
    return String(request.settings.prompt).startsWith('long')
      ? { state: 'running', progress: 10, pollAfterMs: 200 }
      : { state: 'succeeded' };
  }
}

test("another account's task starts at once while one account's long runs fill what they may", async () => {
  const generator = new LongRunsGenerator();
  const t = await startTestApp({ worker: false, generator });
  const worker = workerOf(t, { generator }, { concurrency: 8 });
  try {
    await t.admin('PATCH', '/admin/v1/models/model-3d', { max_active: 100 });
    const heavy = await t.account({ balanceMinor: 10_000_000 });
    const other = await t.account({ balanceMinor: 1_000_000 });
    for (let i = 0; i < 20; i++) {
      const res = await t.call(heavy.key, 'POST', '/v1/tasks', body3d(`long ${i}`));
      assert.equal(res.statusCode, 202, res.body);
    }
    worker.start();
    const { db } = t.container.db;
    const running = async (accountId: string): Promise<number> =>
      (
        await db
          .selectFrom('tasks')
          .select('id')
          .where('account_id', '=', accountId)
          .where('status', '=', 'running')
          .execute()
      ).length;
    // All but the reserve (8 / 4 = 2 slots): the rest of its 20 stay queued.
    await until(async () => (await running(heavy.id)) === 6, "the heavy account's runs to start");
    const res = await t.call(other.key, 'POST', '/v1/tasks', body3d('quick'));
    assert.equal(res.statusCode, 202, res.body);
    const id = res.json().id as string;
    await until(async () => {
      const task = await t.call(other.key, 'GET', `/v1/tasks/${id}`);
      return task.json().status === 'succeeded';
    }, "the other account's task to run");
    assert.equal(await running(heavy.id), 6, 'the heavy account never took the reserve');
  } finally {
    await worker.stop();
    await t.close();
  }
});
