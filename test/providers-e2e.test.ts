/**
 * Tasks over HTTP on the real app and worker, with a GENERATORS_FILE whose channels point at the Tripo,
 * Suno and Cog fakes (CONTRACT §11): every model-3d mode on Tripo and every music mode on Suno succeed
 * with their files served from our storage and captured once; output links that expired upstream do not
 * matter; a cancel reaches the provider; callbacks with a wrong token or for a finished run change
 * nothing; a lost upstream task is run again; helpers of music run at Suno.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { renderMp3 } from '../src/generators/simulator/media/mp3.ts';
import { makeJpeg, makePng } from '../src/media/fixtures.ts';
import { type CogFake, startCogFake } from './fakes/cog.ts';
import { SunoFake } from './fakes/suno.ts';
import { TripoFake } from './fakes/tripo.ts';
import { expectError, type TestAccount, type TestApp, waitForFinal } from './helpers.ts';
import {
  assertCapturedOnce,
  assertNoUpstreamUrl,
  FAKE_KEYS,
  startChannelApp,
  until,
} from './providers-kit.ts';

const LYRICS = '[Verse]\nMorning light on the river';

let tripo: TripoFake;
let suno: SunoFake;
let cog: CogFake;
let t: TestApp;
let account: TestAccount;
let origins: string[];
/** Our own uploads, by what they are. */
const uploads: Record<'png' | 'jpeg' | 'mp3', string> = { png: '', jpeg: '', mp3: '' };

async function upload(path: string, filename: string, contentType: string): Promise<string> {
  const uploaded = await t.call(account.key, 'POST', `/v1/files?filename=${filename}`, await readFile(path), {
    'content-type': contentType,
  });
  assert.equal(uploaded.statusCode, 201, uploaded.body);
  return uploaded.json().url as string;
}

before(async () => {
  tripo = await TripoFake.start({
    apiKeys: [FAKE_KEYS.TRIPO_API_KEY],
    queuedMs: 100,
    runningMs: 400,
    outputTtlMs: 2_000,
  });
  suno = await new SunoFake({ apiKey: FAKE_KEYS.SUNO_API_KEY, stepMs: 100, urlTtlMs: 2_000 }).start();
  cog = await startCogFake({ outputAs: 'url', urlTtlMs: 2_000, runMs: 300, slots: 4 });
  origins = [tripo.origin, suno.url, cog.url];
  t = await startChannelApp([
    {
      name: 'tripo-main',
      provider: 'tripo',
      models: ['model-3d'],
      base_url: tripo.baseUrl,
      api_key_env: 'TRIPO_API_KEY',
    },
    {
      name: 'suno-main',
      provider: 'suno',
      models: ['music'],
      base_url: suno.url,
      api_key_env: 'SUNO_API_KEY',
    },
    { name: 'cog-main', provider: 'cog', models: ['image'], base_url: cog.url },
  ]);
  account = await t.account({ balanceMinor: 100_000_000 });
  const dir = join(tmpdir(), `providers-e2e-${randomUUID()}`);
  await mkdir(dir);
  uploads.png = await upload(await makePng(dir, 512, 512), 'front.png', 'image/png');
  uploads.jpeg = await upload(await makeJpeg(dir, 512, 512), 'back.jpg', 'image/jpeg');
  const mp3 = join(dir, 'demo.mp3');
  await renderMp3(
    { kind: 'audio', format: 'mp3', filename: 'x.mp3', caption: '', seed: 'e2e', durationSeconds: 30 },
    mp3,
  );
  uploads.mp3 = await upload(mp3, 'demo.mp3', 'audio/mpeg');
  await rm(dir, { recursive: true, force: true });
});

after(async () => {
  // The fakes last: no run still polling finds them gone while the app stops.
  await t.close();
  await Promise.all([tripo.close(), suno.close(), cog.close()]);
});

async function createTask(model: string, settings: Record<string, unknown>): Promise<string> {
  const created = await t.call(account.key, 'POST', '/v1/tasks', { model, settings });
  assert.equal(created.statusCode, 202, created.body);
  assertNoUpstreamUrl(created.json(), origins);
  return created.json().id as string;
}

/** The task succeeded, each file is served by us, no answer names a fake, its price was captured once. */
async function assertServedByUs(id: string, contentTypes: string[]): Promise<Record<string, unknown>> {
  const task = await waitForFinal(t, account.key, id, 90_000);
  assert.equal(task.status, 'succeeded', JSON.stringify(task));
  assertNoUpstreamUrl(task, origins);
  const listed = await t.call(account.key, 'GET', '/v1/tasks?limit=100');
  assertNoUpstreamUrl(listed.json(), origins);
  const artifacts = (task['result'] as { artifacts: unknown[] }).artifacts;
  assert.equal(artifacts.length, contentTypes.length, JSON.stringify(artifacts));
  for (const [i, contentType] of contentTypes.entries()) {
    const file = await t.call(account.key, 'GET', `/v1/tasks/${id}/artifacts/${i}`);
    assert.equal(file.statusCode, 200);
    assert.equal(file.headers['content-type'], contentType);
    assert.ok(file.rawPayload.length > 0);
  }
  assert.equal((await t.admin('GET', `/admin/v1/tasks/${id}/run`)).json().channel !== null, true);
  await assertCapturedOnce(t.container, id);
  return task;
}

describe('every model-3d mode on Tripo', () => {
  const modes: [string, () => Record<string, unknown>][] = [
    ['text_to_model', () => ({ task_type: 'text_to_model', prompt: 'a small wooden chair' })],
    ['image_to_model', () => ({ task_type: 'image_to_model', image_url: [uploads.jpeg] })],
    [
      'multiview_to_model',
      () => ({ task_type: 'multiview_to_model', front_url: [uploads.png], back_url: [uploads.jpeg] }),
    ],
  ];
  // Tripo is read every 5 s: the modes run side by side, each test waits for its own.
  const ids = new Map<string, Promise<string>>();
  before(() => {
    for (const [mode, settings] of modes) ids.set(mode, createTask('model-3d', settings()));
  });
  for (const [mode] of modes)
    test(`model-3d ${mode} on Tripo: succeeds, one submission, a GLB and a preview from our storage, captured once`, async () => {
      const id = await (ids.get(mode) as Promise<string>);
      await assertServedByUs(id, ['model/gltf-binary', 'image/png']);
      const ref = (await t.admin('GET', `/admin/v1/tasks/${id}/run`)).json().upstream_ref as string;
      assert.match(ref, /^ch:tripo-main:/);
      assert.ok(tripo.tasks.has(ref.slice('ch:tripo-main:'.length)), 'the handle names the fake task');
    });

  test('one submission per model-3d task: as many POST /task as tasks', async () => {
    const all = await Promise.all([...ids.values()]);
    for (const id of all) assert.equal((await waitForFinal(t, account.key, id, 90_000)).status, 'succeeded');
    assert.equal(tripo.callsTo('POST', '/task').length, all.length);
  });
});

describe('every music mode on Suno', () => {
  const modes: [string, () => Record<string, unknown>, number][] = [
    ['generate', () => ({ mode: 'generate', songDescription: 'a cheerful song about a ginger cat' }), 2],
    ['sounds', () => ({ mode: 'sounds', soundDescription: 'rain on a tin roof' }), 1],
    [
      'add_vocals',
      () => ({
        mode: 'add_vocals',
        audio: [uploads.mp3],
        title: 'River',
        style: 'folk',
        prompt: LYRICS,
        negativeTags: 'metal',
      }),
      2,
    ],
    [
      'add_instrumental',
      () => ({
        mode: 'add_instrumental',
        audio: [uploads.mp3],
        title: 'River',
        tags: 'folk',
        negativeTags: 'metal',
      }),
      2,
    ],
    [
      'cover_upload',
      () => ({ mode: 'cover_upload', audio: [uploads.mp3], songDescription: 'a jazz cover' }),
      2,
    ],
    [
      'extend',
      () => ({ mode: 'extend', audio: [uploads.mp3], continueAt: 10, style: 'folk', prompt: LYRICS }),
      2,
    ],
    [
      'mashup',
      () => ({ mode: 'mashup', audio: [uploads.mp3], audio2: [uploads.mp3], songDescription: 'both as one' }),
      2,
    ],
  ];
  const ids = new Map<string, Promise<string>>();
  before(() => {
    for (const [mode, settings] of modes) ids.set(mode, createTask('music', settings()));
  });
  for (const [mode, , files] of modes)
    test(`music ${mode} on Suno: succeeds, one submission, files from our storage, captured once`, async () => {
      const id = await (ids.get(mode) as Promise<string>);
      await assertServedByUs(
        id,
        Array.from({ length: files }, () => 'audio/mpeg'),
      );
      const ref = (await t.admin('GET', `/admin/v1/tasks/${id}/run`)).json().upstream_ref as string;
      assert.match(ref, /^ch:suno-main:/);
      const upstream = JSON.parse(ref.slice('ch:suno-main:'.length)) as { taskId: string };
      assert.ok(suno.tasks.has(upstream.taskId), 'the handle names the fake task');
    });

  test('one submission per music task: as many creates as tasks', async () => {
    const all = await Promise.all([...ids.values()]);
    for (const id of all) assert.equal((await waitForFinal(t, account.key, id, 90_000)).status, 'succeeded');
    const musicCreates = suno.creates().filter((c) => !/lyrics|style/.test(c.path));
    assert.equal(musicCreates.length, all.length);
  });
});

test('outputs still download after the upstream links expired', async () => {
  const id = await createTask('image', { prompt: 'a fox in the snow' });
  await assertServedByUs(id, ['image/png']);
  const model = await createTask('model-3d', { task_type: 'text_to_model', prompt: 'a lamp post' });
  await assertServedByUs(model, ['model/gltf-binary', 'image/png']);
  tripo.expireLinks();
  await new Promise((resolve) => setTimeout(resolve, 2_100));
  const prediction = [...cog.predictions.values()].at(-1);
  assert.ok(prediction);
  const link = (prediction.output as string[])[0] as string;
  assert.equal((await fetch(link)).status, 404, 'the Cog link has expired');
  for (const [task, count] of [
    [id, 1],
    [model, 2],
  ] as const)
    for (let i = 0; i < count; i++)
      assert.equal((await t.call(account.key, 'GET', `/v1/tasks/${task}/artifacts/${i}`)).statusCode, 200);
});

test('Cog with no free slot (409): the extra tasks wait queued and all succeed; the channel is not blamed', async () => {
  // The channel allows 4 runs at once, the server 1 (PROVIDERS.md §3: "409 → no slot (run stays queued)").
  cog.options.slots = 1;
  cog.options.runMs = 600;
  try {
    const failures = () =>
      t.container.db.db
        .selectFrom('channel_states')
        .select(['circuit', 'failed'])
        .where('name', '=', 'cog-main')
        .executeTakeFirstOrThrow();
    const before = await failures();
    const putsBefore = cog.submissions.length;
    const ids = await Promise.all([1, 2, 3].map((n) => createTask('image', { prompt: `fox ${n}` })));
    for (const id of ids) {
      const task = await waitForFinal(t, account.key, id, 90_000);
      assert.equal(task.status, 'succeeded', JSON.stringify(task));
      await assertCapturedOnce(t.container, id);
    }
    assert.ok(cog.submissions.length - putsBefore > 3, 'some PUTs were refused with 409');
    assert.deepEqual(await failures(), before, 'no failure was counted against the channel');
    // The runs waited without using up attempts: each task's run key is its first.
    const keys = await t.container.db.db
      .selectFrom('tasks')
      .select('run_key')
      .where('id', 'in', ids)
      .execute();
    assert.deepEqual(
      keys.map((k) => k.run_key?.split('/')[1]),
      ['1', '1', '1'],
    );
  } finally {
    cog.options.slots = 4;
    cog.options.runMs = 300;
  }
});

test('a canceled task reaches the Cog cancel endpoint and its hold is voided', async () => {
  cog.options.runMs = 60_000;
  try {
    const before = cog.predictions.size;
    const id = await createTask('image', { prompt: 'a slow fox' });
    await until(async () => cog.predictions.size > before, 'the prediction upstream');
    const canceled = await t.call(account.key, 'POST', `/v1/tasks/${id}/cancel`);
    assert.equal(canceled.statusCode, 200, canceled.body);
    await until(async () => cog.cancels.length > 0, 'the cancel upstream');
    assert.equal(cog.predictions.get(cog.cancels[0] as string)?.status, 'canceled');
    const types = (
      await t.container.db.db.selectFrom('ledger_entries').select('type').where('task_id', '=', id).execute()
    )
      .map((e) => e.type)
      .sort();
    assert.deepEqual(types, ['hold', 'void']);
  } finally {
    cog.options.runMs = 300;
  }
});

test('a callback with a wrong token is 404; one for a finished run changes nothing', async () => {
  const id = await createTask('music', { mode: 'generate', songDescription: 'a short song for callbacks' });
  const task = await waitForFinal(t, account.key, id, 90_000);
  assert.equal(task.status, 'succeeded', JSON.stringify(task));
  const created = suno.creates().find((c) => JSON.stringify(c.body).includes('a short song for callbacks'));
  assert.ok(created, 'the create upstream');
  const callbackUrl = (created.body as { callBackUrl: string }).callBackUrl;
  assert.match(callbackUrl, /\/v1\/callbacks\/suno-main\/[^/]+$/);
  const path = new URL(callbackUrl).pathname;
  const wrong = await t.app.inject({
    method: 'POST',
    url: path.replace(/[^/]+$/, 'x'.repeat(32)),
    payload: { code: 200, data: { callbackType: 'complete' } },
  });
  expectError(wrong, 404, 'not_found');
  const before = await t.call(account.key, 'GET', `/v1/tasks/${id}`);
  const late = await t.app.inject({
    method: 'POST',
    url: path,
    payload: { code: 501, msg: 'failed late', data: { callbackType: 'error', task_id: 'x' } },
  });
  assert.equal(late.statusCode, 200, late.body);
  assert.equal(late.json().received, false);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual((await t.call(account.key, 'GET', `/v1/tasks/${id}`)).json(), before.json());
  await assertCapturedOnce(t.container, id);
});

test('a Tripo task lost upstream (expired) is run again as a new upstream task', async () => {
  tripo.nextTasks('expired');
  const before = tripo.callsTo('POST', '/task').length;
  const id = await createTask('model-3d', { task_type: 'text_to_model', prompt: 'a lost chair' });
  await assertServedByUs(id, ['model/gltf-binary', 'image/png']);
  assert.equal(tripo.callsTo('POST', '/task').length - before, 2, 'a second submission after the loss');
  const channel = (await t.admin('GET', '/admin/v1/channels'))
    .json()
    .channels.find((c: { name: string }) => c.name === 'tripo-main');
  assert.ok(channel.failed >= 1);
});

test('lyrics and style boost of music run at Suno', async () => {
  const before = suno.calls.length;
  const lyrics = await t.call(account.key, 'POST', '/v1/models/music/lyrics', {
    prompt: 'a song about rivers',
  });
  assert.equal(lyrics.statusCode, 200, lyrics.body);
  assert.ok((lyrics.json().variants as unknown[]).length > 0);
  const boost = await t.call(account.key, 'POST', '/v1/models/music/style-boost', { style: 'folk' });
  assert.equal(boost.statusCode, 200, boost.body);
  const paths = suno.calls.slice(before).map((c) => c.path);
  assert.ok(paths.includes('/api/v1/lyrics'), paths.join(' '));
  assert.ok(paths.includes('/api/v1/style/generate'), paths.join(' '));
});
