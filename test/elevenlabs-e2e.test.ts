/**
 * voice and music-styles on an ElevenLabs channel end to end (GENERATORS_FILE pointing at the fake): cloned
 * voices created at ElevenLabs from uploaded samples and spoken in dialogues and voice changes; a dialogue
 * of more than ten voices failing before any call; music styles that train, then compose with them; a
 * refusal, a 429 storm and a run whose local record is lost handled as CONTRACT §11 says.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ElevenLabsFake } from './fakes/elevenlabs.ts';
import { type TestAccount, type TestApp, waitForFinal } from './helpers.ts';
import {
  assertCapturedOnce,
  assertNoUpstreamUrl,
  channelCounts,
  deleteRecordAndSweep,
  failResultPuts,
  startChannelApp,
  sweepAgain,
  until,
  uploadMp3,
} from './providers-kit.ts';

const KEY = 'el-e2e-key';

let fake: ElevenLabsFake;
let t: TestApp;
let account: TestAccount;
let sample: string;
let voiceA: string;
let voiceB: string;

async function createTask(model: string, settings: Record<string, unknown>): Promise<string> {
  const created = await t.call(account.key, 'POST', '/v1/tasks', { model, settings });
  assert.equal(created.statusCode, 202, created.body);
  return created.json().id as string;
}

async function final(id: string): Promise<Record<string, unknown>> {
  return waitForFinal(t, account.key, id, 90_000);
}

async function cloneVoice(name: string): Promise<string> {
  const created = await t.call(account.key, 'POST', '/v1/models/voice/voices', {
    name,
    sample_urls: [sample],
  });
  assert.equal(created.statusCode, 201, created.body);
  assert.equal(created.json().status, 'ready');
  return created.json().id as string;
}

before(async () => {
  fake = await new ElevenLabsFake({ apiKey: KEY, callMs: 50, trainMs: 500 }).start();
  t = await startChannelApp(
    [
      {
        name: 'eleven-main',
        provider: 'elevenlabs',
        models: ['voice', 'music-styles'],
        base_url: fake.url,
        api_key_env: 'ELEVENLABS_API_KEY',
      },
    ],
    { env: { ELEVENLABS_API_KEY: KEY } },
  );
  account = await t.account({ balanceMinor: 100_000_000 });
  sample = await uploadMp3(t, account.key, 'voice-sample');
  voiceA = await cloneVoice('Alice');
  voiceB = await cloneVoice('Bob');
});

after(async () => {
  await t.close();
  await fake.close();
});

describe('cloned voices', () => {
  test('a cloned voice is made at ElevenLabs from our sample, downloaded and re-uploaded', () => {
    const adds = fake.callsTo('/v1/voices/add');
    assert.equal(adds.length, 2);
    assert.equal(adds[0]?.apiKey, KEY);
    assert.deepEqual(adds[0]?.form?.fields, { name: ['Alice'], remove_background_noise: ['false'] });
    assert.equal(adds[0]?.form?.files.length, 1);
    assert.equal(adds[0]?.form?.files[0]?.field, 'files');
    assert.equal(adds[0]?.form?.files[0]?.type, 'audio/mpeg');
    assert.ok((adds[0]?.form?.files[0]?.size ?? 0) > 1000, 'the sample bytes were sent');
  });

  test('a refusal at ElevenLabs is the library 502', async () => {
    fake.failures.add(
      { status: 400, body: { detail: { status: 'invalid_audio', message: 'no voice' } } },
      1,
      /voices/,
    );
    const created = await t.call(account.key, 'POST', '/v1/models/voice/voices', {
      name: 'X',
      sample_urls: [sample],
    });
    assert.equal(created.statusCode, 502, created.body);
  });

  test('quota_exceeded while cloning: 503, and the channel is disabled until the operator enables it', async () => {
    fake.failures.add(
      { status: 401, body: { detail: { status: 'quota_exceeded', message: 'quota used up' } } },
      1,
      /voices/,
    );
    const body = { name: 'Unpaid', sample_urls: [sample] };
    const refused = await t.call(account.key, 'POST', '/v1/models/voice/voices', body);
    assert.equal(refused.statusCode, 503, refused.body);
    assert.equal(refused.json().error.code, 'sg_unavailable');
    // CONTRACT §11: no credit disables the channel, from a library call as from a task run.
    const channel = await channelCounts(t, 'eleven-main');
    assert.equal(channel.enabled, false);
    assert.match(String(channel.last_error), /quota/);
    const calls = fake.callsTo('/v1/voices/add').length;
    const again = await t.call(account.key, 'POST', '/v1/models/voice/voices', body);
    assert.equal(again.statusCode, 503, again.body);
    assert.equal(fake.callsTo('/v1/voices/add').length, calls, 'a disabled channel is not asked');
    const enabled = await t.admin('PATCH', '/admin/v1/channels/eleven-main', { enabled: true });
    assert.equal(enabled.statusCode, 200, enabled.body);
  });
});

describe('voice tasks', () => {
  test('text_to_dialogue in two cloned voices: stored mp3, money captured once, no upstream URL', async () => {
    const id = await createTask('voice', {
      mode: 'text_to_dialogue',
      text: 'Good morning.\n[voice_2] Morning! Coffee?\n[voice_1] Please.',
      voice: voiceA,
      voice_2: voiceB,
    });
    const task = await final(id);
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    const [call] = fake.callsTo('/v1/text-to-dialogue');
    const [a, b] = [...fake.voices.keys()];
    assert.equal(call?.query.get('output_format'), 'mp3_44100_128');
    assert.deepEqual(call?.json, {
      inputs: [
        { text: 'Good morning.', voice_id: a },
        { text: 'Morning! Coffee?', voice_id: b },
        { text: 'Please.', voice_id: a },
      ],
      model_id: 'eleven_v3',
    });
    const file = await t.call(account.key, 'GET', `/v1/tasks/${id}/artifacts/0`);
    assert.equal(file.statusCode, 200);
    assert.equal(file.headers['content-type'], 'audio/mpeg');
    assertNoUpstreamUrl(task, [fake.url]);
    await assertCapturedOnce(t.container, id);
  });

  test('a dialogue with more than ten distinct voices fails before any call', async () => {
    const settings: Record<string, unknown> = { mode: 'text_to_dialogue', voice: voiceA };
    const lines = ['Hello.'];
    for (let n = 2; n <= 11; n++) {
      settings[`voice_${n}`] = await cloneVoice(`Speaker ${n}`);
      lines.push(`[voice_${n}] Line ${n}.`);
    }
    settings.text = lines.join('\n');
    const before = fake.callsTo('/v1/text-to-dialogue').length;
    const task = await final(await createTask('voice', settings));
    assert.equal(task.status, 'failed');
    assert.equal((task.error as { code: string }).code, 'generation_failed');
    // The provider's reason is kept for the operator; the caller sees the public message.
    const row = await t.container.db.db
      .selectFrom('tasks')
      .select('error_message')
      .where('id', '=', String(task.id))
      .executeTakeFirstOrThrow();
    assert.match(String(row.error_message), /11 distinct voices/);
    assert.equal(fake.callsTo('/v1/text-to-dialogue').length, before, 'no dialogue reached ElevenLabs');
  });

  test('voice_change: our file re-uploaded as audio with eleven_multilingual_sts_v2', async () => {
    const task = await final(
      await createTask('voice', { mode: 'voice_change', audio: [sample], voice: voiceB }),
    );
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    const [call] = fake.callsTo(/^\/v1\/speech-to-speech\//);
    assert.equal(call?.path, `/v1/speech-to-speech/${[...fake.voices.keys()][1]}`);
    assert.deepEqual(call?.form?.fields, { model_id: ['eleven_multilingual_sts_v2'] });
    assert.equal(call?.form?.files[0]?.field, 'audio');
  });
});

describe('music styles', () => {
  test('a style trains at ElevenLabs (training → ready), then composes with its finetune', async () => {
    const track = await uploadMp3(t, account.key, 'style-track');
    const created = await t.call(account.key, 'POST', '/v1/models/music-styles/styles', {
      name: 'Sea piano',
      track_urls: [track],
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json().status, 'training');
    const styleId = created.json().id as string;
    const [finetune] = fake.callsTo('/v1/music/finetunes');
    assert.deepEqual(finetune?.form?.fields, {
      name: [styleId],
      primary_genre: ['other'],
      visibility: ['private'],
    });
    assert.equal(finetune?.form?.files.length, 1);
    let status = '';
    await until(async () => {
      const list = await t.call(account.key, 'GET', '/v1/models/music-styles/styles');
      status =
        (list.json().styles as Array<{ id: string; status: string }>).find((s) => s.id === styleId)?.status ??
        '';
      return status !== 'training';
    }, 'the style to finish training');
    assert.equal(status, 'ready');

    const id = await createTask('music-styles', {
      prompt: 'calm piano by the sea',
      style: styleId,
      duration: 30,
    });
    const task = await final(id);
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    const compose = fake.callsTo('/v1/music').at(-1);
    assert.equal(compose?.query.get('output_format'), 'mp3_44100_128');
    assert.deepEqual(compose?.json, {
      prompt: 'calm piano by the sea',
      music_length_ms: 30_000,
      force_instrumental: false,
      model_id: 'music_v1',
      finetune_id: [...fake.finetunes.keys()][0],
    });
    await assertCapturedOnce(t.container, id);
  });

  test('a style whose training is blocked ends failed with the reason', async () => {
    fake.trainingOutcome = 'blocked';
    try {
      const track = await uploadMp3(t, account.key, 'style-track-2');
      const created = await t.call(account.key, 'POST', '/v1/models/music-styles/styles', {
        name: 'Copied hit',
        track_urls: [track],
      });
      assert.equal(created.statusCode, 201, created.body);
      const styleId = created.json().id as string;
      let style: { status: string; error?: string } | undefined;
      await until(async () => {
        const list = await t.call(account.key, 'GET', '/v1/models/music-styles/styles');
        style = (list.json().styles as Array<{ id: string; status: string; error?: string }>).find(
          (s) => s.id === styleId,
        );
        return style?.status !== 'training';
      }, 'the style to finish training');
      assert.equal(style?.status, 'failed');
      assert.match(style?.error ?? '', /copyright_violation/);
    } finally {
      fake.trainingOutcome = 'completed';
    }
  });
});

describe('deleted records (their copies at ElevenLabs)', () => {
  test('deleting a cloned voice deletes it at ElevenLabs; a 503 there is asked again later', async () => {
    const id = await cloneVoice('Short-lived');
    const upstream = [...fake.voices.keys()].at(-1) ?? '';
    fake.failures.add(
      { status: 503, body: { detail: { status: 'service_unavailable', message: 'busy' } } },
      1,
      /^\/v1\/voices\/voice/,
    );
    assert.equal(await deleteRecordAndSweep(t, account.key, `/v1/models/voice/voices/${id}`), 0);
    assert.ok(fake.voices.has(upstream), 'ElevenLabs answered 503: the voice is still there');
    assert.equal(await sweepAgain(t, id), 1);
    assert.ok(!fake.voices.has(upstream), 'the voice is gone at ElevenLabs');
    const deletes = fake.calls.filter((c) => c.method === 'DELETE');
    assert.equal(deletes.at(-1)?.path, `/v1/voices/${upstream}`);
    assert.equal(deletes.at(-1)?.apiKey, KEY);
  });

  test('deleting a music style deletes its finetune; one ElevenLabs forgot already is done with', async () => {
    const track = await uploadMp3(t, account.key, 'style-track-gone');
    const created = await t.call(account.key, 'POST', '/v1/models/music-styles/styles', {
      name: 'Gone piano',
      track_urls: [track],
    });
    assert.equal(created.statusCode, 201, created.body);
    const upstream = [...fake.finetunes.keys()].at(-1) ?? '';
    const path = `/v1/models/music-styles/styles/${created.json().id}`;
    assert.equal(await deleteRecordAndSweep(t, account.key, path), 1);
    assert.ok(!fake.finetunes.has(upstream), 'the finetune is gone at ElevenLabs');
    assert.equal(
      fake.calls.filter((c) => c.method === 'DELETE').at(-1)?.path,
      `/v1/music/finetunes/${upstream}`,
    );

    const voice = await cloneVoice('Forgotten');
    fake.voices.delete([...fake.voices.keys()].at(-1) ?? '');
    assert.equal(await deleteRecordAndSweep(t, account.key, `/v1/models/voice/voices/${voice}`), 1);
  });
});

describe('faults (CONTRACT §11)', () => {
  test('a refusal (copyright_violation) ends the task content_refused; the hold is released', async () => {
    const id = await createTask('music-styles', {
      prompt: 'the chorus of a famous hit [elevenlabs:copyright]',
    });
    const task = await final(id);
    assert.equal(task.status, 'failed');
    assert.equal((task.error as { code: string }).code, 'content_refused');
  });

  test('a 429 storm shorter than the retries: the run is retried as new calls and succeeds', async () => {
    const before = fake.callsTo('/v1/text-to-dialogue').length;
    fake.failures.add(
      { status: 429, body: { detail: { status: 'too_many_concurrent_requests', message: 'slow down' } } },
      2,
      /text-to-dialogue/,
    );
    const id = await createTask('voice', { mode: 'text_to_dialogue', text: 'Still here.', voice: voiceA });
    const task = await final(id);
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    assert.equal(
      fake.callsTo('/v1/text-to-dialogue').length - before,
      3,
      'two 429s, then the call that answered',
    );
    await assertCapturedOnce(t.container, id);
  });

  test('a 429 storm longer than the retries: generation_failed, nothing captured', async () => {
    fake.failures.add(
      { status: 429, body: { detail: { status: 'system_busy', message: 'busy' } } },
      10,
      /text-to-dialogue/,
    );
    const id = await createTask('voice', { mode: 'text_to_dialogue', text: 'Anyone?', voice: voiceA });
    const task = await final(id);
    assert.equal(task.status, 'failed');
    assert.equal((task.error as { code: string }).code, 'generation_failed');
    while (fake.failures.size > 0) fake.failures.take('/v1/text-to-dialogue');
  });

  test('our storage refusing the result once: the run resumes with the same answer, no second call', async () => {
    const before = fake.callsTo('/v1/text-to-dialogue').length;
    const counts = await channelCounts(t, 'eleven-main');
    const restore = failResultPuts(t.container);
    try {
      const id = await createTask('voice', {
        mode: 'text_to_dialogue',
        text: 'Kept for you.',
        voice: voiceA,
      });
      const task = await final(id);
      assert.equal(task.status, 'succeeded', JSON.stringify(task));
      assert.equal(fake.callsTo('/v1/text-to-dialogue').length - before, 1, 'one billed call for the run');
      await assertCapturedOnce(t.container, id);
    } finally {
      restore();
    }
    // Our storage's failure never counts against the channel (docs/providers.md).
    const after = await channelCounts(t, 'eleven-main');
    assert.equal(after.failed, counts.failed);
    assert.equal(after.succeeded, counts.succeeded + 1);
  });

  test('our storage failing to read a voice_change input once: the run waits, the channel is not blamed', async () => {
    const before = fake.callsTo(/^\/v1\/speech-to-speech\//).length;
    const counts = await channelCounts(t, 'eleven-main');
    const storage = t.container.storage;
    const get = storage.get;
    let failed = 0;
    storage.get = (key, range) => {
      if (key.startsWith('uploads/') && failed === 0) {
        failed += 1;
        return Promise.reject(new Error('storage unreachable (test)'));
      }
      return get.call(storage, key, range);
    };
    try {
      const id = await createTask('voice', { mode: 'voice_change', audio: [sample], voice: voiceB });
      const task = await final(id);
      assert.equal(task.status, 'succeeded', JSON.stringify(task));
      assert.equal(failed, 1, 'the read failed once');
      assert.equal(fake.callsTo(/^\/v1\/speech-to-speech\//).length - before, 1, 'one call for the run');
      await assertCapturedOnce(t.container, id);
    } finally {
      storage.get = get;
    }
    // Reading an input of ours never counts against the channel (docs/providers.md "Circuit").
    const after = await channelCounts(t, 'eleven-main');
    assert.equal(after.failed, counts.failed);
    assert.equal(after.succeeded, counts.succeeded + 1);
  });

  test('a voice_change input gone from our storage: input_unavailable before any call, the channel not blamed', async () => {
    const before = fake.callsTo(/^\/v1\/speech-to-speech\//).length;
    const counts = await channelCounts(t, 'eleven-main');
    const storage = t.container.storage;
    const get = storage.get;
    storage.get = (key, range) =>
      key.startsWith('uploads/') ? Promise.resolve(null) : get.call(storage, key, range);
    try {
      const id = await createTask('voice', { mode: 'voice_change', audio: [sample], voice: voiceB });
      const task = await final(id);
      assert.equal(task.status, 'failed', JSON.stringify(task));
      assert.equal((task.error as { code: string }).code, 'input_unavailable');
      assert.equal(fake.callsTo(/^\/v1\/speech-to-speech\//).length, before, 'no call reached ElevenLabs');
    } finally {
      storage.get = get;
    }
    // Neither a failure nor a working answer of the channel (docs/providers.md, "Failures").
    const after = await channelCounts(t, 'eleven-main');
    assert.equal(after.failed, counts.failed);
    assert.equal(after.succeeded, counts.succeeded);
  });

  test('a worker stopped while the call is open: the next one takes the same call, no second call', async () => {
    fake.options.callMs = 1_500;
    try {
      const before = fake.callsTo('/v1/text-to-dialogue').length;
      const id = await createTask('voice', { mode: 'text_to_dialogue', text: 'Patience.', voice: voiceA });
      await until(
        async () => fake.callsTo('/v1/text-to-dialogue').length > before,
        'the call to reach ElevenLabs',
      );
      await t.container.worker.stop();
      assert.equal((await t.call(account.key, 'GET', `/v1/tasks/${id}`)).json().status, 'running');
      t.container.worker.start();
      const task = await final(id);
      assert.equal(task.status, 'succeeded', JSON.stringify(task));
      assert.equal(fake.callsTo('/v1/text-to-dialogue').length - before, 1, 'one call for the run');
      await assertCapturedOnce(t.container, id);
    } finally {
      fake.options.callMs = 50;
    }
  });
});
