/**
 * Music on a Suno channel end to end (GENERATORS_FILE pointing at the Suno fake): output files keep their
 * upstream ids, an artifact link of our own run names its track upstream (replace-section) or reaches Suno
 * as a direct link lent for the run (other modes), personas and singing voices are created at Suno and
 * used in tasks, and a library of a model served only by Cog answers 503 (CONTRACT §11, PROVIDERS.md §2).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type CogFake, startCogFake } from './fakes/cog.ts';
import { SunoFake } from './fakes/suno.ts';
import { type TestAccount, type TestApp, waitForFinal } from './helpers.ts';
import { channelCounts, FAKE_KEYS, startChannelApp, until, uploadMp3 } from './providers-kit.ts';

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
  suno = await new SunoFake({
    apiKey: FAKE_KEYS.SUNO_API_KEY,
    stepMs: 60,
    knownSingersOnly: true,
    trackSeconds: 40,
  }).start();
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
  upload = await uploadMp3(t, account.key, 'lib');
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
  const link = `${t.container.config.publicBaseUrl}/v1/tasks/${song.id}/artifacts/1`;
  const before = suno.calls.length;
  const id = await createTask({
    mode: 'replace_upload',
    audio: [link],
    infillStartS: 2,
    infillEndS: 13,
    prompt: LYRICS,
    fullLyrics: LYRICS,
    tags: 'folk',
    title: 'River',
    negativeTags: 'metal',
  });
  await succeeded(id);
  const [call] = callsTo('/api/v1/generate/replace-section', before);
  assert.ok(call, 'replace-section was called');
  assert.deepEqual(Object.keys(call.body).sort(), [
    'audioId',
    'callBackUrl',
    'fullLyrics',
    'infillEndS',
    'infillStartS',
    'negativeTags',
    'prompt',
    'tags',
    'taskId',
    'title',
  ]);
  assert.equal(call.body['taskId'], song.upstreamTaskId);
  assert.equal(call.body['audioId'], `${song.upstreamTaskId}-a2`);
  assert.equal(call.body['prompt'], LYRICS);
  assert.equal(call.body['fullLyrics'], LYRICS);
  assert.equal(call.body['tags'], 'folk');
  assert.equal(call.body['title'], 'River');
  assert.equal(call.body['negativeTags'], 'metal');
  assert.equal(call.body['infillStartS'], 2);
  assert.equal(call.body['infillEndS'], 13);
  assert.match(String(call.body['callBackUrl']), CALLBACK_URL);
});

test('an artifact link of another account is refused at acceptance; our own reaches Suno as a lent link', async () => {
  const base = t.container.config.publicBaseUrl;
  const link = `${base}/v1/tasks/${song.id}/artifacts/0`;
  const other = await t.account({ balanceMinor: 10_000_000 });
  const refused = await t.call(other.key, 'POST', '/v1/tasks', {
    model: 'music',
    settings: { mode: 'extend', audio: [link], continueAt: 10, style: 'folk', prompt: LYRICS },
  });
  assert.equal(refused.statusCode, 422, refused.body);
  assert.equal(refused.json().error.code, 'invalid_settings');
  const before = suno.calls.length;
  const id = await createTask({
    mode: 'extend',
    audio: [link],
    continueAt: 10,
    style: 'folk',
    prompt: LYRICS,
  });
  await succeeded(id);
  // The artifact link needs an API key; Suno gets a direct link lent for the run, fetched without one.
  const [call] = callsTo('/api/v1/generate/upload-extend', before);
  const uploadUrl = String(call?.body['uploadUrl']);
  assert.match(uploadUrl, new RegExp(`^${base}/files/[A-Za-z0-9]{32}/`));
  const lent = await fetch(uploadUrl);
  assert.equal(lent.status, 200);
  const own = await t.call(account.key, 'GET', `/v1/tasks/${song.id}/artifacts/0`);
  assert.ok(Buffer.from(await lent.arrayBuffer()).equals(own.rawPayload), 'the track itself');
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

/** The calls Suno received at `path` since call number `from`. */
function callsTo(path: string, from = 0): { body: Record<string, unknown> }[] {
  return suno.calls.slice(from).filter((c) => c.path === path) as { body: Record<string, unknown> }[];
}

const CALLBACK_URL = /^http:\/\/127\.0\.0\.1:\d+\/v1\/callbacks\/suno-main\/[A-Za-z0-9]+$/;

async function extendWith(field: 'persona' | 'voice', id: string): Promise<Record<string, unknown>> {
  const before = suno.calls.length;
  const task = await createTask({
    mode: 'extend',
    audio: [upload],
    continueAt: 10,
    style: 'folk',
    prompt: LYRICS,
    [field]: id,
  });
  await succeeded(task);
  const [call] = callsTo('/api/v1/generate/upload-extend', before);
  assert.ok(call, 'upload-extend was called');
  return call.body;
}

test('a persona from a song version made on Suno is created there and sung in a task', async () => {
  const before = suno.calls.length;
  const created = await t.call(account.key, 'POST', '/v1/models/music/personas', {
    source_task_id: song.id,
    index: 0,
    name: 'Ginger',
    description: 'warm and playful',
    style: 'indie pop',
  });
  assert.equal(created.statusCode, 201, created.body);
  const persona = created.json() as Record<string, unknown>;
  assert.deepEqual(Object.keys(persona).sort(), [
    'created_at',
    'description',
    'id',
    'name',
    'song_title',
    'style',
  ]);
  const [call] = callsTo('/api/v1/generate/generate-persona', before);
  assert.ok(call, 'generate-persona was called');
  assert.deepEqual(call.body, {
    taskId: song.upstreamTaskId,
    audioId: `${song.upstreamTaskId}-a1`,
    name: 'Ginger',
    description: 'warm and playful',
    style: 'indie pop',
  });
  const personaId = suno.voices.personas.get(`${song.upstreamTaskId}-a1`)?.id;
  assert.ok(personaId);
  assert.ok(!created.body.includes(personaId), 'the upstream id is never shown');
  const body = await extendWith('persona', String(persona['id']));
  assert.equal(body['personaId'], personaId);
  assert.equal(body['personaModel'], 'style_persona');
});

test('a persona of a song whose Suno ids we do not have is 502 persona_create_failed, no call', async () => {
  const id = await createTask({ mode: 'generate', songDescription: 'a song from before upstream ids' });
  await succeeded(id);
  // As a song made before its ids were kept (or on the simulator): nothing names it upstream.
  await t.container.db.db
    .updateTable('artifacts')
    .set({ upstream: null })
    .where('task_id', '=', id)
    .execute();
  const before = suno.calls.length;
  const refused = await t.call(account.key, 'POST', '/v1/models/music/personas', {
    source_task_id: id,
    index: 0,
    name: 'Old',
    description: 'from an old song',
  });
  assert.equal(refused.statusCode, 502, refused.body);
  assert.equal(refused.json().error.code, 'persona_create_failed');
  assert.equal(suno.calls.length, before, 'no upstream call');
  const list = await t.call(account.key, 'GET', '/v1/models/music/personas');
  assert.ok(!list.body.includes('"Old"'), 'nothing was stored');
});

test('Suno refusing a second persona of a track is 502 persona_create_failed', async () => {
  const body = { source_task_id: song.id, index: 1, name: 'Second', description: 'take two' };
  const first = await t.call(account.key, 'POST', '/v1/models/music/personas', body);
  assert.equal(first.statusCode, 201, first.body);
  const deleted = await t.call(account.key, 'DELETE', `/v1/models/music/personas/${first.json().id}`);
  assert.equal(deleted.statusCode, 204);
  const again = await t.call(account.key, 'POST', '/v1/models/music/personas', body);
  assert.equal(again.statusCode, 502, again.body);
  assert.equal(again.json().error.code, 'persona_create_failed');
});

async function voice(id: string): Promise<Record<string, unknown>> {
  const got = await t.call(account.key, 'GET', `/v1/models/music/voices/${id}`);
  assert.equal(got.statusCode, 200, got.body);
  return got.json() as Record<string, unknown>;
}

async function voiceIn(id: string, status: string): Promise<Record<string, unknown>> {
  let last: Record<string, unknown> = {};
  await until(async () => {
    last = await voice(id);
    return last['status'] === status;
  }, `voice ${id} ${status}`);
  return last;
}

test('a singing voice at Suno: processing, phrase, failed check, retry, verified, sung in a task', async () => {
  let from = suno.calls.length;
  const created = await t.call(account.key, 'POST', '/v1/models/music/voices', {
    source_url: upload,
    start_seconds: 2,
    end_seconds: 22.5,
    language: 'en',
  });
  assert.equal(created.statusCode, 201, created.body);
  const id = String(created.json().id);
  assert.equal(created.json().status, 'processing');
  assert.equal(created.json().name, null);
  const [validate] = callsTo('/api/v1/voice/validate', from);
  assert.ok(validate, 'voice/validate was called');
  assert.deepEqual(Object.keys(validate.body).sort(), [
    'callBackUrl',
    'language',
    'vocalEndS',
    'vocalStartS',
    'voiceUrl',
  ]);
  assert.equal(validate.body['voiceUrl'], upload);
  assert.equal(validate.body['vocalStartS'], 2);
  assert.equal(validate.body['vocalEndS'], 22.5);
  assert.equal(validate.body['language'], 'en');
  assert.match(String(validate.body['callBackUrl']), CALLBACK_URL);
  const validation = [...suno.voices.validations.values()].find((v) => v.body === validate.body);
  assert.ok(validation);

  const waiting = await voiceIn(id, 'pending_recording');
  assert.equal(waiting['phrase'], validation.phrases[0]);
  // Suno's callback for the validation reaches our route, which takes it without effect.
  await until(
    async () => suno.callbacksSent.some((c) => c.url === validate.body['callBackUrl']),
    'the validation callback',
  );
  const posted = suno.callbacksSent.find((c) => c.url === validate.body['callBackUrl']);
  assert.equal(posted?.status, 200);
  assert.ok(callsTo('/api/v1/voice/validate-info', from).every((c) => c.body === null));

  // A recording Suno does not accept: verifying, then failed with Suno's reason.
  from = suno.calls.length;
  const failing = await t.call(account.key, 'POST', `/v1/models/music/voices/${id}/verify`, {
    recording_url: upload,
    name: 'Anna [suno:voice-fail]',
  });
  assert.equal(failing.statusCode, 200, failing.body);
  assert.equal(failing.json().status, 'verifying');
  const [check] = callsTo('/api/v1/voice/generate', from);
  assert.ok(check, 'voice/generate was called');
  assert.deepEqual(Object.keys(check.body).sort(), ['callBackUrl', 'taskId', 'verifyUrl', 'voiceName']);
  assert.equal(check.body['taskId'], validation.id);
  assert.equal(check.body['verifyUrl'], upload);
  assert.equal(check.body['voiceName'], 'Anna [suno:voice-fail]');
  assert.match(String(check.body['callBackUrl']), CALLBACK_URL);
  const failed = await voiceIn(id, 'failed');
  assert.equal(failed['error'], 'the recording does not match the phrase');
  assert.equal(failed['name'], null);

  // Retry: regenerate (its key spelled calBackUrl), a new phrase.
  from = suno.calls.length;
  const retried = await t.call(account.key, 'POST', `/v1/models/music/voices/${id}/retry`);
  assert.equal(retried.statusCode, 200, retried.body);
  assert.equal(retried.json().status, 'pending_recording');
  const [regenerate] = callsTo('/api/v1/voice/regenerate', from);
  assert.ok(regenerate, 'voice/regenerate was called');
  assert.deepEqual(Object.keys(regenerate.body).sort(), ['calBackUrl', 'taskId']);
  assert.equal(regenerate.body['taskId'], validation.id);
  assert.match(String(regenerate.body['calBackUrl']), CALLBACK_URL);
  assert.equal(retried.json().phrase, validation.phrases[1]);
  assert.notEqual(retried.json().phrase, waiting['phrase']);

  // A task cannot use it yet.
  const early = await t.call(account.key, 'POST', '/v1/tasks', {
    model: 'music',
    settings: { mode: 'extend', audio: [upload], continueAt: 10, style: 'folk', prompt: LYRICS, voice: id },
  });
  assert.equal(early.statusCode, 422, early.body);
  assert.equal(early.json().error.code, 'voice_not_ready');

  const verified = await t.call(account.key, 'POST', `/v1/models/music/voices/${id}/verify`, {
    recording_url: upload,
    name: 'Anna',
  });
  assert.equal(verified.statusCode, 200, verified.body);
  assert.equal(verified.json().status, 'verifying');
  // No read of the voice in between: accepting the task asks Suno and finds the voice verified.
  from = suno.calls.length;
  let taskId = '';
  await until(async () => {
    const accepted = await t.call(account.key, 'POST', '/v1/tasks', {
      model: 'music',
      settings: { mode: 'extend', audio: [upload], continueAt: 10, style: 'folk', prompt: LYRICS, voice: id },
    });
    if (accepted.statusCode !== 202) {
      assert.equal(accepted.json().error.code, 'voice_not_ready', accepted.body);
      return false;
    }
    taskId = String(accepted.json().id);
    return true;
  }, 'a task accepting the voice');
  await succeeded(taskId);
  const verification = [...suno.voices.verifications.values()].find((v) => v.body['voiceName'] === 'Anna');
  assert.ok(verification);
  const [extend] = callsTo('/api/v1/generate/upload-extend', from);
  assert.ok(extend, 'upload-extend was called');
  assert.equal(extend.body['personaId'], verification.voiceId);
  assert.equal(extend.body['personaModel'], 'voice_persona');

  const ready = await voice(id);
  assert.equal(ready['status'], 'ready');
  assert.equal(ready['name'], 'Anna');
  assert.equal(ready['phrase'], undefined);
  assert.ok(!JSON.stringify(ready).includes(verification.voiceId), 'the upstream id is never shown');
});

test('a voice whose piece Suno cannot validate turns failed with Suno’s reason', async () => {
  const created = await t.call(account.key, 'POST', '/v1/models/music/voices', {
    source_url: `${upload}?[suno:voice-fail]`,
    start_seconds: 0,
    end_seconds: 15,
  });
  assert.equal(created.statusCode, 201, created.body);
  const failed = await voiceIn(String(created.json().id), 'failed');
  assert.equal(failed['error'], 'no clear singing voice in the piece');
});

test('a read of the voice while Suno is broken keeps it processing; the next read settles it', async () => {
  const created = await t.call(account.key, 'POST', '/v1/models/music/voices', {
    source_url: upload,
    start_seconds: 0,
    end_seconds: 15,
  });
  assert.equal(created.statusCode, 201, created.body);
  const id = String(created.json().id);
  const validation = [...suno.voices.validations.values()].at(-1);
  assert.ok(validation);
  // Wait until Suno would answer the phrase, then break the next read.
  await until(async () => Date.now() - validation.createdAt > 3_500, 'the first question is due');
  const before = suno.calls.length;
  suno.fail({ kind: 'http', status: 502 }, { target: 'read' });
  const during = await voice(id);
  assert.equal(during['status'], 'processing');
  assert.ok(callsTo('/api/v1/voice/validate-info', before).length === 1, 'Suno was asked once');
  const after = await voice(id);
  assert.equal(after['status'], 'pending_recording');
  assert.equal(after['phrase'], validation.phrases[0]);
});

test('a voice in a language Suno does not validate is 502 library_create_failed, no call', async () => {
  const before = suno.calls.length;
  const refused = await t.call(account.key, 'POST', '/v1/models/music/voices', {
    source_url: upload,
    start_seconds: 0,
    end_seconds: 15,
    language: 'it',
  });
  assert.equal(refused.statusCode, 502, refused.body);
  assert.equal(refused.json().error.code, 'library_create_failed');
  assert.equal(suno.calls.length, before);
});

test('Suno busy or out of credit while creating a voice is 503 sg_unavailable, nothing stored', async () => {
  const body = { source_url: upload, start_seconds: 0, end_seconds: 15 };
  for (const code of [455, 429]) {
    suno.fail({ kind: 'code', code }, { target: 'create' });
    const refused = await t.call(account.key, 'POST', '/v1/models/music/voices', body);
    assert.equal(refused.statusCode, 503, refused.body);
    assert.equal(refused.json().error.code, 'sg_unavailable');
    // Busy leaves the channel on; no credit (code 429) disables it, as a task run's would (CONTRACT §11).
    assert.equal((await channelCounts(t, 'suno-main')).enabled, code !== 429);
  }
  assert.match(String((await channelCounts(t, 'suno-main')).last_error), /code 429/);
  const calls = suno.calls.length;
  const helper = await t.call(account.key, 'POST', '/v1/models/music/lyrics', { prompt: 'rain' });
  assert.equal(helper.statusCode, 503, helper.body);
  assert.equal(suno.calls.length, calls, 'a disabled channel is not asked, by a helper either');
  const enabled = await t.admin('PATCH', '/admin/v1/channels/suno-main', { enabled: true });
  assert.equal(enabled.statusCode, 200, enabled.body);
});

test('a library of a model served only by Cog answers 503 sg_unavailable', async () => {
  const refused = await t.call(account.key, 'POST', '/v1/models/image/styles', {
    name: 'Ink',
    image_urls: [upload],
  });
  assert.equal(refused.statusCode, 503, refused.body);
  assert.equal(refused.json().error.code, 'sg_unavailable');
});

test('a helper Suno refuses is 502 helper_failed, worded for a helper, and is not counted', async () => {
  const helper = await t.account();
  const counted = async (): Promise<number> =>
    (
      await t.container.db.db
        .selectFrom('helper_calls')
        .select('id')
        .where('account_id', '=', helper.id)
        .execute()
    ).length;
  const refused = await t.call(helper.key, 'POST', '/v1/models/music/lyrics', {
    prompt: 'words [suno:sensitive]',
  });
  assert.equal(refused.statusCode, 502, refused.body);
  assert.equal(refused.json().error.code, 'helper_failed');
  assert.doesNotMatch(refused.json().error.message, /record|files/);
  assert.ok(refused.headers['retry-after']);
  const ru = await t.call(helper.key, 'POST', '/v1/models/music/lyrics?lang=ru', {
    prompt: 'слова [suno:sensitive]',
  });
  assert.equal(ru.json().error.code, 'helper_failed');
  assert.match(ru.json().error.message, /[а-я]/);
  assert.equal(await counted(), 0, 'a refused helper call uses none of the hour');
});
