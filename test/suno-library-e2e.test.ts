/**
 * Music on a Suno channel end to end (GENERATORS_FILE pointing at the Suno fake): output files keep their
 * upstream ids, an artifact link of our own run names its track upstream (replace-section), personas and
 * singing voices are created at Suno and used in tasks, and a library of a model served only by Cog
 * answers 503 (CONTRACT §11, PROVIDERS.md §2).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { renderMp3 } from '../src/generators/simulator/media/mp3.ts';
import { type CogFake, startCogFake } from './fakes/cog.ts';
import { SunoFake } from './fakes/suno.ts';
import { musicRequest, runStart } from './fakes/suno-kit.ts';
import { type TestAccount, type TestApp, waitForFinal } from './helpers.ts';
import { FAKE_KEYS, startChannelApp } from './providers-kit.ts';

const LYRICS = '[Verse]\nMorning light on the river';

let suno: SunoFake;
let cog: CogFake;
let t: TestApp;
let account: TestAccount;
let upload: string;
/** A finished generate task on Suno and its two songs. */
let song: { id: string; upstreamTaskId: string };

async function createTask(settings: Record<string, unknown>): Promise<string> {
  const created = await t.call(account.key, 'POST', '/v1/tasks', { model: 'music', settings });
  assert.equal(created.statusCode, 202, created.body);
  return created.json().id as string;
}

async function succeeded(id: string): Promise<Record<string, unknown>> {
  const task = await waitForFinal(t, account.key, id, 60_000);
  assert.equal(task.status, 'succeeded', JSON.stringify(task));
  return task;
}

before(async () => {
  suno = await new SunoFake({ apiKey: FAKE_KEYS.SUNO_API_KEY, stepMs: 60 }).start();
  cog = await startCogFake({ runMs: 100 });
  t = await startChannelApp([
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
  const dir = join(tmpdir(), `suno-library-${randomUUID()}`);
  await mkdir(dir);
  const mp3 = join(dir, 'demo.mp3');
  await renderMp3(
    { kind: 'audio', format: 'mp3', filename: 'x.mp3', caption: '', seed: 'lib', durationSeconds: 30 },
    mp3,
  );
  const uploaded = await t.call(account.key, 'POST', '/v1/files?filename=demo.mp3', await readFile(mp3), {
    'content-type': 'audio/mpeg',
  });
  assert.equal(uploaded.statusCode, 201, uploaded.body);
  upload = uploaded.json().url as string;
  await rm(dir, { recursive: true, force: true });
  const id = await createTask({ mode: 'generate', songDescription: 'a cheerful song about a ginger cat' });
  await succeeded(id);
  const ref = (await t.admin('GET', `/admin/v1/tasks/${id}/run`)).json().upstream_ref as string;
  song = { id, upstreamTaskId: (JSON.parse(ref.slice('ch:suno-main:'.length)) as { taskId: string }).taskId };
});

after(async () => {
  await t.close();
  await Promise.all([suno.close(), cog.close()]);
});

test('each song of a Suno run keeps its upstream task and audio id with the artifact', async () => {
  const rows = await t.container.db.db
    .selectFrom('artifacts')
    .select(['idx', 'upstream'])
    .where('task_id', '=', song.id)
    .orderBy('idx')
    .execute();
  // The fake names track i of a task `<taskId>-a<i + 1>`.
  assert.deepEqual(
    rows.map((r) => JSON.parse(String(r.upstream))),
    [1, 2].map((n) => ({
      provider: 'suno',
      ids: { taskId: song.upstreamTaskId, audioId: `${song.upstreamTaskId}-a${n}` },
    })),
  );
  const task = await t.call(account.key, 'GET', `/v1/tasks/${song.id}`);
  assert.ok(!task.body.includes(song.upstreamTaskId), 'upstream ids are never shown');
});

test('replace_upload of an artifact of our own Suno run sends its taskId and audioId', async () => {
  const adapter = t.container.services.channels.adapterOf('suno-main');
  assert.ok(adapter);
  const link = `${t.container.config.publicBaseUrl}/v1/tasks/${song.id}/artifacts/1`;
  const request = musicRequest({
    mode: 'replace_upload',
    audio: [link],
    infillStartS: 2,
    infillEndS: 13,
    prompt: LYRICS,
    fullLyrics: LYRICS,
    tags: 'folk',
    title: 'River',
  });
  const before = suno.calls.length;
  await adapter.create(request, runStart(), AbortSignal.timeout(10_000));
  const call = suno.calls.slice(before).find((c) => c.path === '/api/v1/generate/replace-section');
  assert.ok(call, 'replace-section was called');
  const audioId = `${song.upstreamTaskId}-a2`;
  assert.deepEqual(call.body, {
    taskId: song.upstreamTaskId,
    audioId,
    prompt: LYRICS,
    tags: 'folk',
    title: 'River',
    infillStartS: 2,
    infillEndS: 13,
    fullLyrics: LYRICS,
    callBackUrl: (call.body as { callBackUrl: string }).callBackUrl,
  });
  assert.match(String((call.body as { callBackUrl: string }).callBackUrl), /\/v1\/callbacks\/suno-main\//);
});

test('replace_upload of a file Suno did not make fails before any call', async () => {
  const before = suno.calls.length;
  const id = await createTask({
    mode: 'replace_upload',
    audio: [upload],
    infillStartS: 2,
    infillEndS: 13,
    prompt: LYRICS,
    fullLyrics: LYRICS,
    tags: 'folk',
    title: 'River',
  });
  const task = await waitForFinal(t, account.key, id, 60_000);
  assert.equal(task.status, 'failed');
  assert.equal((task['error'] as { code: string }).code, 'generation_failed');
  assert.equal(suno.calls.length, before, 'no upstream call');
});
