/**
 * Video tasks over HTTP on the real app and worker, with a GENERATORS_FILE whose Seedance channel points
 * at the fake ModelArk (CONTRACT §11, PROVIDERS.md §4): every mode of `video` and `video-omni` with its
 * characters and voices succeed with the video served from our storage and captured once, the request
 * bodies carrying our files as absolute links under PUBLIC_BASE_URL; a refusal voids the hold with
 * content_refused; a 429 storm is retried to success; an output link that died upstream does not matter;
 * a cancel, or the channel timeout of a run resumed after it passed, deletes the task Seedance still queues.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { makeMp3, makeMp4, makePng } from '../src/media/fixtures.ts';
import { type SeedanceFake, startSeedanceFake } from './fakes/seedance.ts';
import { type TestAccount, type TestApp, waitForFinal } from './helpers.ts';
import { assertCapturedOnce, assertNoUpstreamUrl, startChannelApp, until } from './providers-kit.ts';

const KEY = 'ark-e2e-key';
let fake: SeedanceFake;
let t: TestApp;
let account: TestAccount;
let base: string;
const files: Record<'png' | 'mp4' | 'mp3', string> = { png: '', mp4: '', mp3: '' };

async function upload(path: string, filename: string, contentType: string): Promise<string> {
  const res = await t.call(account.key, 'POST', `/v1/files?filename=${filename}`, await readFile(path), {
    'content-type': contentType,
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().url as string;
}

before(async () => {
  fake = await startSeedanceFake({ apiKeys: [KEY], queuedMs: 100, runningMs: 200, urlTtlMs: 2_000 });
  t = await startChannelApp(
    [
      {
        name: 'seedance-main',
        provider: 'seedance',
        models: ['video', 'video-omni'],
        base_url: fake.url,
        api_key_env: 'SEEDANCE_API_KEY',
      },
    ],
    { env: { SEEDANCE_API_KEY: KEY } },
  );
  base = t.container.config.publicBaseUrl;
  account = await t.account({ balanceMinor: 100_000_000 });
  const dir = join(tmpdir(), `seedance-e2e-${randomUUID()}`);
  await mkdir(dir);
  files.png = await upload(await makePng(dir, 640, 480), 'face.png', 'image/png');
  files.mp4 = await upload(await makeMp4(dir, 2, 320, 240), 'clip.mp4', 'video/mp4');
  files.mp3 = await upload(await makeMp3(dir, 3), 'voice.mp3', 'audio/mpeg');
});
after(async () => {
  await t.close();
  await fake.close();
});

/** Runs a task to its end; its final view and the body Seedance received for it. */
async function run(model: string, settings: Record<string, unknown>) {
  const created = await t.call(account.key, 'POST', '/v1/tasks', { model, settings });
  assert.equal(created.statusCode, 202, created.body);
  const id = created.json().id as string;
  const task = await waitForFinal(t, account.key, id, 90_000);
  // Tasks run side by side: the body is found by its prompt.
  const body = fake.bodies.find((b) => (b['content'] as { text?: string }[])[0]?.text === settings['prompt']);
  return { id, task, body };
}

/** The absolute link Seedance is given for one of our uploads. */
function absolute(link: string): string {
  return new URL(new URL(link, base).pathname, base).toString();
}

async function assertVideo(id: string, task: Record<string, unknown>): Promise<void> {
  assert.equal(task['status'], 'succeeded', JSON.stringify(task));
  assertNoUpstreamUrl(task, [fake.url]);
  await assertCapturedOnce(t.container, id);
  const file = await t.call(account.key, 'GET', `/v1/tasks/${id}/artifacts/0`);
  assert.equal(file.statusCode, 200);
  assert.equal(file.headers['content-type'], 'video/mp4');
}

test('every mode of video succeeds, its files sent as absolute links under PUBLIC_BASE_URL', async () => {
  const [frames, reference, omni] = await Promise.all([
    run('video', { mode: 'frames', prompt: 'a paper boat', image_urls: [files.png] }),
    run('video', {
      mode: 'reference',
      prompt: 'the face of @Image1 in @Video1',
      ref_image_urls: [files.png],
      ref_video_urls: [files.mp4],
    }),
    run('video', {
      mode: 'omni',
      prompt: '@Image1 sings @Audio1',
      ref_image_urls: [files.png],
      ref_audio_urls: [files.mp3],
    }),
  ]);
  for (const r of [frames, reference, omni]) await assertVideo(r.id, r.task);
  assert.deepEqual(frames.body?.['content'], [
    { type: 'text', text: 'a paper boat' },
    { type: 'image_url', image_url: { url: absolute(files.png) }, role: 'first_frame' },
  ]);
  assert.equal(frames.body?.['ratio'], 'adaptive');
  assert.deepEqual(reference.body?.['content'], [
    { type: 'text', text: 'the face of @Image1 in @Video1' },
    { type: 'image_url', image_url: { url: absolute(files.png) }, role: 'reference_image' },
    { type: 'video_url', video_url: { url: absolute(files.mp4) }, role: 'reference_video' },
  ]);
  assert.deepEqual(omni.body?.['content'], [
    { type: 'text', text: '@Image1 sings @Audio1' },
    { type: 'image_url', image_url: { url: absolute(files.png) }, role: 'reference_image' },
    { type: 'audio_url', audio_url: { url: absolute(files.mp3) }, role: 'reference_audio' },
  ]);
  for (const r of [frames, reference, omni]) {
    const run = (await t.admin('GET', `/admin/v1/tasks/${r.id}/run`)).json();
    assert.deepEqual(run.upstream_cost, { amount: 108900, currency: 'tokens' }, 'usage is the upstream cost');
    assert.equal(r.body?.['model'], 'dreamina-seedance-2-0-260128');
    assert.equal(r.body?.['duration'], 5);
    assert.equal(r.body?.['resolution'], '720p');
  }
});

/** A video-omni character of the test upload's picture, as the API answers it (201). */
async function saveCharacter(name: string): Promise<{ id: string; status: string }> {
  const saved = await t.call(account.key, 'POST', '/v1/models/video-omni/characters', {
    name,
    portrait_url: files.png,
    full_body_url: files.png,
  });
  assert.equal(saved.statusCode, 201, saved.body);
  return saved.json();
}

test('video-omni: a saved character and voice go as reference pictures and audio', async () => {
  const character = await saveCharacter('Ann');
  assert.equal(character.status, 'ready');
  assertNoUpstreamUrl(character, [files.png]);
  const voice = await t.call(account.key, 'POST', '/v1/models/video-omni/voices', {
    name: 'Ann voice',
    base_voice_id: 'preset-soft-alto',
    sample_urls: [files.mp3],
  });
  assert.equal(voice.statusCode, 201, voice.body);
  const { id, task, body } = await run('video-omni', {
    prompt: 'Ann dances on a rooftop',
    character_ids: [character.id],
    audio_ids: [voice.json().id],
    duration: 6,
  });
  await assertVideo(id, task);
  assert.deepEqual(body?.['content'], [
    { type: 'text', text: 'Ann dances on a rooftop' },
    { type: 'image_url', image_url: { url: absolute(files.png) }, role: 'reference_image' },
    { type: 'image_url', image_url: { url: absolute(files.png) }, role: 'reference_image' },
    { type: 'audio_url', audio_url: { url: absolute(files.mp3) }, role: 'reference_audio' },
  ]);
  assert.equal(body?.['duration'], 6);
  assert.equal(body?.['ratio'], '16:9');
});

test('video-omni: a preset voice goes as its stored sample, which the link serves', async () => {
  const character = await saveCharacter('Bo');
  const { id, task, body } = await run('video-omni', {
    prompt: 'a narrator over a city at night',
    character_ids: [character.id],
    audio_ids: ['preset-warm-narrator'],
  });
  await assertVideo(id, task);
  const sample = `${base}/samples/preset-warm-narrator.mp3`;
  assert.deepEqual(body?.['content'], [
    { type: 'text', text: 'a narrator over a city at night' },
    { type: 'image_url', image_url: { url: absolute(files.png) }, role: 'reference_image' },
    { type: 'image_url', image_url: { url: absolute(files.png) }, role: 'reference_image' },
    { type: 'audio_url', audio_url: { url: sample }, role: 'reference_audio' },
  ]);
  const served = await t.app.inject({ method: 'GET', url: new URL(sample).pathname });
  assert.equal(served.statusCode, 200);
  assert.equal(served.headers['content-type'], 'audio/mpeg');
});

test('a content refusal fails the task with content_refused and voids the hold', async () => {
  const { id, task } = await run('video', {
    mode: 'frames',
    prompt: '[seedance:refuse] something',
    image_urls: [files.png],
  });
  assert.equal(task.status, 'failed');
  assert.equal((task['error'] as { code: string }).code, 'content_refused');
  const types = (
    await t.container.db.db.selectFrom('ledger_entries').select('type').where('task_id', '=', id).execute()
  )
    .map((e) => e.type)
    .sort();
  assert.deepEqual(types, ['hold', 'void']);
});

test('a 429 storm is retried after Retry-After until the task succeeds', async () => {
  fake.fail('429', '429');
  const posts = fake.calls.filter((c) => c.method === 'POST').length;
  const { id, task } = await run('video', {
    mode: 'frames',
    prompt: 'through the storm',
    image_urls: [files.png],
  });
  await assertVideo(id, task);
  assert.equal(fake.calls.filter((c) => c.method === 'POST').length - posts, 3, 'two refused, one accepted');
});

test('an output link that died upstream: the task is read again and the video stored', async () => {
  fake.staleLinks = 1;
  const { id, task } = await run('video', { mode: 'frames', prompt: 'a late link', image_urls: [files.png] });
  await assertVideo(id, task);
  assert.equal(fake.staleLinks, 0, 'the dead link was handed out');
});

/**
 * A frames task on a channel of its own whose Seedance task stays queued (60 s), created and driven until
 * its upstream handle is saved; `scenario` then does its part, and the run must DELETE the queued task at
 * Seedance within 4 s. Answers that task's id; the channel's app is closed after.
 */
async function withQueuedUpstream(
  channel: { name: string; timeout?: string },
  env: Record<string, string>,
  prompt: string,
  scenario: (app: TestApp, owner: TestAccount, id: string) => Promise<void>,
): Promise<string> {
  const app = await startChannelApp(
    [
      {
        ...channel,
        provider: 'seedance',
        models: ['video'],
        base_url: fake.url,
        api_key_env: 'SEEDANCE_API_KEY',
      },
    ],
    { env: { SEEDANCE_API_KEY: KEY, ...env } },
  );
  const queuedMs = fake.options.queuedMs;
  fake.options.queuedMs = 60_000;
  const dir = join(tmpdir(), `seedance-e2e-${randomUUID()}`);
  try {
    const owner = await app.account({ balanceMinor: 100_000_000 });
    await mkdir(dir);
    const picture = await readFile(await makePng(dir, 640, 480));
    const uploaded = await app.call(owner.key, 'POST', '/v1/files?filename=a.png', picture, {
      'content-type': 'image/png',
    });
    assert.equal(uploaded.statusCode, 201, uploaded.body);
    const created = await app.call(owner.key, 'POST', '/v1/tasks', {
      model: 'video',
      settings: { mode: 'frames', prompt, image_urls: [uploaded.json().url] },
    });
    assert.equal(created.statusCode, 202, created.body);
    const id = created.json().id as string;
    const upstream = () =>
      [...fake.tasks.values()].find(
        (task) => (task.body['content'] as { text?: string }[])[0]?.text === prompt,
      );
    const handle = async () =>
      (
        await app.container.db.db
          .selectFrom('tasks')
          .select('provider_ref')
          .where('id', '=', id)
          .executeTakeFirst()
      )?.provider_ref ?? null;
    await until(
      async () => upstream() !== undefined && (await handle()) !== null,
      'the saved upstream task',
      30_000,
    );
    await scenario(app, owner, id);
    const queued = upstream()?.id as string;
    await until(async () => fake.deletes.includes(queued), 'the DELETE of the queued task', 4_000);
    return queued;
  } finally {
    fake.options.queuedMs = queuedMs;
    await app.close();
    await rm(dir, { recursive: true, force: true });
  }
}

test('a cancel while Seedance still queues the task deletes it there, even when the lease notices first', async () => {
  // A cancel removes the task's job, so the worker's next lease renewal fails and stops the run; with a
  // short lease that renewal comes long before the next read (every 5 s). The run must still cancel
  // upstream on its way out (CONTRACT §11): a task Seedance still queues is deleted (PROVIDERS.md §4).
  const queued = await withQueuedUpstream(
    { name: 'seedance-lease' },
    { JOB_LEASE: '1s' },
    'a queue that never moves',
    async (app, owner, id) => {
      const canceled = await app.call(owner.key, 'POST', `/v1/tasks/${id}/cancel`);
      assert.equal(canceled.statusCode, 200, canceled.body);
    },
  );
  assert.equal(fake.tasks.get(queued)?.cancelled, true);
});

test('a cancel wakes the run: the task Seedance still queues is deleted at once, not at the next read', async () => {
  // Reads are 5 s apart; the cancel wakes the run where it sleeps between two (as a callback would), so
  // the DELETE goes out while the task is still queued upstream, however near its start it is.
  const prompt = 'a cancel between two reads';
  await withQueuedUpstream({ name: 'seedance-wake' }, {}, prompt, async (app, owner, id) => {
    const upstream = [...fake.tasks.values()].find(
      (task) => (task.body['content'] as { text?: string }[])[0]?.text === prompt,
    );
    assert.ok(upstream);
    const canceled = await app.call(owner.key, 'POST', `/v1/tasks/${id}/cancel`);
    assert.equal(canceled.statusCode, 200, canceled.body);
    await until(async () => fake.deletes.includes(upstream.id), 'the DELETE right after the cancel', 1_500);
  });
});

test('a run resumed after its channel timeout passed deletes the task Seedance still queues', async () => {
  // The worker stops while Seedance queues the task, and the channel's timeout passes before a worker
  // resumes the run: the run ends with timeout at once, and cancels upstream where it can (PROVIDERS.md
  // "Rules": when the timeout passes, upstream cancel where possible; §4: DELETE while queued).
  const queued = await withQueuedUpstream(
    { name: 'seedance-timeout', timeout: '3s' },
    {},
    'a queue outliving its worker',
    async (app, owner, id) => {
      await app.container.worker.stop();
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      app.container.worker.start();
      const task = await waitForFinal(app, owner.key, id, 30_000);
      assert.equal((task['error'] as { code: string } | undefined)?.code, 'timeout', JSON.stringify(task));
    },
  );
  assert.equal(fake.tasks.get(queued)?.cancelled, true);
});
