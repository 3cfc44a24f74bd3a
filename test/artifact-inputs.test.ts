/**
 * A caller's own result file named as a task input by its artifact link (`/v1/tasks/<id>/artifacts/<n>`,
 * which needs an API key no provider has), on real channels against the fakes: a provider that takes
 * uploaded files gets the bytes read from our storage (Tripo), and a provider that fetches URLs gets a
 * direct link lent for the run under PUBLIC_BASE_URL that works without a key (Seedance, Cog; PROVIDERS.md
 * "Rules"). The lent link is no upload of the caller's, and sweeping it never touches the result file.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { KeyPrincipal } from '../src/accounts/index.ts';
import { makeMp3 } from '../src/media/fixtures.ts';
import { type CogFake, startCogFake } from './fakes/cog.ts';
import { type SeedanceFake, startSeedanceFake } from './fakes/seedance.ts';
import { TripoFake } from './fakes/tripo.ts';
import { expectError, type TestAccount, type TestApp, waitForFinal } from './helpers.ts';
import { assertCapturedOnce, FAKE_KEYS, startChannelApp } from './providers-kit.ts';

const SEEDANCE_KEY = 'ark-artifacts-key';
let tripo: TripoFake;
let seedance: SeedanceFake;
let cog: CogFake;
let t: TestApp;
let account: TestAccount;
let base: string;
let dir: string;
/** Result files of the account's own tasks, by what they are: the link and the bytes. */
const sources: Record<'picture' | 'track', { taskId: string; link: string; bytes: Buffer }> = {
  picture: { taskId: '', link: '', bytes: Buffer.alloc(0) },
  track: { taskId: '', link: '', bytes: Buffer.alloc(0) },
};

async function succeeded(model: string, settings: Record<string, unknown>): Promise<string> {
  const created = await t.call(account.key, 'POST', '/v1/tasks', { model, settings });
  assert.equal(created.statusCode, 202, created.body);
  const id = created.json().id as string;
  const task = await waitForFinal(t, account.key, id, 60_000);
  assert.equal(task.status, 'succeeded', JSON.stringify(task));
  return id;
}

async function source(model: string, settings: Record<string, unknown>) {
  const taskId = await succeeded(model, settings);
  const file = await t.call(account.key, 'GET', `/v1/tasks/${taskId}/artifacts/0`);
  assert.equal(file.statusCode, 200);
  return { taskId, link: `${base}/v1/tasks/${taskId}/artifacts/0`, bytes: file.rawPayload };
}

/** Fetches a link over HTTP as a provider would: no API key. */
async function fetchAsProvider(url: string): Promise<{ status: number; bytes: Buffer }> {
  const answer = await fetch(url);
  return { status: answer.status, bytes: Buffer.from(await answer.arrayBuffer()) };
}

before(async () => {
  tripo = await TripoFake.start({ apiKeys: [FAKE_KEYS.TRIPO_API_KEY], queuedMs: 50, runningMs: 150 });
  seedance = await startSeedanceFake({ apiKeys: [SEEDANCE_KEY], queuedMs: 50, runningMs: 150 });
  dir = await mkdtemp(path.join(tmpdir(), 'artifact-inputs-'));
  const mp3 = await readFile(await makeMp3(dir, 3));
  cog = await startCogFake({
    runMs: 100,
    files: [
      { bytes: mp3, contentType: 'audio/mpeg' },
      { bytes: mp3, contentType: 'audio/mpeg' },
    ],
  });
  t = await startChannelApp(
    [
      {
        name: 'tripo-main',
        provider: 'tripo',
        models: ['model-3d'],
        base_url: tripo.baseUrl,
        api_key_env: 'TRIPO_API_KEY',
      },
      {
        name: 'seedance-main',
        provider: 'seedance',
        models: ['video'],
        base_url: seedance.url,
        api_key_env: 'SEEDANCE_API_KEY',
        timeout: '10m',
      },
      { name: 'cog-main', provider: 'cog', models: ['music'], base_url: cog.url },
    ],
    { env: { SEEDANCE_API_KEY: SEEDANCE_KEY } },
  );
  base = t.container.config.publicBaseUrl;
  account = await t.account({ balanceMinor: 100_000_000 });
  // A picture made on the simulator (no channel serves `image`), a track made on Cog.
  sources.picture = await source('image', { prompt: 'a red fox' });
  sources.track = await source('music', { mode: 'generate', songDescription: 'a song about a fox' });
});

after(async () => {
  await t.close();
  await Promise.all([tripo.close(), seedance.close(), cog.close()]);
  await rm(dir, { recursive: true, force: true });
});

test('Tripo uploads a result file read from our storage, never fetched over HTTP', async () => {
  // The link answers 401 without a key: only a read from storage can give Tripo the picture.
  assert.equal((await fetchAsProvider(sources.picture.link)).status, 401);
  const id = await succeeded('model-3d', {
    task_type: 'image_to_model',
    image_url: [sources.picture.link],
    texture: false,
  });
  await assertCapturedOnce(t.container, id);
  const upload = tripo.calls.find((call) => call.upload !== undefined)?.upload;
  assert.deepEqual([upload?.contentType, upload?.size], ['image/png', sources.picture.bytes.length]);
});

test('Seedance gets a direct link lent for the run, which works without a key', async () => {
  const id = await succeeded('video', {
    mode: 'reference',
    prompt: 'the fox of @Image1 runs',
    ref_image_urls: [sources.picture.link],
  });
  await assertCapturedOnce(t.container, id);
  const body = seedance.bodies.find((b) => (b['content'] as { text?: string }[])[0]?.text?.includes('fox'));
  assert.ok(body, 'Seedance received the task');
  const lent = (body['content'] as { image_url?: { url: string } }[])[1]?.image_url?.url ?? '';
  assert.match(lent, new RegExp(`^${base}/files/[A-Za-z0-9]{32}/`), lent);
  const fetched = await fetchAsProvider(lent);
  assert.equal(fetched.status, 200);
  assert.ok(fetched.bytes.equals(sources.picture.bytes), 'the result file itself');
  // The link lives as long as the channel's timeout (10 minutes) from the run's creation, which is a
  // moment before the row's own created_at.
  const row = await t.container.db.db
    .selectFrom('uploads')
    .selectAll()
    .where('source_artifact', '=', `${sources.picture.taskId}/0`)
    .executeTakeFirstOrThrow();
  const lifeMs = Date.parse(row.expires_at) - Date.parse(row.created_at);
  assert.ok(lifeMs > 10 * 60_000 - 5_000 && lifeMs <= 10 * 60_000, `${lifeMs} ms`);
  // It is no upload of the caller's: not shown, not counted, not readable or deletable as one.
  assert.equal((await t.call(account.key, 'GET', `/v1/files/${row.id}`)).statusCode, 404);
  assert.equal((await t.call(account.key, 'DELETE', `/v1/files/${row.id}`)).statusCode, 404);
  const listed = await t.container.services.uploads.list({ accountId: account.id } as KeyPrincipal);
  assert.deepEqual([listed.files.length, listed.usedBytes], [0, 0]);
});

test('a lent link expires no later than the result file it lends', async () => {
  const tasks = () => t.container.db.db.updateTable('tasks').where('id', '=', sources.picture.taskId);
  const original = await t.container.db.db
    .selectFrom('tasks')
    .select('files_expire_at')
    .where('id', '=', sources.picture.taskId)
    .executeTakeFirstOrThrow();
  // The picture's files expire in 5 minutes, within the channel's 10-minute timeout.
  const filesExpireAt = new Date(Date.now() + 5 * 60_000).toISOString();
  await tasks().set({ files_expire_at: filesExpireAt }).execute();
  try {
    await succeeded('video', {
      mode: 'reference',
      prompt: 'the fox of @Image1 sleeps',
      ref_image_urls: [sources.picture.link],
    });
    const row = await t.container.db.db
      .selectFrom('uploads')
      .select('expires_at')
      .where('source_artifact', '=', `${sources.picture.taskId}/0`)
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
    // Past it the download answers 404 artifact_expired: the link must not go on serving the bytes.
    assert.ok(row.expires_at <= filesExpireAt, `${row.expires_at} > ${filesExpireAt}`);
  } finally {
    await tasks().set({ files_expire_at: original.files_expire_at }).execute();
  }
});

test('Cog gets the lent link among its input, like an upload of ours', async () => {
  await succeeded('music', { mode: 'cover_upload', audio: [sources.track.link], songDescription: 'a cover' });
  const input = (cog.submissions.at(-1) as { input: { audio: string[] } }).input;
  assert.match(input.audio[0] ?? '', new RegExp(`^${base}/files/[A-Za-z0-9]{32}/`));
  const fetched = await fetchAsProvider(input.audio[0] ?? '');
  assert.equal(fetched.status, 200);
  assert.ok(fetched.bytes.equals(sources.track.bytes));
});

test('an expired lent link is swept without the result file it lent', async () => {
  const lent = await t.container.db.db
    .selectFrom('uploads')
    .select(['token', 'filename'])
    .where('source_artifact', 'is not', null)
    .execute();
  assert.ok(lent.length >= 2);
  await t.container.db.db
    .updateTable('uploads')
    .set({ expires_at: new Date(Date.now() - 1_000).toISOString() })
    .where('source_artifact', 'is not', null)
    .execute();
  assert.ok((await t.container.services.uploads.sweep()) >= 2);
  for (const row of lent) {
    const gone = await fetchAsProvider(`${base}/files/${row.token}/${encodeURIComponent(row.filename)}`);
    assert.equal(gone.status, 404);
  }
  for (const { taskId, bytes } of Object.values(sources)) {
    const file = await t.call(account.key, 'GET', `/v1/tasks/${taskId}/artifacts/0`);
    assert.equal(file.statusCode, 200);
    assert.ok(file.rawPayload.equals(bytes), 'the result file is untouched');
  }
});

test("another account's artifact link is refused at acceptance, nothing lent", async () => {
  const other = await t.account({ balanceMinor: 10_000_000 });
  const before = await t.container.db.db.selectFrom('uploads').select('id').execute();
  const refused = await t.call(other.key, 'POST', '/v1/tasks', {
    model: 'video',
    settings: { mode: 'reference', prompt: 'not mine @Image1', ref_image_urls: [sources.picture.link] },
  });
  expectError(refused, 422, 'invalid_settings');
  // The message says no more than an expired file of one's own would: it never tells another's task exists.
  assert.match(refused.json().error.message, /no file of your tasks at .*, or its storage period is over$/);
  const after = await t.container.db.db.selectFrom('uploads').select('id').execute();
  assert.equal(after.length, before.length);
});
