/**
 * Channels of real generators (CONTRACT §11) with in-memory adapters: choice, slots across workers,
 * retries on another channel, the circuit, credit, acceptance and resuming on the same channel. Runs on
 * SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findModel } from '../src/catalog/index.ts';
import { runAdminCommand, UsageError } from '../src/cli/admin.ts';
import { cancelUpstreamRuns } from '../src/worker/upstream-cancels.ts';
import { Worker } from '../src/worker/worker.ts';
import { ScriptedUpstream, scriptedAdapters, testChannels, upstreamCancelAt } from './channel-adapters.ts';
import { expectError, startTestApp, type TestApp, waitForFinal } from './helpers.ts';
import { eventually } from './webhooks-kit.ts';

const TASK = { model: 'model-3d', settings: { task_type: 'text_to_model', prompt: 'a chair' } };

function channel(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, provider: 'tripo', models: ['model-3d'], api_key_env: 'TEST_KEY', ...extra };
}

async function withChannels(
  entries: Record<string, unknown>[],
  body: (t: TestApp, upstream: ScriptedUpstream, key: string) => Promise<void>,
  options: { worker?: boolean } = {},
): Promise<void> {
  const upstream = new ScriptedUpstream();
  const t = await startTestApp({
    channels: testChannels(entries),
    adapters: scriptedAdapters(upstream),
    ...(options.worker === false ? { worker: false } : {}),
  });
  try {
    const account = await t.account({ balanceMinor: 10_000_000 });
    await body(t, upstream, account.key);
  } finally {
    await t.close();
  }
}

async function create(t: TestApp, key: string): Promise<string> {
  const res = await t.call(key, 'POST', '/v1/tasks', TASK);
  assert.equal(res.statusCode, 202, res.body);
  return res.json().id as string;
}

/**
 * The channel's view once `done` holds: a run's success is told to its channel after the task's own commit
 * (`recordOutcome`: that write never changes the task's outcome), so a client that saw the task final may
 * read the channel a moment before its count moves.
 */
function settledChannelView(
  t: TestApp,
  name: string,
  done: (view: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  return eventually(() => channelView(t, name), done);
}

async function channelView(t: TestApp, name: string): Promise<Record<string, unknown>> {
  const res = await t.admin('GET', '/admin/v1/channels');
  assert.equal(res.statusCode, 200, res.body);
  const found = (res.json().channels as Record<string, unknown>[]).find((c) => c.name === name);
  assert.ok(found, `channel ${name} listed`);
  return found;
}

describe('channels (CONTRACT §11)', () => {
  it('runs on the lowest priority channel and records the upstream cost for the operator', async () => {
    await withChannels(
      [channel('backup', { priority: 1 }), channel('main', { priority: 0 })],
      async (t, up, key) => {
        const ids = [await create(t, key), await create(t, key), await create(t, key)];
        for (const id of ids) assert.equal((await waitForFinal(t, key, id)).status, 'succeeded');
        assert.equal(up.createsOn('main'), 3);
        assert.equal(up.createsOn('backup'), 0);
        const run = await t.admin('GET', `/admin/v1/tasks/${ids[0]}/run`);
        assert.equal(run.statusCode, 200, run.body);
        assert.equal(run.json().channel, 'main');
        assert.deepEqual(run.json().upstream_cost, { amount: 0.25, currency: 'USD' });
        const view = await settledChannelView(t, 'main', (v) => v.succeeded === 3);
        assert.deepEqual(
          {
            enabled: view.enabled,
            state: view.state,
            succeeded: view.succeeded,
            failed: view.failed,
            in_flight: view.in_flight,
          },
          { enabled: true, state: 'closed', succeeded: 3, failed: 0, in_flight: 0 },
        );
        expectError(await t.admin('GET', '/admin/v1/tasks/nope/run'), 404, 'task_not_found');
      },
    );
  });

  it('max_concurrency 2 holds across two workers: never more than 2 in flight, all 6 succeed', async () => {
    await withChannels([channel('only', { max_concurrency: 2 })], async (t, up, key) => {
      up.holdMs = 300;
      const c = t.container;
      const second = new Worker(
        {
          db: c.db,
          clock: c.clock,
          storage: c.storage,
          generator: c.generator,
          placement: c.services.channels,
          findModel,
          resultRetentionMs: 60_000,
          timeScale: 1000,
          log: c.log,
        },
        { pollIntervalMs: 50 },
      );
      second.start();
      try {
        const ids = await Promise.all(Array.from({ length: 6 }, () => create(t, key)));
        for (const id of ids) assert.equal((await waitForFinal(t, key, id, 60_000)).status, 'succeeded');
      } finally {
        await second.stop();
      }
      assert.ok(up.maxInFlight <= 2, `at most 2 in flight, saw ${up.maxInFlight}`);
      assert.equal(up.createsOn('only'), 6);
    });
  });

  it('a 5xx on the first channel moves the run to the second', async () => {
    await withChannels([channel('first'), channel('second', { priority: 1 })], async (t, up, key) => {
      up.createFailures.set('first', ['transient']);
      const id = await create(t, key);
      assert.equal((await waitForFinal(t, key, id)).status, 'succeeded');
      assert.deepEqual(
        up.creates.map((c) => c.channel),
        ['first', 'second'],
      );
      // Each run has its own key, so no provider takes the retry for the first run.
      assert.notEqual(up.creates[0]?.key, up.creates[1]?.key);
      assert.equal((await t.admin('GET', `/admin/v1/tasks/${id}/run`)).json().channel, 'second');
      const first = await channelView(t, 'first');
      assert.equal(first.failed, 1);
      assert.match(String(first.last_error), /503/);
    });
  });

  it('five failures open a channel; acceptance refuses only when every channel is unavailable; a trial closes it', async () => {
    await withChannels([channel('flaky'), channel('steady', { priority: 1 })], async (t, up, key) => {
      up.broken.add('flaky');
      for (let i = 0; i < 5; i++)
        assert.equal((await waitForFinal(t, key, await create(t, key))).status, 'succeeded');
      assert.equal(up.createsOn('flaky'), 5);
      assert.equal((await channelView(t, 'flaky')).state, 'open');
      // Open: runs go straight to the other channel.
      assert.equal((await waitForFinal(t, key, await create(t, key))).status, 'succeeded');
      assert.equal(up.createsOn('flaky'), 5);
      // Open and disabled: nothing can take a run, so acceptance answers 503 and holds nothing.
      assert.equal((await t.admin('PATCH', '/admin/v1/channels/steady', { enabled: false })).statusCode, 200);
      expectError(await t.call(key, 'POST', '/v1/tasks', TASK), 503, 'sg_unavailable');
      assert.equal((await t.admin('PATCH', '/admin/v1/channels/steady', { enabled: true })).statusCode, 200);
      // 30 s pass: the next run is the trial on the open channel, and its success closes it.
      up.broken.delete('flaky');
      const past = new Date(t.clock.now().getTime() - 31_000).toISOString();
      await t.container.db.db
        .updateTable('channel_states')
        .set({ opened_at: past })
        .where('name', '=', 'flaky')
        .execute();
      const trial = await create(t, key);
      assert.equal((await waitForFinal(t, key, trial)).status, 'succeeded');
      assert.equal((await t.admin('GET', `/admin/v1/tasks/${trial}/run`)).json().channel, 'flaky');
      assert.equal((await settledChannelView(t, 'flaky', (v) => v.state === 'closed')).state, 'closed');
    });
  });

  it('a failed trial opens the channel again', async () => {
    await withChannels([channel('flaky'), channel('steady', { priority: 1 })], async (t, up, key) => {
      up.broken.add('flaky');
      for (let i = 0; i < 5; i++)
        assert.equal((await waitForFinal(t, key, await create(t, key))).status, 'succeeded');
      const past = new Date(t.clock.now().getTime() - 31_000).toISOString();
      await t.container.db.db
        .updateTable('channel_states')
        .set({ opened_at: past })
        .where('name', '=', 'flaky')
        .execute();
      assert.equal((await waitForFinal(t, key, await create(t, key))).status, 'succeeded');
      assert.equal(up.createsOn('flaky'), 6);
      const view = await channelView(t, 'flaky');
      assert.equal(view.state, 'open');
    });
  });

  it('a half-open channel whose trial is gone takes a new trial; a disabled one takes nothing', async () => {
    await withChannels([channel('lost'), channel('other', { priority: 1 })], async (t, up, key) => {
      const db = t.container.db.db;
      // A trial that was canceled or whose worker vanished: half open with nothing in flight.
      await db
        .updateTable('channel_states')
        .set({ circuit: 'half_open' })
        .where('name', '=', 'lost')
        .execute();
      const trial = await create(t, key);
      assert.equal((await waitForFinal(t, key, trial)).status, 'succeeded');
      assert.equal(up.createsOn('lost'), 1);
      assert.equal((await settledChannelView(t, 'lost', (v) => v.state === 'closed')).state, 'closed');
      await db.updateTable('channel_states').set({ enabled: 0 }).where('name', '=', 'lost').execute();
      assert.equal((await waitForFinal(t, key, await create(t, key))).status, 'succeeded');
      assert.equal(up.createsOn('lost'), 1);
      assert.equal(up.createsOn('other'), 1);
    });
  });

  it('a channel out of credit is disabled, the run moves on, and the operator enables it again', async () => {
    await withChannels([channel('poor'), channel('rich', { priority: 1 })], async (t, up, key) => {
      up.createFailures.set('poor', ['credit']);
      const id = await create(t, key);
      assert.equal((await waitForFinal(t, key, id)).status, 'succeeded');
      assert.equal((await t.admin('GET', `/admin/v1/tasks/${id}/run`)).json().channel, 'rich');
      const poor = await channelView(t, 'poor');
      assert.equal(poor.enabled, false);
      assert.match(String(poor.last_error), /credit/);
      // Disabled: new runs skip it.
      assert.equal((await waitForFinal(t, key, await create(t, key))).status, 'succeeded');
      assert.equal(up.createsOn('poor'), 1);
      const enabled = await t.admin('PATCH', '/admin/v1/channels/poor', { enabled: true });
      assert.equal(enabled.statusCode, 200, enabled.body);
      assert.equal(enabled.json().enabled, true);
      assert.equal((await waitForFinal(t, key, await create(t, key))).status, 'succeeded');
      assert.equal(up.createsOn('poor'), 2);
      expectError(
        await t.admin('PATCH', '/admin/v1/channels/nope', { enabled: true }),
        404,
        'channel_not_found',
      );
      expectError(
        await t.admin('PATCH', '/admin/v1/channels/poor', { enabled: 'yes' }),
        422,
        'invalid_request',
      );
      expectError(await t.admin('PATCH', '/admin/v1/channels/poor', {}), 422, 'invalid_request');
    });
  });

  it('a restarted worker resumes the run on the same channel without a second creation', async () => {
    await withChannels([channel('one'), channel('two')], async (t, up, key) => {
      up.holdMs = 1_500;
      const id = await create(t, key);
      let ref: string | null = null;
      for (let i = 0; i < 400 && ref === null; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        const row = await t.container.db.db
          .selectFrom('tasks')
          .select(['provider_ref'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        ref = row.provider_ref;
      }
      assert.ok(ref, 'the run was created');
      await t.container.worker.stop();
      const before = await t.admin('GET', `/admin/v1/tasks/${id}/run`);
      assert.equal(before.json().status, 'running');
      t.container.worker.start();
      assert.equal((await waitForFinal(t, key, id)).status, 'succeeded');
      assert.equal(up.creates.length, 1);
      const after = (await t.admin('GET', `/admin/v1/tasks/${id}/run`)).json();
      assert.equal(after.channel, before.json().channel);
      assert.equal(after.upstream_ref, ref);
    });
  });

  it('the operator CLI lists and switches channels through the same service', async () => {
    await withChannels(
      [channel('main')],
      async (t, _up, key) => {
        const services = t.container.services;
        const listed = (await runAdminCommand(services, ['channels', 'list'], {})) as {
          channels: { name: string; enabled: boolean }[];
        };
        assert.deepEqual(
          listed.channels.map((c) => [c.name, c.enabled]),
          [['main', true]],
        );
        const off = (await runAdminCommand(services, ['channels', 'set', 'main'], { enabled: 'false' })) as {
          enabled: boolean;
        };
        assert.equal(off.enabled, false);
        expectError(await t.call(key, 'POST', '/v1/tasks', TASK), 503, 'sg_unavailable');
        await runAdminCommand(services, ['channels', 'set', 'main'], { enabled: 'true' });
        assert.equal((await channelView(t, 'main')).enabled, true);
        await assert.rejects(runAdminCommand(services, ['channels', 'set', 'main'], {}), UsageError);
        await assert.rejects(
          runAdminCommand(services, ['channels', 'set', 'nope'], { enabled: 'true' }),
          (e: Error & { code?: string }) => e.code === 'channel_not_found',
        );
      },
      { worker: false },
    );
  });

  it("an adapter's own refusal at acceptance answers 503; models without channels stay on the simulator", async () => {
    await withChannels([channel('main')], async (t, up, key) => {
      const refused = {
        model: 'model-3d',
        settings: { task_type: 'text_to_model', prompt: '[sim:unavailable]' },
      };
      expectError(await t.call(key, 'POST', '/v1/tasks', refused), 503, 'sg_unavailable');
      const music = await t.call(key, 'POST', '/v1/tasks', {
        model: 'music',
        settings: { mode: 'sounds', soundDescription: 'rain on a tin roof' },
      });
      assert.equal(music.statusCode, 202, music.body);
      assert.equal((await waitForFinal(t, key, music.json().id)).status, 'succeeded');
      const run = (await t.admin('GET', `/admin/v1/tasks/${music.json().id}/run`)).json();
      assert.equal(run.channel, null);
      assert.equal(up.creates.length, 0);
    });
  });

  it("a run past its channel's timeout is canceled upstream and fails with timeout, the hold voided", async () => {
    await withChannels([channel('slow', { timeout: '1s' })], async (t, up, key) => {
      up.holdMs = 60_000;
      const id = await create(t, key);
      const task = await waitForFinal(t, key, id);
      assert.equal(task.status, 'failed');
      assert.equal((task.error as { code: string }).code, 'timeout');
      assert.deepEqual(up.cancels, ['slow-1']);
      const account = await t.container.db.db
        .selectFrom('accounts')
        .select(['held_minor'])
        .innerJoin('tasks', 'tasks.account_id', 'accounts.id')
        .where('tasks.id', '=', id)
        .executeTakeFirstOrThrow();
      assert.equal(account.held_minor, 0);
    });
  });

  it('cancel reaches the channel of the run', async () => {
    await withChannels([channel('one')], async (t, up, key) => {
      up.holdMs = 5_000;
      const id = await create(t, key);
      for (let i = 0; i < 400 && up.creates.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 100));
      const res = await t.call(key, 'POST', `/v1/tasks/${id}/cancel`);
      assert.equal(res.statusCode, 200, res.body);
      for (let i = 0; i < 400 && up.cancels.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(up.cancels, ['one-1']);
      // The worker made the cancel: the sweeper owes none (upstream-cancels.ts).
      await eventually(
        () => upstreamCancelAt(t, id),
        (at) => at === null,
      );
      assert.equal(await sweepCancels(t), 0);
      assert.deepEqual(up.cancels, ['one-1']);
    });
  });

  it('a cancel while no worker drives the run reaches the channel through the sweeper', async () => {
    await withChannels([channel('one')], async (t, up, key) => {
      up.holdMs = 60_000;
      const id = await create(t, key);
      await eventually(
        () =>
          t.container.db.db
            .selectFrom('tasks')
            .select('provider_ref')
            .where('id', '=', id)
            .executeTakeFirst(),
        (row) => row?.provider_ref != null,
      );
      // The worker stops (a deploy, a crash): the run is given back with its upstream task running.
      await t.container.worker.stop();
      const res = await t.call(key, 'POST', `/v1/tasks/${id}/cancel`);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(up.cancels, [], 'no worker to make the cancel');
      assert.equal(await sweepCancels(t), 1);
      assert.deepEqual(up.cancels, ['one-1']);
      assert.equal(await upstreamCancelAt(t, id), null);
      assert.equal(await sweepCancels(t), 0);
    });
  });
});

function sweepCancels(t: TestApp): Promise<number> {
  const { db, clock, generator } = t.container;
  return cancelUpstreamRuns({ db, clock, generator });
}
