/**
 * image on a Recraft channel end to end (GENERATORS_FILE pointing at the fake): plain pictures, raster
 * and vector styles created at Recraft from uploaded pictures, SVG files from a vector style, the enhance
 * helper, and a moderation refusal, a 429 storm and an expired output link handled as CONTRACT §11 says.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { TINY_PNG } from './fakes/cog.ts';
import { RecraftFake, TINY_SVG } from './fakes/recraft.ts';
import { type TestAccount, type TestApp, waitForFinal } from './helpers.ts';
import {
  assertCapturedOnce,
  assertNoUpstreamUrl,
  channelCounts,
  deleteRecordAndSweep,
  failResultPuts,
  startChannelApp,
} from './providers-kit.ts';

const KEY = 'recraft-e2e-token';

let fake: RecraftFake;
let t: TestApp;
let account: TestAccount;
let picture: string;

async function createTask(settings: Record<string, unknown>): Promise<string> {
  const created = await t.call(account.key, 'POST', '/v1/tasks', { model: 'image', settings });
  assert.equal(created.statusCode, 202, created.body);
  return created.json().id as string;
}

async function final(id: string): Promise<Record<string, unknown>> {
  return waitForFinal(t, account.key, id, 90_000);
}

async function createStyle(type: 'raster' | 'vector'): Promise<string> {
  const created = await t.call(account.key, 'POST', '/v1/models/image/styles', {
    name: `My ${type} look`,
    image_urls: [picture],
    type,
  });
  assert.equal(created.statusCode, 201, created.body);
  assert.equal(created.json().status, 'ready');
  return created.json().id as string;
}

before(async () => {
  fake = await new RecraftFake({ apiKey: KEY, callMs: 50 }).start();
  t = await startChannelApp(
    [
      {
        name: 'recraft-main',
        provider: 'recraft',
        models: ['image'],
        base_url: fake.url,
        api_key_env: 'RECRAFT_API_KEY',
      },
      // A second account's channel on the same fake, for runs that move on.
      {
        name: 'recraft-backup',
        provider: 'recraft',
        models: ['image'],
        base_url: fake.url,
        api_key_env: 'RECRAFT_API_KEY',
        priority: 1,
      },
    ],
    { env: { RECRAFT_API_KEY: KEY } },
  );
  account = await t.account({ balanceMinor: 100_000_000 });
  const uploaded = await t.call(account.key, 'POST', '/v1/files?filename=look.png', TINY_PNG, {
    'content-type': 'image/png',
  });
  assert.equal(uploaded.statusCode, 201, uploaded.body);
  picture = uploaded.json().url as string;
});

after(async () => {
  await t.close();
  await fake.close();
});

test('a plain picture: recraftv4, the size as an aspect; a stored PNG, money captured once', async () => {
  const id = await createTask({ prompt: 'a lighthouse at dawn', size: '1365x1024' });
  const task = await final(id);
  assert.equal(task.status, 'succeeded', JSON.stringify(task));
  assert.deepEqual(fake.callsTo('/images/generations')[0]?.json, {
    prompt: 'a lighthouse at dawn',
    model: 'recraftv4',
    size: '4:3',
    n: 1,
    response_format: 'url',
  });
  assert.equal(fake.callsTo('/images/generations')[0]?.authorization, `Bearer ${KEY}`);
  const file = await t.call(account.key, 'GET', `/v1/tasks/${id}/artifacts/0`);
  assert.equal(file.statusCode, 200);
  assert.equal(file.headers['content-type'], 'image/png');
  assertNoUpstreamUrl(task, [fake.url]);
  await assertCapturedOnce(t.container, id);
  // Recraft's `credits` is the run's upstream cost, shown to the operator.
  const run = await t.admin('GET', `/admin/v1/tasks/${id}/run`);
  assert.equal(run.statusCode, 200, run.body);
  assert.deepEqual(run.json().upstream_cost, { amount: 40, currency: 'credits' });
  assert.equal(run.json().channel, 'recraft-main');
});

describe('image styles', () => {
  test('deleting a style deletes it at Recraft (DELETE /styles/{id})', async () => {
    const styleId = await createStyle('raster');
    const upstream = [...fake.styles.keys()].at(-1) ?? '';
    assert.ok(fake.styles.has(upstream));
    assert.equal(await deleteRecordAndSweep(t, account.key, `/v1/models/image/styles/${styleId}`), 1);
    assert.ok(!fake.styles.has(upstream), 'the style is gone at Recraft');
    const call = fake.calls.filter((c) => c.method === 'DELETE').at(-1);
    assert.equal(call?.path, `/styles/${upstream}`);
  });

  test('a raster style is made at Recraft from our picture and used with recraftv4_styles', async () => {
    const styleId = await createStyle('raster');
    const [call] = fake.callsTo('/styles');
    assert.deepEqual(call?.form?.fields, { style: ['any'], model: ['recraftv4_styles'] });
    assert.deepEqual(
      call?.form?.files.map((f) => [f.field, f.type, f.size]),
      [['file1', 'image/png', TINY_PNG.length]],
    );
    const task = await final(await createTask({ prompt: 'a fox', style_id: styleId }));
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    const body = fake.callsTo('/images/generations').at(-1)?.json as Record<string, unknown>;
    assert.equal(body.model, 'recraftv4_styles');
    assert.equal(body.style_id, [...fake.styles.keys()][0]);
  });

  test('a vector style gives SVG files (kind image)', async () => {
    const styleId = await createStyle('vector');
    const call = fake.callsTo('/styles').at(-1);
    assert.deepEqual(call?.form?.fields, {
      style: ['vector_illustration'],
      model: ['recraftv4_styles_vector'],
    });
    const id = await createTask({ prompt: 'a fox icon', style_id: styleId, n: 2 });
    const task = await final(id);
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    const body = fake.callsTo('/images/generations').at(-1)?.json as Record<string, unknown>;
    assert.equal(body.model, 'recraftv4_styles_vector');
    const artifacts = (task.result as { artifacts: Array<{ kind: string; filename: string }> }).artifacts;
    assert.deepEqual(
      artifacts.map((a) => [a.kind, a.filename.endsWith('.svg')]),
      [
        ['image', true],
        ['image', true],
      ],
    );
    const file = await t.call(account.key, 'GET', `/v1/tasks/${id}/artifacts/0`);
    assert.equal(file.headers['content-type'], 'image/svg+xml');
    assert.ok(file.rawPayload.equals(TINY_SVG));
  });

  test('a style refused by Recraft is the library 502', async () => {
    fake.failures.add(
      { status: 400, body: { code: 'invalid_files', message: 'unreadable' } },
      1,
      /^\/styles$/,
    );
    const created = await t.call(account.key, 'POST', '/v1/models/image/styles', {
      name: 'Bad',
      image_urls: [picture],
    });
    assert.equal(created.statusCode, 502, created.body);
  });
});

test('enhance: the helper answers Recraft\u2019s richer prompt', async () => {
  const answer = await t.call(account.key, 'POST', '/v1/models/image/enhance', { prompt: 'a cat on a roof' });
  assert.equal(answer.statusCode, 200, answer.body);
  assert.match(answer.json().prompt as string, /^a cat on a roof, /);
  assert.deepEqual(fake.callsTo('/prompts/enhance')[0]?.json, { prompt: 'a cat on a roof' });
});

test('402 on enhance: 503, the channel is disabled, and the next call goes to the other channel', async () => {
  fake.failures.add({ status: 402, body: 'Payment Required' }, 1, /^\/prompts\/enhance$/);
  const refused = await t.call(account.key, 'POST', '/v1/models/image/enhance', { prompt: 'a dog' });
  assert.equal(refused.statusCode, 503, refused.body);
  assert.equal(refused.json().error.code, 'sg_unavailable');
  // CONTRACT §11: no credit disables the channel, from a helper call as from a task run.
  assert.equal((await channelCounts(t, 'recraft-main')).enabled, false);
  assert.equal((await channelCounts(t, 'recraft-backup')).enabled, true);
  const answer = await t.call(account.key, 'POST', '/v1/models/image/enhance', { prompt: 'a dog' });
  assert.equal(answer.statusCode, 200, answer.body);
  const enabled = await t.admin('PATCH', '/admin/v1/channels/recraft-main', { enabled: true });
  assert.equal(enabled.statusCode, 200, enabled.body);
});

describe('faults (CONTRACT §11)', () => {
  test('a moderation refusal ends the task content_refused', async () => {
    const task = await final(await createTask({ prompt: 'forbidden [recraft:moderation]' }));
    assert.equal(task.status, 'failed');
    assert.equal((task.error as { code: string }).code, 'content_refused');
  });

  test('a 429 storm shorter than the retries: retried as new calls, then succeeds', async () => {
    const before = fake.callsTo('/images/generations').length;
    fake.failures.add({ status: 429, body: 'Too Many Requests' }, 2, /^\/images\/generations$/);
    const id = await createTask({ prompt: 'a quiet street' });
    const task = await final(id);
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    assert.equal(fake.callsTo('/images/generations').length - before, 3);
    await assertCapturedOnce(t.container, id);
  });

  test('an expired output link: the run is redone with a new call, the task succeeds', async () => {
    // The first answer's links have expired before they are fetched; the retry's live.
    fake.expiringGenerations = 1;
    const before = fake.callsTo('/images/generations').length;
    const id = await createTask({ prompt: 'a short-lived link' });
    const task = await final(id);
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    assert.equal(fake.callsTo('/images/generations').length - before, 2, 'one call per run');
    await assertCapturedOnce(t.container, id);
  });

  test('our storage refusing the result once: the run resumes with the same answer, no second call', async () => {
    const before = fake.callsTo('/images/generations').length;
    const counts = await channelCounts(t, 'recraft-main');
    const restore = failResultPuts(t.container);
    try {
      const id = await createTask({ prompt: 'a picture kept for the retry' });
      const task = await final(id);
      assert.equal(task.status, 'succeeded', JSON.stringify(task));
      assert.equal(fake.callsTo('/images/generations').length - before, 1, 'one billed call for the run');
      await assertCapturedOnce(t.container, id);
    } finally {
      restore();
    }
    // Our storage's failure never counts against the channel (docs/providers.md).
    const after = await channelCounts(t, 'recraft-main');
    assert.equal(after.failed, counts.failed);
    assert.equal(after.succeeded, counts.succeeded + 1);
  });

  test('402 (no credit) disables the channel; the run moves on to the other channel and succeeds', async () => {
    fake.failures.add({ status: 402, body: 'Payment Required' }, 1, /^\/images\/generations$/);
    const id = await createTask({ prompt: 'a paid picture' });
    const task = await final(id);
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    await assertCapturedOnce(t.container, id);
    const channels = (await t.admin('GET', '/admin/v1/channels')).json().channels as Array<{
      name: string;
      enabled: boolean;
      succeeded: number;
    }>;
    assert.equal(channels.find((c) => c.name === 'recraft-main')?.enabled, false);
    assert.ok((channels.find((c) => c.name === 'recraft-backup')?.succeeded ?? 0) >= 1);
    const enabled = await t.admin('PATCH', '/admin/v1/channels/recraft-main', { enabled: true });
    assert.equal(enabled.statusCode, 200, enabled.body);
  });
});
