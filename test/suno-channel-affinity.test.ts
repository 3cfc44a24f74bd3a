/**
 * A library record stays with the channel that made it (CONTRACT §11): with two Suno channels on two
 * accounts (two fakes, two keys), a singing voice created at one is asked about, checked, retried and
 * sung in tasks at that one only; while it is disabled its steps answer 503 sg_unavailable and a task
 * naming it waits in the queue instead of running at the other.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SunoFake } from './fakes/suno.ts';
import { type TestAccount, type TestApp, waitForFinal } from './helpers.ts';
import { FAKE_KEYS, startChannelApp, until, uploadMp3 } from './providers-kit.ts';

const LYRICS = '[Verse]\nMorning light on the river';
const OTHER_KEY = 'suno-other-account-key';

/** `suno-a` makes the voices; `suno-b` is the channel the router prefers for everything else. */
let sunoA: SunoFake;
let sunoB: SunoFake;
let t: TestApp;
let account: TestAccount;
let upload: string;

before(async () => {
  const options = { stepMs: 60, knownSingersOnly: true, trackSeconds: 40 };
  sunoA = await new SunoFake({ ...options, apiKey: FAKE_KEYS.SUNO_API_KEY }).start();
  sunoB = await new SunoFake({ ...options, apiKey: OTHER_KEY }).start();
  t = await startChannelApp(
    [
      {
        name: 'suno-b',
        provider: 'suno',
        models: ['music'],
        base_url: sunoB.url,
        api_key_env: 'SUNO_OTHER_API_KEY',
        priority: 0,
      },
      {
        name: 'suno-a',
        provider: 'suno',
        models: ['music'],
        base_url: sunoA.url,
        api_key_env: 'SUNO_API_KEY',
        priority: 1,
      },
    ],
    { env: { SUNO_OTHER_API_KEY: OTHER_KEY } },
  );
  account = await t.account({ balanceMinor: 100_000_000 });
  upload = await uploadMp3(t, account.key, 'aff');
});

after(async () => {
  await t.close();
  await Promise.all([sunoA.close(), sunoB.close()]);
});

async function setEnabled(channel: string, enabled: boolean): Promise<void> {
  const answer = await t.admin('PATCH', `/admin/v1/channels/${channel}`, { enabled });
  assert.equal(answer.statusCode, 200, answer.body);
}

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

/** A voice created while `suno-b` is off, so at `suno-a`; `suno-b` is on again afterwards. */
async function voiceAtA(): Promise<string> {
  await setEnabled('suno-b', false);
  const from = sunoA.calls.length;
  const created = await t.call(account.key, 'POST', '/v1/models/music/voices', {
    source_url: upload,
    start_seconds: 2,
    end_seconds: 22.5,
    language: 'en',
  });
  await setEnabled('suno-b', true);
  assert.equal(created.statusCode, 201, created.body);
  assert.ok(
    sunoA.calls.slice(from).some((c) => c.path === '/api/v1/voice/validate'),
    'the voice was created at suno-a',
  );
  return String(created.json().id);
}

function callsTo(fake: SunoFake, path: string, from = 0): { body: Record<string, unknown> }[] {
  return fake.calls.slice(from).filter((c) => c.path === path) as { body: Record<string, unknown> }[];
}

const extendWith = (id: string) => ({
  model: 'music',
  settings: { mode: 'extend', audio: [upload], continueAt: 10, style: 'folk', prompt: LYRICS, voice: id },
});

let readyVoice = '';

test('a voice made at one Suno channel is settled, checked, retried and sung there only', async () => {
  const id = await voiceAtA();
  const validation = [...sunoA.voices.validations.values()].at(-1);
  assert.ok(validation);

  // The phrase: settled by asking suno-a, though suno-b is the preferred channel again.
  const waiting = await voiceIn(id, 'pending_recording');
  assert.equal(waiting['phrase'], validation.phrases[0]);

  let from = sunoA.calls.length;
  const failing = await t.call(account.key, 'POST', `/v1/models/music/voices/${id}/verify`, {
    recording_url: upload,
    name: 'Anna [suno:voice-fail]',
  });
  assert.equal(failing.statusCode, 200, failing.body);
  assert.equal(callsTo(sunoA, '/api/v1/voice/generate', from)[0]?.body['taskId'], validation.id);
  await voiceIn(id, 'failed');

  from = sunoA.calls.length;
  const retried = await t.call(account.key, 'POST', `/v1/models/music/voices/${id}/retry`);
  assert.equal(retried.statusCode, 200, retried.body);
  assert.equal(callsTo(sunoA, '/api/v1/voice/regenerate', from)[0]?.body['taskId'], validation.id);
  assert.equal(retried.json().phrase, validation.phrases[1]);

  const verified = await t.call(account.key, 'POST', `/v1/models/music/voices/${id}/verify`, {
    recording_url: upload,
    name: 'Anna',
  });
  assert.equal(verified.statusCode, 200, verified.body);
  await voiceIn(id, 'ready');

  // A task singing it runs at suno-a, where the voice exists.
  from = sunoA.calls.length;
  const accepted = await t.call(account.key, 'POST', '/v1/tasks', extendWith(id));
  assert.equal(accepted.statusCode, 202, accepted.body);
  const taskId = String(accepted.json().id);
  const task = await waitForFinal(t, account.key, taskId, 60_000);
  assert.equal(task.status, 'succeeded', JSON.stringify(task));
  const run = (await t.admin('GET', `/admin/v1/tasks/${taskId}/run`)).json();
  assert.equal(run.channel, 'suno-a');
  const verification = [...sunoA.voices.verifications.values()].find((v) => v.body['voiceName'] === 'Anna');
  assert.ok(verification);
  assert.equal(
    callsTo(sunoA, '/api/v1/generate/upload-extend', from)[0]?.body['personaId'],
    verification.voiceId,
  );

  assert.deepEqual(sunoB.calls, [], 'the other account saw none of the voice’s calls');
  readyVoice = id;
});

test('while its channel is disabled a voice’s steps are 503 and a task naming it waits for it', async () => {
  assert.ok(readyVoice, 'the first test made a ready voice');
  const id = await voiceAtA();
  await voiceIn(id, 'pending_recording');
  const failing = await t.call(account.key, 'POST', `/v1/models/music/voices/${id}/verify`, {
    recording_url: upload,
    name: 'Anna [suno:voice-fail]',
  });
  assert.equal(failing.statusCode, 200, failing.body);
  await voiceIn(id, 'failed');
  const recording = await voiceAtA();
  await voiceIn(recording, 'pending_recording');
  const pending = await voiceAtA();

  await setEnabled('suno-a', false);
  try {
    const retried = await t.call(account.key, 'POST', `/v1/models/music/voices/${id}/retry`);
    assert.equal(retried.statusCode, 503, retried.body);
    assert.equal(retried.json().error.code, 'sg_unavailable');
    const verified = await t.call(account.key, 'POST', `/v1/models/music/voices/${recording}/verify`, {
      recording_url: upload,
      name: 'Anna',
    });
    assert.equal(verified.statusCode, 503, verified.body);
    assert.equal(verified.json().error.code, 'sg_unavailable');
    assert.equal((await voice(recording))['status'], 'pending_recording');
    // Its phrase cannot be asked for either: the voice stays processing, nobody else is asked.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal((await voice(pending))['status'], 'processing');

    const accepted = await t.call(account.key, 'POST', '/v1/tasks', extendWith(readyVoice));
    assert.equal(accepted.statusCode, 202, accepted.body);
    const taskId = String(accepted.json().id);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const queued = await t.call(account.key, 'GET', `/v1/tasks/${taskId}`);
    assert.equal(queued.json().status, 'queued', queued.body);
    assert.deepEqual(sunoB.calls, [], 'the other account is never asked');

    await setEnabled('suno-a', true);
    const task = await waitForFinal(t, account.key, taskId, 60_000);
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    assert.equal((await t.admin('GET', `/admin/v1/tasks/${taskId}/run`)).json().channel, 'suno-a');
    assert.equal((await voiceIn(pending, 'pending_recording'))['status'], 'pending_recording');
  } finally {
    await setEnabled('suno-a', true);
  }
  assert.deepEqual(sunoB.calls, [], 'the other account is never asked');
});
