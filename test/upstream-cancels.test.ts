/**
 * Upstream cancels owed by canceled tasks (src/worker/upstream-cancels.ts, CONTRACT §11): a caller's cancel
 * of a task whose run has an upstream task owes the provider a cancel from the cancel's own commit on; one
 * pass asks the generator with the run's handle; a provider that cannot be asked is asked again later, for a
 * day at most; a refusal for good, or a run the provider no longer knows, ends the attempts; two passes at
 * once ask once; a task canceled before its run reached the provider owes nothing. Runs on SQLite, or on
 * PostgreSQL with TEST_DATABASE_URL.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { GenerationError, GeneratorUnavailable, UpstreamRunLost } from '../src/generators/index.ts';
import { ManualClock } from '../src/lib/clock.ts';
import {
  cancelUpstreamRuns,
  UPSTREAM_CANCEL_GIVE_UP_MS,
  UPSTREAM_CANCEL_RETRY_MS,
} from '../src/worker/upstream-cancels.ts';
import { upstreamCancelAt } from './channel-adapters.ts';
import { startTestApp, type TestAccount, type TestApp } from './helpers.ts';

let t: TestApp;
let account: TestAccount;
const clock = new ManualClock('2026-06-01T12:00:00.000Z');

/** A generator whose cancels the test answers; it records the handles it was asked to cancel. */
class CancelingGenerator {
  asked: string[] = [];
  failWith: Error | null = null;
  async cancel(handle: string): Promise<void> {
    this.asked.push(handle);
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (this.failWith) throw this.failWith;
  }
}

let generator: CancelingGenerator;

function deps(onGiveUp?: (id: string, error: unknown) => void) {
  return { db: t.container.db, clock, generator, ...(onGiveUp ? { onGiveUp } : {}) };
}

/** A task accepted over HTTP; with `handle`, its run reached the provider (as a worker records it). */
async function task(handle: string | null): Promise<string> {
  const res = await t.call(account.key, 'POST', '/v1/tasks', {
    model: 'model-3d',
    settings: { task_type: 'text_to_model', prompt: 'a chair' },
  });
  assert.equal(res.statusCode, 202, res.body);
  const id = res.json().id as string;
  if (handle !== null)
    await t.container.db.db
      .updateTable('tasks')
      .set({ status: 'running', started_at: clock.now().toISOString(), provider_ref: handle })
      .where('id', '=', id)
      .execute();
  return id;
}

async function cancel(id: string): Promise<void> {
  const res = await t.call(account.key, 'POST', `/v1/tasks/${id}/cancel`);
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json().status, 'canceled');
}

function dueAt(id: string): Promise<string | null> {
  return upstreamCancelAt(t, id);
}

before(async () => {
  t = await startTestApp({ worker: false, clock });
  account = await t.account({ balanceMinor: 10_000_000 });
});

after(async () => {
  await t.close();
});

beforeEach(async () => {
  generator = new CancelingGenerator();
  // Every test starts with no task owed a cancel.
  await t.container.db.db.updateTable('tasks').set({ upstream_cancel_at: null }).execute();
});

describe('the cancel records what it owes the provider', () => {
  test('a running task with an upstream handle owes a cancel from the cancel on', async () => {
    const id = await task('up-running');
    assert.equal(await dueAt(id), null, 'nothing owed before the cancel');
    await cancel(id);
    assert.equal(await dueAt(id), clock.now().toISOString());
  });

  test('a task canceled before its run reached the provider owes nothing', async () => {
    const id = await task(null);
    await cancel(id);
    assert.equal(await dueAt(id), null);
    assert.equal(await cancelUpstreamRuns(deps()), 0);
    assert.deepEqual(generator.asked, []);
  });
});

describe('the pass over owed cancels', () => {
  test('one pass asks the generator with the run handle, then nothing is owed', async () => {
    const id = await task('up-1');
    await cancel(id);
    assert.equal(await cancelUpstreamRuns(deps()), 1);
    assert.deepEqual(generator.asked, ['up-1']);
    assert.equal(await dueAt(id), null);
    assert.equal(await cancelUpstreamRuns(deps()), 0);
    assert.equal(generator.asked.length, 1);
  });

  test('a provider that cannot be asked is asked again after the retry time, not before', async () => {
    const id = await task('up-2');
    await cancel(id);
    generator.failWith = new GeneratorUnavailable('busy');
    assert.equal(await cancelUpstreamRuns(deps()), 0);
    assert.equal(await dueAt(id), new Date(clock.now().getTime() + UPSTREAM_CANCEL_RETRY_MS).toISOString());
    assert.equal(await cancelUpstreamRuns(deps()), 0);
    assert.equal(generator.asked.length, 1, 'not asked again before the retry time');
    generator.failWith = null;
    clock.advance(UPSTREAM_CANCEL_RETRY_MS);
    assert.equal(await cancelUpstreamRuns(deps()), 1);
    assert.deepEqual(generator.asked, ['up-2', 'up-2']);
    assert.equal(await dueAt(id), null);
  });

  test('after a day of failures the attempts end with a warning', async () => {
    const id = await task('up-3');
    await cancel(id);
    clock.advance(UPSTREAM_CANCEL_GIVE_UP_MS);
    generator.failWith = new GeneratorUnavailable('still down');
    const given: string[] = [];
    assert.equal(await cancelUpstreamRuns(deps((taskId) => given.push(taskId))), 1);
    assert.deepEqual(given, [id]);
    assert.equal(await dueAt(id), null);
  });

  test('a refusal for good, or a run the provider no longer knows, ends the attempts at once', async () => {
    for (const failure of [
      new GenerationError('generation_failed', 'the run cannot be stopped'),
      new UpstreamRunLost('no such task'),
    ]) {
      const id = await task(`up-${failure.name}`);
      await cancel(id);
      generator.failWith = failure;
      const given: string[] = [];
      assert.equal(await cancelUpstreamRuns(deps((taskId) => given.push(taskId))), 1);
      assert.deepEqual(given, [id]);
      assert.equal(await dueAt(id), null);
    }
  });

  test('two passes at once ask the provider once', async () => {
    await cancel(await task('up-4'));
    const passes = await Promise.all([cancelUpstreamRuns(deps()), cancelUpstreamRuns(deps())]);
    assert.equal(passes[0] + passes[1], 1);
    assert.deepEqual(generator.asked, ['up-4']);
  });

  test('a cancel owed later is left alone until then', async () => {
    const id = await task('up-5');
    await cancel(id);
    clock.advance(-1_000);
    try {
      assert.equal(await cancelUpstreamRuns(deps()), 0);
      assert.deepEqual(generator.asked, []);
      assert.notEqual(await dueAt(id), null);
    } finally {
      clock.advance(1_000);
    }
  });
});
