/**
 * Fault injection: generator errors, hangs and 429s, and a storage whose put fails or hangs. Every test ends
 * with its tasks final; `close()` checks that the ledger is whole.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { MINUTE_MS } from '../src/config.ts';
import { GeneratorTransientError, SIM_MARKERS } from '../src/generators/index.ts';
import { FLAKY_FAILURES } from '../src/generators/simulator/simulator.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { StorageError } from '../src/storage/index.ts';
import { testChannels } from './channel-adapters.ts';
import { balances, startTestApp, type TestApp, waitForFinal } from './helpers.ts';
import { body3d, FakeGenerator, FaultyStore, statusOf, until, workerOf } from './worker-kit.ts';

const codeOf = (task: Record<string, unknown>): string | undefined =>
  (task.error as { code?: string } | undefined)?.code;

/**
 * Moves a manual clock on until the task is final (backoff delays and deadlines are on that clock): to the
 * moment its job is due again when the worker has put it off, otherwise by `stepMs` (what a run in progress
 * needs, 0 when it needs no time), so a slow worker never sees the clock run past a deadline it would not
 * have reached.
 */
async function finalWithClock(
  t: TestApp,
  clock: ManualClock,
  key: string,
  id: string,
  stepMs = 5_000,
): Promise<Record<string, unknown> & { status: string; error?: { code: string } }> {
  await until(async () => {
    const job = await t.container.db.db
      .selectFrom('jobs')
      .select(['run_at', 'locked_by'])
      .where('task_id', '=', id)
      .executeTakeFirst();
    const due = job && job.locked_by === null ? Date.parse(job.run_at) : null;
    if (due !== null && due > clock.now().getTime()) clock.set(new Date(due));
    else clock.advance(stepMs);
    return ['succeeded', 'failed', 'canceled'].includes((await statusOf(t, key, id)).status);
  }, `task ${id} to end`);
  return statusOf(t, key, id);
}

/** Keys a store received that no artifact row points at must be gone (no orphaned bytes). */
async function assertNoOrphans(t: TestApp, store: FaultyStore): Promise<void> {
  const kept = new Set(
    (await t.container.db.db.selectFrom('artifacts').select('storage_key').execute()).map(
      (a) => a.storage_key,
    ),
  );
  for (const key of store.stored) {
    if (!kept.has(key)) assert.equal(await store.inner.stat(key), null, `${key} was left behind`);
  }
}

describe('generator faults', () => {
  test('[sim:fail] and [sim:refuse] end failed with their codes, costing nothing', async () => {
    const t = await startTestApp();
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const failed = (await t.call(acct.key, 'POST', '/v1/tasks', body3d(`x ${SIM_MARKERS.fail}`))).json().id;
      const refused = (await t.call(acct.key, 'POST', '/v1/tasks', body3d(`x ${SIM_MARKERS.refuse}`))).json()
        .id;
      assert.equal(codeOf(await waitForFinal(t, acct.key, failed)), 'generation_failed');
      assert.equal(codeOf(await waitForFinal(t, acct.key, refused)), 'content_refused');
      assert.equal((await balances(t, acct.id)).available_minor, 10_000);
    } finally {
      await t.close();
    }
  });

  test('[sim:hang]: calls that never answer and ignore the signal end at the deadline with timeout', async () => {
    const clock = new ManualClock();
    const t = await startTestApp({ clock });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body3d(`x ${SIM_MARKERS.hang}`))).json().id;
      await until(async () => (await statusOf(t, acct.key, id)).status === 'running', 'running');
      clock.advance(10 * MINUTE_MS);
      const done = await waitForFinal(t, acct.key, id, 10_000);
      assert.equal(done.status, 'failed');
      assert.equal(codeOf(done), 'timeout');
      assert.equal((await balances(t, acct.id)).available_minor, 10_000);
    } finally {
      await t.close();
    }
  });

  test('[sim:flaky]: create and status answer 429 a few times; the worker backs off and the task succeeds once', async () => {
    // The real clock: polls that fail are asked again after a real backoff, in place.
    const t = await startTestApp();
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body3d(`x ${SIM_MARKERS.flaky}`))).json().id;
      const done = await waitForFinal(t, acct.key, id, 30_000);
      assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
      const job = await t.container.db.db.selectFrom('jobs').selectAll().execute();
      assert.deepEqual(job, []);
      assert.equal((await balances(t, acct.id)).balance_minor, 10_000 - 1500);
    } finally {
      await t.close();
    }
  });

  test('[sim:flaky] on a simulator channel: the failed creates show on the channel and the task succeeds', async () => {
    // On a channel each retry is a new run under a new run key: counted per run key, every create of the
    // task was its run's first and failed, until the task ended `generation_failed` after its attempts.
    const t = await startTestApp({
      channels: testChannels([{ name: 'sim-fast', provider: 'simulator', models: ['model-3d'] }]),
    });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body3d(`x ${SIM_MARKERS.flaky}`))).json().id;
      const done = await waitForFinal(t, acct.key, id, 30_000);
      assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
      const channel = (await t.container.services.channels.views()).find((c) => c.name === 'sim-fast');
      assert.equal(channel?.failed, FLAKY_FAILURES);
      assert.match(String(channel?.last_error), /simulated 429/);
      assert.equal((await balances(t, acct.id)).balance_minor, 10_000 - 1500);
    } finally {
      await t.close();
    }
  });

  test('a generator that answers 429 to every create fails the task with generation_failed after its attempts', async () => {
    const clock = new ManualClock();
    const generator = new FakeGenerator(clock);
    generator.onCreate = () => Promise.reject(new GeneratorTransientError('429 too many requests'));
    const t = await startTestApp({ clock, generator });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body3d())).json().id;
      const done = await finalWithClock(t, clock, acct.key, id, 0);
      assert.equal(done.error?.code, 'generation_failed');
      assert.equal(generator.creates, 5);
      assert.equal((await balances(t, acct.id)).available_minor, 10_000);
    } finally {
      await t.close();
    }
  });

  test("a provider's Retry-After of a day puts the retry off by 5 minutes at most", async () => {
    // Honoured whole, it would keep the task queued and its hold taken for a day, with nothing to end it.
    const clock = new ManualClock();
    const generator = new FakeGenerator(clock);
    generator.onCreate = (call, reached) =>
      call === 1
        ? Promise.reject(new GeneratorTransientError('429 slow down', { retryAfterMs: 24 * 60 * MINUTE_MS }))
        : reached();
    const t = await startTestApp({ clock, generator });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body3d())).json().id;
      let runAt = '';
      await until(async () => {
        const job = await t.container.db.db
          .selectFrom('jobs')
          .select('run_at')
          .where('task_id', '=', id)
          .where('attempts', '=', 1)
          .where('locked_by', 'is', null)
          .executeTakeFirst();
        runAt = job?.run_at ?? '';
        return job !== undefined;
      }, 'the first attempt to fail');
      assert.ok(Date.parse(runAt) - clock.now().getTime() <= 5 * MINUTE_MS, runAt);
      // Resumed then, the run ends (here past the simulator's short deadline) and nothing stays held.
      await finalWithClock(t, clock, acct.key, id, 1_000);
      assert.equal((await balances(t, acct.id)).held_minor, 0);
    } finally {
      await t.close();
    }
  });

  test('a generator that throws a programming error fails the task at once, without retries', async () => {
    const clock = new ManualClock();
    const generator = new FakeGenerator(clock);
    generator.onCreate = () => Promise.reject(new TypeError('cannot read properties of undefined'));
    const t = await startTestApp({ clock, generator });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body3d())).json().id;
      const done = await finalWithClock(t, clock, acct.key, id, 1_000);
      assert.equal(done.error?.code, 'generation_failed');
      assert.equal(generator.creates, 1);
    } finally {
      await t.close();
    }
  });
});

describe('storage faults', () => {
  /** A 3D task whose first run meets `fault` on its puts: the retried run succeeds and no object is left. */
  async function succeedsPastPutFault(
    fault: (store: FaultyStore) => FaultyStore['onPut'],
    stored: string,
  ): Promise<void> {
    const clock = new ManualClock();
    const t = await startTestApp({ clock, worker: false });
    const store = new FaultyStore(t.container.storage);
    store.onPut = fault(store);
    const worker = workerOf(t, { storage: store });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body3d())).json().id;
      worker.start();
      const done = await finalWithClock(t, clock, acct.key, id, 1_000);
      assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
      await worker.stop();
      assert.ok(store.stored.length >= 3, stored);
      await assertNoOrphans(t, store);
    } finally {
      await worker.stop();
      await t.close();
    }
  }

  test('[10.9] files stored before a put fails (500) are deleted, and the retried run succeeds', () =>
    succeedsPastPutFault(
      () => (call) =>
        call === 2 ? Promise.reject(new StorageError('S3 put failed: 500 InternalError')) : null,
      'one file of the broken run, two of the good one',
    ));

  test('a put that fails after the store wrote the object (a late answer) leaves no bytes', () =>
    succeedsPastPutFault(
      // The object lands, then the call fails, as a request that timed out while the server was slow.
      (store) => (call, key) =>
        call === 1
          ? store.inner.put(key, Readable.from([Buffer.from('late')])).then(() => {
              store.stored.push(key);
              throw new StorageError('S3 put failed: TimeoutError');
            })
          : null,
      'the late object of the broken run, two of the good one',
    ));

  test('[10.9] files stored before a put hangs are deleted when the deadline ends the run', async () => {
    const clock = new ManualClock();
    const t = await startTestApp({ clock, worker: false });
    const store = new FaultyStore(t.container.storage);
    const generator = new FakeGenerator(clock);
    store.onPut = (call) => (call === 2 ? generator.hang() : null);
    const worker = workerOf(t, { storage: store });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body3d())).json().id;
      worker.start();
      await until(async () => {
        clock.advance(100);
        return store.puts >= 2;
      }, 'the second put');
      clock.advance(10 * MINUTE_MS);
      const done = await waitForFinal(t, acct.key, id, 10_000);
      assert.equal(done.status, 'failed');
      assert.equal((done.error as { code: string }).code, 'timeout');
      await assertNoOrphans(t, store);
      assert.equal((await balances(t, acct.id)).available_minor, 10_000);
    } finally {
      generator.releaseAll();
      await worker.stop();
      await t.close();
    }
  });

  test('files stored before a cancel wins the race to finish are deleted', async () => {
    const t = await startTestApp({ worker: false });
    const store = new FaultyStore(t.container.storage);
    const worker = workerOf(t, { storage: store });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body3d())).json().id;
      store.beforePut = async (call) => {
        if (call === 2)
          assert.equal((await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`)).statusCode, 200);
      };
      worker.start();
      await until(async () => store.stored.length === 2 && worker.activeCount === 0, 'the finish to end');
      assert.equal((await statusOf(t, acct.key, id)).status, 'canceled');
      await assertNoOrphans(t, store);
      assert.equal((await balances(t, acct.id)).available_minor, 10_000);
    } finally {
      await worker.stop();
      await t.close();
    }
  });

  test('a storage outage longer than the attempts: the run waits without using them up, then succeeds', async () => {
    const clock = new ManualClock();
    const t = await startTestApp({ clock, worker: false });
    const store = new FaultyStore(t.container.storage);
    // Down for four puts (each run's first), more than the three attempts allow, then back.
    store.onPut = (call) => (call <= 4 ? Promise.reject(new StorageError('S3 put failed: 503')) : null);
    const worker = workerOf(t, { storage: store }, { maxAttempts: 3 });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body3d())).json().id;
      worker.start();
      // Small steps while a run is in progress, so its deadline (about a minute) stays far.
      const done = await finalWithClock(t, clock, acct.key, id, 200);
      assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
      assert.equal(store.puts, 6, 'four failed runs of one put, then one of two');
      await worker.stop();
      await assertNoOrphans(t, store);
    } finally {
      await worker.stop();
      await t.close();
    }
  });

  test('a storage that never comes back: the task ends with timeout at its deadline, no files, no charge', async () => {
    const clock = new ManualClock();
    const t = await startTestApp({ clock, worker: false });
    const store = new FaultyStore(t.container.storage);
    store.onPut = (call) => (call % 2 === 0 ? Promise.reject(new StorageError('S3 put failed: 503')) : null);
    const worker = workerOf(t, { storage: store }, { maxAttempts: 3 });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body3d())).json().id;
      worker.start();
      // Small steps, as above: each run gets little of the deadline's minute however slow the host, so more
      // than three runs fit in it (with seconds-long steps, a loaded host fitted only two).
      const done = await finalWithClock(t, clock, acct.key, id, 200);
      assert.equal(codeOf(done), 'timeout');
      assert.ok(store.puts > 6, `${store.puts} puts: more than three attempts of two files`);
      await worker.stop();
      await assertNoOrphans(t, store);
      assert.equal((await balances(t, acct.id)).available_minor, 10_000);
    } finally {
      await worker.stop();
      await t.close();
    }
  });
});
