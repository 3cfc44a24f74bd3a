import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type CogFake, startCogFake, TINY_PNG } from './fakes/cog.ts';
import { startTestApp, type TestApp, waitForFinal } from './helpers.ts';
import { assertCapturedOnce, channelCounts, startChannelApp } from './providers-kit.ts';

describe('a task served by Cog end to end over HTTP (worker, webhooks, storage)', () => {
  let t: TestApp;
  let fake: CogFake;

  before(async () => {
    fake = await startCogFake({
      outputAs: 'url',
      urlTtlMs: 4_000,
      runMs: 200,
      slots: 4,
      deliver: (url, body) =>
        t.app.inject({ method: 'POST', url: new URL(url).pathname, payload: body as object }),
    });
    // A channel of the app's own, so its webhooks are taken (only the file's channels take callbacks).
    t = await startTestApp({
      env: { PUBLIC_BASE_URL: 'https://api.example.com', FETCH_ALLOW_ADDRESSES: '127.0.0.1' },
      channels: [
        {
          name: 'cog-e2e',
          provider: 'cog',
          models: ['image'],
          baseUrl: fake.url,
          secrets: {},
          priority: 0,
          weight: 1,
          maxConcurrency: 4,
          timeoutMs: 60_000,
          upstreamModels: {},
        },
      ],
    });
  });
  after(async () => {
    // The fake first, so no late webhook reaches a closed app.
    await fake.close();
    await t.close();
  });

  test('succeeds with the output stored by us; it still downloads after the upstream link expired', async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const created = await t.call(acct.key, 'POST', '/v1/tasks', {
      model: 'image',
      settings: { prompt: 'a fox in the snow' },
    });
    assert.equal(created.statusCode, 202, created.body);
    const taskId = created.json().id as string;
    const task = await waitForFinal(t, acct.key, taskId, 60_000);
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    // One submission upstream, its input our settings.
    const puts = fake.calls.filter((call) => call.method === 'PUT');
    assert.equal(puts.length, 1);
    assert.equal((puts[0]!.body as { input: { prompt: string } }).input.prompt, 'a fox in the snow');
    // Answers never carry upstream addresses.
    assert.ok(!JSON.stringify(task).includes(fake.url), 'no upstream URL in the task');
    const link = (fake.predictions.values().next().value!.output as string[])[0] as string;
    await new Promise((resolve) => setTimeout(resolve, 4_100));
    assert.equal((await fetch(link)).status, 404, 'the upstream link has expired');
    const file = await t.call(acct.key, 'GET', `/v1/tasks/${taskId}/artifacts/0`);
    assert.equal(file.statusCode, 200);
    assert.equal(file.headers['content-type'], 'image/png');
    assert.ok(file.rawPayload.equals(TINY_PNG));
  });

  test('a canceled task reaches the Cog cancel endpoint', async () => {
    fake.options.runMs = 30_000;
    const acct = await t.account({ balanceMinor: 100_000 });
    const created = await t.call(acct.key, 'POST', '/v1/tasks', {
      model: 'image',
      settings: { prompt: 'a slow fox' },
    });
    const taskId = created.json().id as string;
    for (let i = 0; i < 400 && fake.predictions.size < 2; i++) await new Promise((r) => setTimeout(r, 25));
    const canceled = await t.call(acct.key, 'POST', `/v1/tasks/${taskId}/cancel`);
    assert.equal(canceled.statusCode, 200, canceled.body);
    for (let i = 0; i < 400 && fake.cancels.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(fake.cancels.length, 1);
    assert.equal(fake.predictions.get(fake.cancels[0] as string)?.status, 'canceled');
  });

  test('a worker stopped while the run waits upstream: the next one finishes the same prediction', async () => {
    fake.options.runMs = 1_500;
    fake.options.outputAs = 'data';
    const acct = await t.account({ balanceMinor: 100_000 });
    const before = fake.predictions.size;
    const created = await t.call(acct.key, 'POST', '/v1/tasks', {
      model: 'image',
      settings: { prompt: 'a patient fox' },
    });
    const taskId = created.json().id as string;
    for (let i = 0; i < 400 && fake.predictions.size === before; i++)
      await new Promise((r) => setTimeout(r, 25));
    const id = `${taskId}_1`;
    assert.ok(fake.predictions.has(id), 'the prediction exists upstream');
    await t.container.worker.stop();
    assert.equal((await t.call(acct.key, 'GET', `/v1/tasks/${taskId}`)).json().status, 'running');
    // The prediction completes while no worker runs; its webhook is kept for the run.
    for (let i = 0; i < 400 && fake.predictions.get(id)?.status !== 'succeeded'; i++)
      await new Promise((r) => setTimeout(r, 25));
    t.container.worker.start();
    const task = await waitForFinal(t, acct.key, taskId, 60_000);
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    assert.equal(
      fake.calls.filter((call) => call.method === 'PUT' && call.path === `/predictions/${id}`).length,
      1,
    );
    const file = await t.call(acct.key, 'GET', `/v1/tasks/${taskId}/artifacts/0`);
    assert.ok(file.rawPayload.equals(TINY_PNG));
  });
});

describe('a Cog channel whose PUT times out after Cog started the prediction (PROVIDERS.md §3)', () => {
  let t: TestApp;
  let fake: CogFake;

  before(async () => {
    // One slot, as most Cog servers have: a second prediction would wait behind the first.
    fake = await startCogFake({ runMs: 2_000, slots: 1 });
    t = await startChannelApp(
      [{ name: 'cog-one', provider: 'cog', models: ['image'], base_url: fake.url, max_concurrency: 1 }],
      { adapterLimits: { callTimeoutMs: 500 } },
    );
  });
  after(async () => {
    await fake.close();
    await t.close();
  });

  test('the create is retried under the same run key: one prediction, no second PUT id, no 409', async () => {
    fake.fail('accept-hang');
    const acct = await t.account({ balanceMinor: 100_000 });
    const created = await t.call(acct.key, 'POST', '/v1/tasks', {
      model: 'image',
      settings: { prompt: 'a fox whose answer got lost' },
    });
    assert.equal(created.statusCode, 202, created.body);
    const taskId = created.json().id as string;
    const task = await waitForFinal(t, acct.key, taskId, 60_000);
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    // The first PUT's answer never came, yet Cog ran its prediction: the retry joined it (the same id, so
    // Cog answers the running prediction, or its webhook already named it) instead of starting another.
    assert.deepEqual([...fake.predictions.keys()], [`${taskId}_1`]);
    const puts = fake.calls.filter((call) => call.method === 'PUT').map((call) => call.path);
    assert.ok(puts.length >= 1);
    assert.ok(
      puts.every((path) => path === `/predictions/${taskId}_1`),
      `every PUT names the first run's prediction: ${puts.join(', ')}`,
    );
    await assertCapturedOnce(t.container, taskId);
    // The timeout was the provider's: it counts against the channel once; the run then succeeded there.
    const channel = await channelCounts(t, 'cog-one');
    assert.deepEqual([channel.enabled, channel.failed, channel.succeeded], [true, 1, 1]);
  });
});
