import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ZeroWorkGenerator } from '../bench/dispatch/zero-generator.ts';
import type { GenerationRequest, RunStart } from '../src/generators/index.ts';
import { startTestApp } from './helpers.ts';
import { body3d, until, workerOf } from './worker-kit.ts';

/** The dispatch bench's generator (runs succeed at once with no file), counting the runs each task key got. */
class InstantGenerator extends ZeroWorkGenerator {
  readonly creates = new Map<string, number>();
  override async create(request: GenerationRequest, run: RunStart): Promise<string> {
    this.creates.set(run.key, (this.creates.get(run.key) ?? 0) + 1);
    return super.create(request, run);
  }
}

describe('draining a backlog', () => {
  test('two workers on one queue run every task exactly once and capture each hold once', async () => {
    const generator = new InstantGenerator();
    const t = await startTestApp({ worker: false, generator });
    try {
      await t.admin('PATCH', '/admin/v1/models/model-3d', { max_active: 1000 });
      const { key, id: accountId } = await t.account({ balanceMinor: 1_000_000 });
      const ids: string[] = [];
      for (let i = 0; i < 60; i++) {
        const res = await t.call(key, 'POST', '/v1/tasks', body3d(`teapot ${i}`));
        assert.equal(res.statusCode, 202, res.body);
        ids.push(res.json().id as string);
      }
      // Concurrency 8 claims in gathered batches (a quarter of the slots) while the queue is backlogged.
      const workers = [
        workerOf(t, { generator }, { concurrency: 8 }),
        workerOf(t, { generator }, { concurrency: 8 }),
      ];
      for (const w of workers) w.start();
      const { db } = t.container.db;
      try {
        await until(async () => {
          const left = await db
            .selectFrom('tasks')
            .select('id')
            .where('status', 'in', ['queued', 'running'])
            .execute();
          return left.length === 0;
        }, 'the queue to drain');
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
      }
      const rows = await db.selectFrom('tasks').select(['id', 'status']).where('id', 'in', ids).execute();
      assert.deepEqual(new Set(rows.map((r) => r.status)), new Set(['succeeded']));
      assert.equal(generator.creates.size, ids.length);
      assert.ok(
        [...generator.creates.values()].every((n) => n === 1),
        'a task ran twice',
      );
      const captures = await db
        .selectFrom('ledger_entries')
        .select(['task_id'])
        .where('account_id', '=', accountId)
        .where('type', '=', 'capture')
        .execute();
      assert.equal(captures.length, ids.length);
      assert.equal(new Set(captures.map((c) => c.task_id)).size, ids.length);
      const jobs = await db.selectFrom('jobs').select('id').execute();
      assert.equal(jobs.length, 0);
    } finally {
      await t.close();
    }
  });
});
