/**
 * Channel choice with real adapters and fakes (CONTRACT §11), over HTTP on the real app: a channel whose
 * provider answers 5xx hands its runs to the next one, opens after five failures and closes after a good
 * trial; `max_concurrency` bounds what one provider sees in flight.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SunoFake } from './fakes/suno.ts';
import { TripoFake } from './fakes/tripo.ts';
import type { TestAccount, TestApp } from './helpers.ts';
import { waitForFinal } from './helpers.ts';
import { assertCapturedOnce, assertNoUpstreamUrl, FAKE_KEYS, startChannelApp } from './providers-kit.ts';

interface ChannelView {
  name: string;
  state: string;
  in_flight: number;
  failed: number;
  succeeded: number;
  last_error: string | null;
}

async function channelView(t: TestApp, name: string): Promise<ChannelView> {
  const res = await t.admin('GET', '/admin/v1/channels');
  assert.equal(res.statusCode, 200, res.body);
  const found = (res.json().channels as ChannelView[]).find((c) => c.name === name);
  assert.ok(found, `channel ${name}`);
  return found;
}

async function runOf(
  t: TestApp,
  id: string,
): Promise<{ channel: string | null; upstream_ref: string | null }> {
  return (await t.admin('GET', `/admin/v1/tasks/${id}/run`)).json();
}

describe('two Suno channels for music, the first answering 5xx', () => {
  let first: SunoFake;
  let second: SunoFake;
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    first = await new SunoFake({ apiKey: FAKE_KEYS.SUNO_API_KEY, stepMs: 100 }).start();
    second = await new SunoFake({ apiKey: FAKE_KEYS.SUNO_API_KEY, stepMs: 100 }).start();
    t = await startChannelApp([
      {
        name: 'suno-first',
        provider: 'suno',
        models: ['music'],
        base_url: first.url,
        api_key_env: 'SUNO_API_KEY',
      },
      {
        name: 'suno-second',
        provider: 'suno',
        models: ['music'],
        base_url: second.url,
        api_key_env: 'SUNO_API_KEY',
        priority: 1,
      },
    ]);
    account = await t.account({ balanceMinor: 10_000_000 });
  });
  after(async () => {
    await t.close();
    await Promise.all([first.close(), second.close()]);
  });

  async function song(description: string): Promise<string> {
    const created = await t.call(account.key, 'POST', '/v1/tasks', {
      model: 'music',
      settings: { mode: 'generate', songDescription: description },
    });
    assert.equal(created.statusCode, 202, created.body);
    return created.json().id as string;
  }

  test('each run refused with 5xx by the first finishes on the second; five open the first', async () => {
    first.fail({ kind: 'http', status: 502 }, { target: 'create', times: 5 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await song(`song ${i}`));
    for (const id of ids) {
      const task = await waitForFinal(t, account.key, id, 90_000);
      assert.equal(task.status, 'succeeded', JSON.stringify(task));
      assertNoUpstreamUrl(task, [first.url, second.url]);
      assert.equal((await runOf(t, id)).channel, 'suno-second');
      await assertCapturedOnce(t.container, id);
    }
    assert.equal(first.creates().length, 5, 'each task was tried once on the first');
    assert.equal(second.creates().length, 5, 'and submitted once on the second');
    const view = await channelView(t, 'suno-first');
    assert.equal(view.state, 'open');
    assert.equal(view.failed, 5);
    assert.match(String(view.last_error), /502/);
    // Open: the next run goes straight to the second channel.
    const next = await song('while open');
    assert.equal((await waitForFinal(t, account.key, next, 90_000)).status, 'succeeded');
    assert.equal((await runOf(t, next)).channel, 'suno-second');
    assert.equal(first.creates().length, 5, 'nothing reached the open channel');
  });

  test('after its 30 s the open channel takes one trial run, and its success closes it', async () => {
    // The 30 s are taken from the channel's opening time rather than waited out.
    const past = new Date(t.clock.now().getTime() - 31_000).toISOString();
    await t.container.db.db
      .updateTable('channel_states')
      .set({ opened_at: past })
      .where('name', '=', 'suno-first')
      .execute();
    const trial = await song('the trial');
    const task = await waitForFinal(t, account.key, trial, 90_000);
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    assert.equal((await runOf(t, trial)).channel, 'suno-first');
    assert.equal(first.creates().length, 6);
    assert.equal((await channelView(t, 'suno-first')).state, 'closed');
    await assertCapturedOnce(t.container, trial);
  });
});

describe('max_concurrency 2 on one Tripo channel', () => {
  let tripo: TripoFake;
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    // Each task is busy upstream for 2 s after its submission, so runs let through together overlap there.
    tripo = await TripoFake.start({ apiKeys: [FAKE_KEYS.TRIPO_API_KEY], queuedMs: 500, runningMs: 1_500 });
    t = await startChannelApp([
      {
        name: 'tripo-narrow',
        provider: 'tripo',
        models: ['model-3d'],
        base_url: tripo.baseUrl,
        api_key_env: 'TRIPO_API_KEY',
        max_concurrency: 2,
      },
    ]);
    account = await t.account({ balanceMinor: 10_000_000 });
  });
  after(async () => {
    await t.close();
    await tripo.close();
  });

  test('six tasks: the fake never sees more than 2 in flight, the others wait queued, all six succeed', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const created = await t.call(account.key, 'POST', '/v1/tasks', {
        model: 'model-3d',
        settings: { task_type: 'text_to_model', prompt: `chair number ${i}` },
      });
      assert.equal(created.statusCode, 202, created.body);
      ids.push(created.json().id as string);
    }
    let peakSlots = 0;
    let sawQueued = false;
    const deadline = Date.now() + 120_000;
    for (;;) {
      assert.ok(Date.now() < deadline, 'the six tasks did not finish');
      const view = await channelView(t, 'tripo-narrow');
      peakSlots = Math.max(peakSlots, view.in_flight);
      const statuses = await Promise.all(
        ids.map(async (id) => (await t.call(account.key, 'GET', `/v1/tasks/${id}`)).json().status as string),
      );
      if (statuses.includes('queued') && statuses.includes('running')) sawQueued = true;
      if (statuses.every((s) => s === 'succeeded' || s === 'failed' || s === 'canceled')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (const id of ids) {
      assert.equal((await waitForFinal(t, account.key, id)).status, 'succeeded');
      await assertCapturedOnce(t.container, id);
    }
    assert.equal(tripo.callsTo('POST', '/task').length, 6, 'one submission each');
    assert.ok(tripo.peakInFlight <= 2, `the fake saw ${tripo.peakInFlight} tasks in flight`);
    assert.ok(peakSlots <= 2, `the channel showed ${peakSlots} in flight`);
    assert.ok(sawQueued, 'tasks beyond the limit waited queued, not failed');
  });
});
