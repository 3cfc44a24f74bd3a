/**
 * The ElevenLabs adapter against its fake (PROVIDERS.md §6): each call's path, query and body field by
 * field, the run through its local task record (create → poll → outputs), and the library side (cloned
 * voices, music finetunes that train). Faults: elevenlabs-faults.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GenerationError } from '../src/generators/generator.ts';
import { GeneratorUnavailable, LibraryRejected } from '../src/generators/index.ts';
import { catalogRequest } from './fakes/elevenlabs-kit.ts';
import { type ElevenLabsRig, elevenLabsRig, KEY, SAMPLE, SAMPLE2 } from './fakes/elevenlabs-rig.ts';
import { runStart, runToEnd } from './fakes/suno-kit.ts';

let rig: ElevenLabsRig;
let fake: ElevenLabsRig['fake'];
let adapter: ElevenLabsRig['adapter'];
let inputs: ElevenLabsRig['inputs'];
let records: ElevenLabsRig['records'];

before(async () => {
  rig = await elevenLabsRig();
  ({ fake, adapter, inputs, records } = rig);
});
after(() => rig.close());

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

  test('lines end at \\r, \\r\\n and U+2028 too, as the catalog reads the tags', async () => {
    const before = fake.calls.length;
    const request = catalogRequest(
      'voice',
      {
        mode: 'text_to_dialogue',
        text: 'One.\r[voice_2] Two.\r\n[voice] Three.\u2028[voice_2] Four.',
        voice: 'rec-a',
        voice_2: 'rec-b',
      },
      records,
    );
    await runToEnd(adapter, request);
    const a = records['rec-a']?.upstream_id;
    const b = records['rec-b']?.upstream_id;
    assert.deepEqual((fake.calls.slice(before)[0]?.json as { inputs?: unknown } | undefined)?.inputs, [
      { text: 'One.', voice_id: a },
      { text: 'Two.', voice_id: b },
      { text: 'Three.', voice_id: a },
      { text: 'Four.', voice_id: b },
    ]);
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
