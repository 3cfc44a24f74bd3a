/**
 * The ElevenLabs adapter against its fake (PROVIDERS.md §6): each call's path, query and body field by
 * field, the local task record of a synchronous call (create → poll → outputs; lost after a restart), the
 * error classes of its answers, and the library side (cloned voices, music finetunes that train).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ElevenLabsAdapter } from '../src/generators/adapters/elevenlabs/index.ts';
import { ChannelOutOfCredit, UpstreamRunLost } from '../src/generators/adapters/types.ts';
import { GenerationError, GeneratorTransientError } from '../src/generators/generator.ts';
import { GeneratorUnavailable, LibraryRejected } from '../src/generators/index.ts';
import { pollingTestDeps, testChannel } from './fakes/adapter-deps.ts';
import { ElevenLabsFake } from './fakes/elevenlabs.ts';
import { catalogRequest, fakeMp3 } from './fakes/elevenlabs-kit.ts';
import { pollToEnd, runStart, runToEnd } from './fakes/suno-kit.ts';

const KEY = 'el-test-key';
const SAMPLE = 'http://127.0.0.1:8080/files/AbCdEfGhIjKlMnOpQrStUvWxYz012345/sample.mp3';
const SAMPLE2 = 'http://127.0.0.1:8080/files/ZyXwVuTsRqPoNmLkJiHgFeDcBa543210/second.mp3';

let fake: ElevenLabsFake;
let adapter: ElevenLabsAdapter;
let inputs: Map<string, Uint8Array>;
/** Two voices cloned at the fake, as the service's records show them to a task. */
const records: Record<string, Record<string, unknown>> = {};

function build(apiKey = KEY, channel: Partial<ReturnType<typeof testChannel>> = {}) {
  return new ElevenLabsAdapter(
    pollingTestDeps(
      { ...testChannel('elevenlabs', fake.url, apiKey, ['voice', 'music-styles']), ...channel },
      { inputs },
    ),
  );
}

before(async () => {
  fake = await new ElevenLabsFake({ apiKey: KEY, callMs: 20, trainMs: 200 }).start();
  const mp3 = await fakeMp3(3, 'sample');
  inputs = new Map([
    [SAMPLE, mp3],
    [SAMPLE2, mp3],
  ]);
  adapter = build();
  for (const id of ['rec-a', 'rec-b']) {
    const created = await adapter.library.createRecord(
      {
        model: 'voice',
        library: 'voices',
        recordId: id,
        fields: { name: `Voice ${id}`, sample_urls: [SAMPLE] },
      },
      AbortSignal.timeout(10_000),
    );
    assert.ok(created.upstreamId);
    records[id] = { id, status: 'ready', upstream_id: created.upstreamId };
  }
});
after(() => fake.close());

describe('cloned voices', () => {
  test('POST /v1/voices/add: name, every sample re-uploaded as files, remove_background_noise', async () => {
    const before = fake.calls.length;
    const created = await adapter.library.createRecord(
      {
        model: 'voice',
        library: 'voices',
        recordId: 'rec-c',
        fields: { name: 'Narrator', sample_urls: [SAMPLE, SAMPLE2], remove_background_noise: true },
      },
      AbortSignal.timeout(10_000),
    );
    const [call] = fake.calls.slice(before);
    assert.equal(call?.method, 'POST');
    assert.equal(call?.path, '/v1/voices/add');
    assert.equal(call?.apiKey, KEY);
    assert.deepEqual(call?.form?.fields, { name: ['Narrator'], remove_background_noise: ['true'] });
    assert.deepEqual(
      call?.form?.files.map((f) => [f.field, f.filename, f.type, f.size]),
      [
        ['files', 'sample.mp3', 'audio/mpeg', inputs.get(SAMPLE)?.length],
        ['files', 'second.mp3', 'audio/mpeg', inputs.get(SAMPLE2)?.length],
      ],
    );
    assert.deepEqual(created, { data: {}, upstreamId: [...fake.voices.keys()].at(-1) });
  });

  test('a refusal is the library 502, a busy provider 503', async () => {
    fake.failures.add({ status: 400, body: { detail: { status: 'invalid_audio', message: 'bad sample' } } });
    const request = {
      model: 'voice',
      library: 'voices',
      recordId: 'rec-x',
      fields: { name: 'X', sample_urls: [SAMPLE] },
    };
    await assert.rejects(adapter.library.createRecord(request, AbortSignal.timeout(10_000)), LibraryRejected);
    fake.failures.add({ status: 429, body: { detail: { status: 'system_busy', message: 'busy' } } });
    await assert.rejects(
      adapter.library.createRecord(request, AbortSignal.timeout(10_000)),
      GeneratorUnavailable,
    );
  });
});

describe('text_to_dialogue', () => {
  test('one input per non-empty line, [voice_N] picks voice_N, model eleven_v3, mp3_44100_128', async () => {
    const before = fake.calls.length;
    const request = catalogRequest(
      'voice',
      {
        mode: 'text_to_dialogue',
        text: 'Hello there.\n\n[voice_2] Hi! How are you?\n[voice_1] Fine, thanks.\n[voice] Bye.',
        voice: 'rec-a',
        voice_2: 'rec-b',
      },
      records,
    );
    const { status, outputs } = await runToEnd(adapter, request);
    assert.deepEqual(status, { state: 'succeeded' });
    const [call] = fake.calls.slice(before);
    assert.equal(call?.path, '/v1/text-to-dialogue');
    assert.equal(call?.query.get('output_format'), 'mp3_44100_128');
    const a = records['rec-a']?.upstream_id;
    const b = records['rec-b']?.upstream_id;
    assert.deepEqual(call?.json, {
      inputs: [
        { text: 'Hello there.', voice_id: a },
        { text: 'Hi! How are you?', voice_id: b },
        { text: 'Fine, thanks.', voice_id: a },
        { text: 'Bye.', voice_id: a },
      ],
      model_id: 'eleven_v3',
    });
    assert.equal(outputs?.files.length, 1);
    assert.equal(outputs?.files[0]?.kind, 'audio');
    assert.equal(outputs?.files[0]?.contentType, 'audio/mpeg');
    assert.equal(outputs?.files[0]?.filename, 'dialogue.mp3');
  });

  test('more than ten distinct voices: generation_failed before any call', async () => {
    const settings: Record<string, unknown> = { mode: 'text_to_dialogue', voice: 'v1' };
    const many: Record<string, Record<string, unknown>> = { v1: { upstream_id: 'up-1' } };
    const lines = ['First.'];
    for (let n = 2; n <= 11; n++) {
      settings[`voice_${n}`] = `v${n}`;
      many[`v${n}`] = { upstream_id: `up-${n}` };
      lines.push(`[voice_${n}] Line ${n}.`);
    }
    settings.text = lines.join('\n');
    const before = fake.calls.length;
    await assert.rejects(
      adapter.create(catalogRequest('voice', settings, many), runStart(), AbortSignal.timeout(5_000)),
      (e: unknown) =>
        e instanceof GenerationError &&
        e.code === 'generation_failed' &&
        /11 distinct voices/.test(e.message),
    );
    assert.equal(fake.calls.length, before, 'nothing reached ElevenLabs');
  });

  test('ten voices, some lines sharing one, are accepted', async () => {
    const settings: Record<string, unknown> = { mode: 'text_to_dialogue', voice: 'rec-a' };
    const lines = ['Start.'];
    const many = { ...records };
    for (let n = 2; n <= 11; n++) {
      // voice_11 is the same record as voice: still ten distinct voices.
      settings[`voice_${n}`] = n === 11 ? 'rec-a' : `extra-${n}`;
      lines.push(`[voice_${n}] Line ${n}.`);
    }
    for (let n = 2; n <= 10; n++) {
      const created = await adapter.library.createRecord(
        {
          model: 'voice',
          library: 'voices',
          recordId: `extra-${n}`,
          fields: { name: `E${n}`, sample_urls: [SAMPLE] },
        },
        AbortSignal.timeout(10_000),
      );
      many[`extra-${n}`] = { upstream_id: created.upstreamId };
    }
    settings.text = lines.join('\n');
    const { status } = await runToEnd(adapter, catalogRequest('voice', settings, many));
    assert.deepEqual(status, { state: 'succeeded' });
  });

  test('a voice not saved at ElevenLabs: generation_failed before any call', async () => {
    const request = catalogRequest(
      'voice',
      { mode: 'text_to_dialogue', text: 'Hi.', voice: 'sim-voice' },
      {
        'sim-voice': { id: 'sim-voice', status: 'ready' },
      },
    );
    await assert.rejects(
      adapter.create(request, runStart(), AbortSignal.timeout(5_000)),
      (e: unknown) => e instanceof GenerationError && /not saved at elevenlabs/.test(e.message),
    );
  });
});

test('voice_change: our file as multipart audio, model eleven_multilingual_sts_v2, the voice in the path', async () => {
  const before = fake.calls.length;
  const request = catalogRequest('voice', { mode: 'voice_change', audio: [SAMPLE], voice: 'rec-b' }, records);
  const { status, outputs } = await runToEnd(adapter, request);
  assert.deepEqual(status, { state: 'succeeded' });
  const [call] = fake.calls.slice(before);
  assert.equal(call?.path, `/v1/speech-to-speech/${records['rec-b']?.upstream_id}`);
  assert.equal(call?.query.get('output_format'), 'mp3_44100_128');
  assert.deepEqual(call?.form?.fields, { model_id: ['eleven_multilingual_sts_v2'] });
  assert.deepEqual(
    call?.form?.files.map((f) => [f.field, f.filename, f.size]),
    [['audio', 'sample.mp3', inputs.get(SAMPLE)?.length]],
  );
  assert.equal(outputs?.files[0]?.kind, 'audio');
});

describe('music styles', () => {
  test('a finetune: name = record id, primary_genre other, private, tracks as files; trains to ready', async () => {
    const before = fake.calls.length;
    const created = await adapter.library.createRecord(
      {
        model: 'music-styles',
        library: 'styles',
        recordId: 'style-rec-1',
        fields: { name: 'My sound', track_urls: [SAMPLE, SAMPLE2] },
        learningMs: 420_000,
      },
      AbortSignal.timeout(10_000),
    );
    const [call] = fake.calls.slice(before);
    assert.equal(call?.path, '/v1/music/finetunes');
    assert.deepEqual(call?.form?.fields, {
      name: ['style-rec-1'],
      primary_genre: ['other'],
      visibility: ['private'],
    });
    assert.deepEqual(
      call?.form?.files.map((f) => f.field),
      ['files', 'files'],
    );
    assert.ok(created.upstreamId);
    assert.ok(created.polled, 'training is asked about later');
    const ask = {
      model: 'music-styles',
      library: 'styles',
      recordId: 'style-rec-1',
      step: 'create',
      upstreamId: created.upstreamId,
    };
    const signal = AbortSignal.timeout(10_000);
    assert.deepEqual(await adapter.library.settle?.(ask, signal), { state: 'running' });
    await new Promise((r) => setTimeout(r, 250));
    assert.deepEqual(await adapter.library.settle?.(ask, signal), { state: 'done' });
    assert.equal(fake.callsTo(`/v1/music/finetunes/${created.upstreamId}`).length, 2);

    // compose with the finetune: music_length_ms = duration × 1000, force_instrumental, music_v1.
    const from = fake.calls.length;
    const request = catalogRequest(
      'music-styles',
      { prompt: 'calm piano by the sea', style: 'style-rec-1', duration: 45, instrumental: true },
      { 'style-rec-1': { id: 'style-rec-1', status: 'ready', upstream_id: created.upstreamId } },
    );
    const { status, outputs } = await runToEnd(adapter, request);
    assert.deepEqual(status, { state: 'succeeded' });
    const [compose] = fake.calls.slice(from);
    assert.equal(compose?.path, '/v1/music');
    assert.equal(compose?.query.get('output_format'), 'mp3_44100_128');
    assert.deepEqual(compose?.json, {
      prompt: 'calm piano by the sea',
      music_length_ms: 45_000,
      force_instrumental: true,
      model_id: 'music_v1',
      finetune_id: created.upstreamId,
    });
    assert.equal(outputs?.files[0]?.kind, 'audio');
  });

  test('compose without a style sends no finetune_id', async () => {
    const from = fake.calls.length;
    await runToEnd(adapter, catalogRequest('music-styles', { prompt: 'a march' }));
    assert.deepEqual(fake.calls[from]?.json, {
      prompt: 'a march',
      music_length_ms: 60_000,
      force_instrumental: false,
      model_id: 'music_v1',
    });
  });

  test('training that fails or is blocked ends failed with the reason', async () => {
    for (const outcome of ['failed', 'blocked'] as const) {
      fake.trainingOutcome = outcome;
      const created = await adapter.library.createRecord(
        {
          model: 'music-styles',
          library: 'styles',
          recordId: `style-${outcome}`,
          fields: { name: 'S', track_urls: [SAMPLE] },
        },
        AbortSignal.timeout(10_000),
      );
      await new Promise((r) => setTimeout(r, 250));
      const answer = await adapter.library.settle?.(
        {
          model: 'music-styles',
          library: 'styles',
          recordId: 'x',
          step: 'create',
          upstreamId: created.upstreamId as string,
        },
        AbortSignal.timeout(10_000),
      );
      assert.equal(answer?.state, 'failed');
      assert.match(
        (answer as { reason: string }).reason,
        outcome === 'failed' ? /training_failed/ : /copyright_violation/,
      );
    }
    fake.trainingOutcome = 'completed';
  });
});

describe('faults (CONTRACT §11, PROVIDERS.md §6 "Errors")', () => {
  const dialogue = () =>
    catalogRequest('voice', { mode: 'text_to_dialogue', text: 'Hello.', voice: 'rec-a' }, records);

  test('copyright_violation is content_refused', async () => {
    const request = catalogRequest(
      'voice',
      { mode: 'text_to_dialogue', text: 'Sing it [elevenlabs:copyright]', voice: 'rec-a' },
      records,
    );
    const { status } = await runToEnd(adapter, request);
    assert.equal(status.state, 'failed');
    assert.equal((status as { code: string }).code, 'content_refused');
  });

  test('429 (too_many_concurrent_requests, system_busy) and 5xx: a lost run to retry, Retry-After kept', async () => {
    const replies = [
      {
        status: 429,
        body: { detail: { status: 'too_many_concurrent_requests', message: 'slow down' } },
        headers: { 'retry-after': '3' },
      },
      { status: 429, body: { detail: { status: 'system_busy', message: 'busy' } } },
      { status: 503, body: { detail: { status: 'unavailable', message: 'down' } } },
    ];
    for (const [index, reply] of replies.entries()) {
      fake.failures.add(reply);
      const request = dialogue();
      const handle = await adapter.create(request, runStart(), AbortSignal.timeout(5_000));
      await assert.rejects(pollToEnd(adapter, handle, request), (e: unknown) => {
        assert.ok(e instanceof UpstreamRunLost && e instanceof GeneratorTransientError);
        if (index === 0) assert.equal(e.retryAfterMs, 3_000);
        return true;
      });
      // The record is gone: the retry is a new run.
      await assert.rejects(adapter.status(handle, request, AbortSignal.timeout(1_000)), UpstreamRunLost);
    }
  });

  test('quota_exceeded disables the channel; invalid_api_key is transient; other 4xx generation_failed', async () => {
    fake.failures.add({
      status: 401,
      body: { detail: { status: 'quota_exceeded', message: 'quota used up' } },
    });
    let request = dialogue();
    let handle = await adapter.create(request, runStart(), AbortSignal.timeout(5_000));
    await assert.rejects(pollToEnd(adapter, handle, request), ChannelOutOfCredit);

    const wrongKey = build('wrong-key');
    handle = await wrongKey.create(request, runStart(), AbortSignal.timeout(5_000));
    await assert.rejects(pollToEnd(wrongKey, handle, request), GeneratorTransientError);

    fake.failures.add({
      status: 400,
      body: { detail: { status: 'max_character_limit_exceeded', message: 'too long' } },
    });
    request = dialogue();
    handle = await adapter.create(request, runStart(), AbortSignal.timeout(5_000));
    const status = await pollToEnd(adapter, handle, request);
    assert.deepEqual(status, {
      state: 'failed',
      code: 'generation_failed',
      reason: 'text-to-dialogue: too long',
    });

    fake.failures.add({
      status: 422,
      body: { detail: [{ loc: ['body', 'inputs'], msg: 'bad', type: 'value_error' }] },
    });
    request = dialogue();
    handle = await adapter.create(request, runStart(), AbortSignal.timeout(5_000));
    const invalid = await pollToEnd(adapter, handle, request);
    assert.equal(invalid.state, 'failed');
    assert.match((invalid as { reason: string }).reason, /body\.inputs: bad/);
  });

  test('a restart in the middle of a call: find answers null, a saved handle is a lost run', async () => {
    const request = dialogue();
    const run = runStart();
    const handle = await adapter.create(request, run, AbortSignal.timeout(5_000));
    assert.equal(await adapter.find(request, run, AbortSignal.timeout(1_000)), handle);
    const restarted = build();
    assert.equal(await restarted.find(request, run, AbortSignal.timeout(1_000)), null);
    await assert.rejects(restarted.status(handle, request, AbortSignal.timeout(1_000)), UpstreamRunLost);
  });

  test('a channel upstream_models entry overrides the dialogue model', async () => {
    const custom = build(KEY, { upstreamModels: { text_to_dialogue: 'eleven_v3_custom' } });
    await runToEnd(custom, dialogue());
    const last = fake.callsTo('/v1/text-to-dialogue').at(-1);
    assert.equal((last?.json as { model_id?: string } | undefined)?.model_id, 'eleven_v3_custom');
  });
});
