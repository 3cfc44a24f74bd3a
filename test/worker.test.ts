import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HOUR_MS, MINUTE_MS } from '../src/config.ts';
import {
  type GenerationStatus,
  type Generator,
  GeneratorTransientError,
  Simulator,
} from '../src/generators/index.ts';
import { type Clock, ManualClock } from '../src/lib/clock.ts';
import { balances, expectError, startTestApp, type TestApp, waitForFinal } from './helpers.ts';

const body = (prompt = 'a teapot') => ({
  model: 'model-3d',
  settings: { task_type: 'text_to_model', prompt, texture: false, pbr: false },
});

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function statusOf(
  t: TestApp,
  key: string,
  id: string,
): Promise<Record<string, unknown> & { status: string }> {
  return (await t.call(key, 'GET', `/v1/tasks/${id}`)).json();
}

/** A generator that never finishes, or breaks a set number of times before delegating to the simulator. */
function flakyGenerator(
  clock: Clock,
  options: { breakTimes?: number; hang?: boolean },
): Generator & { creates: number } {
  const sim = new Simulator({ clock, simSpeed: 1000 });
  let breaks = options.breakTimes ?? 0;
  return {
    creates: 0,
    ensureAvailable: (r) => sim.ensureAvailable(r),
    async create(request, run) {
      this.creates += 1;
      if (breaks > 0) {
        breaks -= 1;
        throw new GeneratorTransientError('connection reset by the provider');
      }
      return sim.create(request, run);
    },
    // The broken creates never reached the provider, so there is no earlier run to find.
    find: async () => null,
    async status(handle): Promise<GenerationStatus> {
      if (options.hang) return { state: 'running', progress: 42, pollAfterMs: 20 };
      return sim.status(handle);
    },
    outputs: (handle, request, dir, signal) => sim.outputs(handle, request, dir, signal),
    cancel: () => sim.cancel(),
  };
}

describe('worker', () => {
  test('a run past its deadline fails with timeout and its hold is voided', async () => {
    const clock = new ManualClock();
    const t = await startTestApp({ clock, generator: flakyGenerator(clock, { hang: true }) });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body())).json().id;
      await until(async () => (await statusOf(t, acct.key, id)).progress === 42, 'progress');
      clock.advance(10 * MINUTE_MS);
      const done = await waitForFinal(t, acct.key, id);
      assert.equal(done.status, 'failed');
      assert.equal((done.error as { code: string }).code, 'timeout');
      assert.equal((await balances(t, acct.id)).available_minor, 10_000);
    } finally {
      await t.close();
    }
  });

  test('the host’s clock set hours forward or back moves no running task’s deadline', async () => {
    // Real time, with a wall clock that can be set: the deadline counts monotonic time.
    let setByMs = 0;
    const clock: Clock = { now: () => new Date(Date.now() + setByMs) };
    const t = await startTestApp({ clock, generator: flakyGenerator(clock, { hang: true }) });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body())).json().id;
      await until(async () => (await statusOf(t, acct.key, id)).progress === 42, 'progress');
      for (const jump of [3 * HOUR_MS, -6 * HOUR_MS]) {
        setByMs += jump;
        // The deadline is looked at every second.
        await new Promise((r) => setTimeout(r, 1_500));
        assert.equal((await statusOf(t, acct.key, id)).status, 'running', `clock set by ${jump} ms`);
      }
      assert.equal((await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`)).statusCode, 200);
    } finally {
      await t.close();
    }
  });

  test('a run that breaks on our side is retried with backoff and then succeeds, charged once', async () => {
    const clock = new ManualClock();
    const generator = flakyGenerator(clock, { breakTimes: 2 });
    const t = await startTestApp({ clock, generator });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body())).json().id;
      // A second of the run's clock a turn, the backoff's steps (1 s, 2 s): on a busy machine, bigger
      // steps could carry the clock past the run's deadline before the worker had its turns.
      await until(
        async () => {
          clock.advance(1_000);
          const task = await statusOf(t, acct.key, id);
          assert.notEqual(task.status, 'failed', JSON.stringify(task));
          return task.status === 'succeeded';
        },
        'success after retries',
        30_000,
      );
      assert.equal(generator.creates, 3);
      const b = await balances(t, acct.id);
      assert.equal(b.held_minor, 0);
      assert.equal(b.balance_minor, 10_000 - 1500);
    } finally {
      await t.close();
    }
  });

  test('a run that keeps breaking fails with generation_failed after the last attempt, costing nothing', async () => {
    const clock = new ManualClock();
    const t = await startTestApp({ clock, generator: flakyGenerator(clock, { breakTimes: 100 }) });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body())).json().id;
      await until(async () => {
        clock.advance(5_000);
        return (await statusOf(t, acct.key, id)).status === 'failed';
      }, 'failure');
      assert.equal(((await statusOf(t, acct.key, id)).error as { code: string }).code, 'generation_failed');
      assert.equal((await balances(t, acct.id)).available_minor, 10_000);
    } finally {
      await t.close();
    }
  });

  test('a stopping worker gives its jobs back; a started worker resumes the run from its handle', async () => {
    const clock = new ManualClock();
    const t = await startTestApp({ clock });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body())).json().id;
      await until(async () => (await statusOf(t, acct.key, id)).status === 'running', 'running');
      await t.container.worker.stop();
      const job = await t.container.db.db
        .selectFrom('jobs')
        .selectAll()
        .where('task_id', '=', id)
        .executeTakeFirst();
      assert.equal(job?.locked_by, null, 'the lease is released at once');
      const task = await t.container.db.db
        .selectFrom('tasks')
        .select(['provider_ref', 'status'])
        .where('id', '=', id)
        .executeTakeFirst();
      assert.equal(task?.status, 'running');
      assert.ok(task?.provider_ref);
      clock.advance(1_000);
      t.container.worker.start();
      assert.equal((await waitForFinal(t, acct.key, id)).status, 'succeeded');
    } finally {
      await t.close();
    }
  });

  test('progress is reported while a task runs', async () => {
    const clock = new ManualClock();
    const t = await startTestApp({ clock });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body())).json().id;
      await until(async () => (await statusOf(t, acct.key, id)).status === 'running', 'running');
      clock.advance(90);
      await until(async () => Number((await statusOf(t, acct.key, id)).progress) >= 40, 'progress');
      const running = await statusOf(t, acct.key, id);
      assert.ok(Number(running.progress) < 100);
      assert.ok(running.started_at);
      clock.advance(MINUTE_MS);
      const done = await waitForFinal(t, acct.key, id);
      assert.equal(done.progress, 100);
    } finally {
      await t.close();
    }
  });
});

describe('result retention', () => {
  test('after RESULT_RETENTION files_expired is true, downloads are 404 artifact_expired and the sweeper removes the files', async () => {
    const clock = new ManualClock();
    const t = await startTestApp({ clock, env: { RESULT_RETENTION: '2h' } });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body())).json().id;
      await until(async () => (await statusOf(t, acct.key, id)).status === 'running', 'running');
      clock.advance(MINUTE_MS);
      const done = await waitForFinal(t, acct.key, id);
      const result = done.result as {
        files_expire_at: string;
        files_expired: boolean;
        artifacts: Array<{ download_path: string }>;
      };
      assert.equal(Date.parse(result.files_expire_at) - Date.parse(String(done.finished_at)), 2 * HOUR_MS);
      assert.equal(result.files_expired, false);
      const fresh = await t.call(acct.key, 'GET', result.artifacts[0]!.download_path);
      assert.equal(fresh.statusCode, 200, fresh.body.slice(0, 300));
      assert.equal(fresh.headers['cache-control'], 'private, max-age=3600');

      clock.advance(2 * HOUR_MS - 10_000);
      const last = await t.call(acct.key, 'GET', result.artifacts[0]!.download_path);
      assert.equal(last.statusCode, 200);
      assert.equal(last.headers['cache-control'], 'private, max-age=10', 'no cache keeps it past expiry');
      clock.advance(10_001);
      const later = (await statusOf(t, acct.key, id)).result as { files_expired: boolean };
      assert.equal(later.files_expired, true);
      expectError(await t.call(acct.key, 'GET', result.artifacts[0]!.download_path), 404, 'artifact_expired');

      assert.equal(await t.container.sweeper.sweepOnce(), 1);
      assert.equal(await t.container.sweeper.sweepOnce(), 0, 'an expired task is swept once');
      const keys = await t.container.db.db
        .selectFrom('artifacts')
        .select('storage_key')
        .where('task_id', '=', id)
        .execute();
      for (const { storage_key } of keys) assert.equal(await t.container.storage.stat(storage_key), null);
      expectError(await t.call(acct.key, 'GET', result.artifacts[0]!.download_path), 404, 'artifact_expired');
    } finally {
      await t.close();
    }
  });
});

describe('GET /v1/tasks', () => {
  test('lists the caller’s tasks newest first with cursor pagination and filters', async () => {
    const clock = new ManualClock();
    const t = await startTestApp({ clock, worker: false });
    try {
      const acct = await t.account({ balanceMinor: 100_000 });
      const other = await t.account({ balanceMinor: 100_000 });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        clock.advance(1000);
        ids.push((await t.call(acct.key, 'POST', '/v1/tasks', body(`t${i}`))).json().id);
      }
      await t.call(other.key, 'POST', '/v1/tasks', body('not mine'));
      await t.call(acct.key, 'POST', `/v1/tasks/${ids[1]}/cancel`);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const url: string = `/v1/tasks?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
        const page = (await t.call(acct.key, 'GET', url)).json() as {
          tasks: Array<{ id: string }>;
          next_cursor: string | null;
        };
        assert.ok(page.tasks.length <= 2);
        seen.push(...page.tasks.map((x) => x.id));
        cursor = page.next_cursor;
      } while (cursor);
      assert.deepEqual(seen, [...ids].reverse());
      const canceled = (await t.call(acct.key, 'GET', '/v1/tasks?status=canceled')).json();
      assert.deepEqual(
        canceled.tasks.map((x: { id: string }) => x.id),
        [ids[1]],
      );
      assert.equal((await t.call(acct.key, 'GET', '/v1/tasks?model=music')).json().tasks.length, 0);
      assert.equal((await t.call(acct.key, 'GET', '/v1/tasks')).json().tasks.length, 5);
      expectError(await t.call(acct.key, 'GET', '/v1/tasks?limit=0'), 422, 'invalid_request');
      // A limit is a whole number in decimal digits: other ways of writing a number are not guessed at.
      for (const limit of ['0x2', '2e0', '%202', '2.0', '+2', '0b10'])
        expectError(await t.call(acct.key, 'GET', `/v1/tasks?limit=${limit}`), 422, 'invalid_request');
      assert.equal((await t.call(acct.key, 'GET', '/v1/tasks?limit=02')).json().tasks.length, 2);
      // An empty limit is none given, as an empty filter is no filter: the default page.
      const empty = await t.call(acct.key, 'GET', '/v1/tasks?limit=&model=&cursor=');
      assert.equal(empty.statusCode, 200, empty.body);
      assert.equal(empty.json().tasks.length, 5);
      const emptyStatus = await t.call(acct.key, 'GET', '/v1/tasks?status=&model=');
      assert.equal(emptyStatus.statusCode, 200, emptyStatus.body);
      assert.equal(emptyStatus.json().tasks.length, 5);
      expectError(await t.call(acct.key, 'GET', '/v1/tasks?limit=+'), 422, 'invalid_request');
      expectError(await t.call(acct.key, 'GET', '/v1/tasks?limit=101'), 422, 'invalid_request');
      // A limit far past the bound is told the bound, not JavaScript's largest safe integer.
      const huge = await t.call(acct.key, 'GET', '/v1/tasks?limit=100000000000000000000');
      expectError(huge, 422, 'invalid_request');
      assert.match(huge.json().error.message, /\b100\b/);
      assert.doesNotMatch(huge.json().error.message, /9007199254740991/);
      expectError(await t.call(acct.key, 'GET', '/v1/tasks?status=done'), 422, 'invalid_request');
      expectError(await t.call(acct.key, 'GET', '/v1/tasks?cursor=zzz'), 422, 'invalid_request');
    } finally {
      await t.close();
    }
  });
});
