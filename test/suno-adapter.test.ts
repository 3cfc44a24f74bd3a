/**
 * The Suno adapter against the fake sunoapi.org, one case per music mode: the upstream endpoint and body
 * field by field as PROVIDERS.md §2 names them, then the run to its stored files and texts.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { INSTRUMENTAL_EXTEND_PROMPT } from '../src/generators/adapters/suno/index.ts';
import { GenerationError } from '../src/generators/generator.ts';
import { musicRequest, type Rig, runStart, runToEnd, sunoRig, UPLOAD, UPLOAD2 } from './fakes/suno-kit.ts';

const LYRICS = '[Verse]\nMorning light on the river';
const PUBLIC = 'https://api.example.test/files/AbCdEfGhIjKlMnOpQrStUvWxYz012345/my%20demo.mp3';
const PUBLIC2 = 'https://api.example.test/files/ZyXwVuTsRqPoNmLkJiHgFeDcBa543210/second.mp3';
/** An output of one of our runs on another provider. */
const OTHERS = 'http://127.0.0.1:8080/files/CogCogCogCogCogCogCogCogCogCog01/cog.mp3';
const W = { styleWeight: 0.65, weirdnessConstraint: 0.65, audioWeight: 0.65 };

let rig: Rig;
before(async () => {
  rig = await sunoRig({
    artifacts: {
      [UPLOAD]: { provider: 'suno', ids: { taskId: 'up-task', audioId: 'up-audio' } },
      [OTHERS]: { provider: 'cog', ids: { taskId: 'cog-task', audioId: 'cog-audio' } },
    },
  });
});
after(() => rig.close());

interface Case {
  name: string;
  settings: Record<string, unknown>;
  records?: Record<string, Record<string, unknown>>;
  path: string;
  body: Record<string, unknown>;
  /** Files the run stores: two songs, one sound. */
  files: number;
  /** Texts per file: title and lyrics (2), title only (1), none (0). */
  textsPerFile: 0 | 1 | 2;
}

const CASES: Case[] = [
  {
    name: 'generate, simple: songDescription as prompt, only audioWeight of the knobs',
    settings: { mode: 'generate', songDescription: 'a cheerful song about a ginger cat' },
    path: '/api/v1/generate',
    body: {
      customMode: false,
      instrumental: false,
      prompt: 'a cheerful song about a ginger cat',
      audioWeight: 0.65,
      model: 'V6',
    },
    files: 2,
    textsPerFile: 2,
  },
  {
    name: 'generate, advanced: lyrics, style, title, vocalGender, knobs and duration',
    settings: {
      mode: 'generate',
      model: 'V6_WILD',
      customMode: true,
      title: 'River',
      style: 'folk',
      prompt: LYRICS,
      vocalGender: 'f',
      duration: 90,
      styleWeight: 0.5,
    },
    path: '/api/v1/generate',
    body: {
      customMode: true,
      instrumental: false,
      prompt: LYRICS,
      style: 'folk',
      title: 'River',
      vocalGender: 'f',
      ...W,
      styleWeight: 0.5,
      duration: 90,
      model: 'V6_WILD',
    },
    files: 2,
    textsPerFile: 2,
  },
  {
    name: 'generate, advanced instrumental with a persona saved at suno',
    settings: {
      mode: 'generate',
      customMode: true,
      title: 'Calm',
      style: 'ambient',
      instrumental: true,
      persona: 'per_1',
    },
    records: { per_1: { upstream_id: 'suno-persona-9' } },
    path: '/api/v1/generate',
    body: {
      customMode: true,
      instrumental: true,
      style: 'ambient',
      title: 'Calm',
      vocalGender: 'm',
      ...W,
      duration: 20,
      personaId: 'suno-persona-9',
      personaModel: 'style_persona',
      model: 'V6',
    },
    files: 2,
    textsPerFile: 1,
  },
  {
    name: 'sounds: empty key is Any, one sound, no texts',
    settings: { mode: 'sounds', soundDescription: 'rain on a tin roof' },
    path: '/api/v1/generate/sounds',
    body: { prompt: 'rain on a tin roof', soundLoop: false, soundKey: 'Any', model: 'V6' },
    files: 1,
    textsPerFile: 0,
  },
  {
    name: 'sounds: loop, tempo and key',
    settings: {
      mode: 'sounds',
      soundDescription: 'drum loop',
      soundLoop: true,
      soundTempo: 90,
      soundKey: 'C#m',
    },
    path: '/api/v1/generate/sounds',
    body: { prompt: 'drum loop', soundLoop: true, soundTempo: 90, soundKey: 'C#m', model: 'V6' },
    files: 1,
    textsPerFile: 0,
  },
  {
    name: 'add_vocals: our upload as an absolute public URL, empty vocalGender not sent',
    settings: {
      mode: 'add_vocals',
      audio: [UPLOAD],
      title: 'River',
      style: 'folk',
      prompt: LYRICS,
      negativeTags: 'metal',
    },
    path: '/api/v1/generate/add-vocals',
    body: {
      uploadUrl: PUBLIC,
      prompt: LYRICS,
      title: 'River',
      style: 'folk',
      negativeTags: 'metal',
      ...W,
      model: 'V6',
    },
    files: 2,
    textsPerFile: 2,
  },
  {
    name: 'add_instrumental: tags and vocalGender, title-only texts',
    settings: {
      mode: 'add_instrumental',
      audio: [UPLOAD],
      title: 'River',
      tags: 'folk guitar',
      negativeTags: 'metal',
      vocalGender: 'm',
    },
    path: '/api/v1/generate/add-instrumental',
    body: {
      uploadUrl: PUBLIC,
      title: 'River',
      tags: 'folk guitar',
      negativeTags: 'metal',
      vocalGender: 'm',
      ...W,
      model: 'V6',
    },
    files: 2,
    textsPerFile: 1,
  },
  {
    name: 'cover_upload, simple',
    settings: { mode: 'cover_upload', audio: [UPLOAD], songDescription: 'a jazz cover' },
    path: '/api/v1/generate/upload-cover',
    body: {
      uploadUrl: PUBLIC,
      customMode: false,
      instrumental: false,
      prompt: 'a jazz cover',
      audioWeight: 0.65,
      model: 'V6',
    },
    files: 2,
    textsPerFile: 2,
  },
  {
    name: 'cover_upload, advanced with negativeTags and a singing voice',
    settings: {
      mode: 'cover_upload',
      audio: [UPLOAD],
      customMode: true,
      title: 'Blue',
      style: 'jazz',
      prompt: LYRICS,
      negativeTags: 'metal',
      voice: 'voice_1',
    },
    records: { voice_1: { upstream_id: 'suno-voice-7' } },
    path: '/api/v1/generate/upload-cover',
    body: {
      uploadUrl: PUBLIC,
      customMode: true,
      instrumental: false,
      prompt: LYRICS,
      style: 'jazz',
      title: 'Blue',
      negativeTags: 'metal',
      ...W,
      duration: 20,
      personaId: 'suno-voice-7',
      personaModel: 'voice_persona',
      model: 'V6',
    },
    files: 2,
    textsPerFile: 2,
  },
  {
    name: 'extend with style: defaultParamFlag true, continueAt, title from the file name',
    settings: { mode: 'extend', audio: [UPLOAD], continueAt: 60, style: 'folk', prompt: LYRICS },
    path: '/api/v1/generate/upload-extend',
    body: {
      uploadUrl: PUBLIC,
      instrumental: false,
      prompt: LYRICS,
      defaultParamFlag: true,
      continueAt: 60,
      style: 'folk',
      title: 'my demo',
      ...W,
      model: 'V6',
    },
    files: 2,
    textsPerFile: 2,
  },
  {
    name: 'extend without style: defaultParamFlag false, uploadUrl and prompt, no continueAt',
    settings: { mode: 'extend', audio: [UPLOAD], continueAt: 60, prompt: LYRICS },
    path: '/api/v1/generate/upload-extend',
    body: { uploadUrl: PUBLIC, instrumental: false, prompt: LYRICS, defaultParamFlag: false, model: 'V6' },
    files: 2,
    textsPerFile: 2,
  },
  {
    name: 'an instrumental extend with neither style nor prompt: defaultParamFlag false with a prompt of ours',
    settings: { mode: 'extend', audio: [UPLOAD], continueAt: 60, instrumental: true },
    path: '/api/v1/generate/upload-extend',
    body: {
      uploadUrl: PUBLIC,
      instrumental: true,
      prompt: INSTRUMENTAL_EXTEND_PROMPT,
      defaultParamFlag: false,
      model: 'V6',
    },
    files: 2,
    textsPerFile: 1,
  },
  {
    name: 'replace_upload of our own suno output: its upstream taskId and audioId',
    settings: {
      mode: 'replace_upload',
      audio: [UPLOAD],
      infillStartS: 10,
      infillEndS: 25,
      prompt: LYRICS,
      fullLyrics: `${LYRICS}\nand more`,
      tags: 'folk',
      title: 'River',
    },
    path: '/api/v1/generate/replace-section',
    body: {
      taskId: 'up-task',
      audioId: 'up-audio',
      prompt: LYRICS,
      tags: 'folk',
      title: 'River',
      infillStartS: 10,
      infillEndS: 25,
      fullLyrics: `${LYRICS}\nand more`,
    },
    files: 2,
    textsPerFile: 2,
  },
  {
    name: 'mashup, simple: both uploads in order',
    settings: { mode: 'mashup', audio: [UPLOAD], audio2: [UPLOAD2], songDescription: 'both songs as one' },
    path: '/api/v1/generate/mashup',
    body: {
      uploadUrlList: [PUBLIC, PUBLIC2],
      customMode: false,
      instrumental: false,
      prompt: 'both songs as one',
      audioWeight: 0.65,
      model: 'V6',
    },
    files: 2,
    textsPerFile: 2,
  },
  {
    name: 'mashup, advanced without lyrics: title-only texts, as planned',
    settings: {
      mode: 'mashup',
      audio: [UPLOAD],
      audio2: [UPLOAD2],
      customMode: true,
      title: 'Both',
      style: 'pop',
      duration: 60,
    },
    path: '/api/v1/generate/mashup',
    body: {
      uploadUrlList: [PUBLIC, PUBLIC2],
      customMode: true,
      instrumental: false,
      style: 'pop',
      title: 'Both',
      ...W,
      duration: 60,
      model: 'V6',
    },
    files: 2,
    textsPerFile: 1,
  },
];

for (const c of CASES) {
  test(`${c.name}`, async () => {
    const before = rig.fake.calls.length;
    const request = musicRequest(c.settings, c.records);
    const { status, outputs } = await runToEnd(rig.adapter, request);
    const create = rig.fake.calls.slice(before).find((call) => call.method === 'POST');
    assert.ok(create, 'one create call');
    assert.equal(create.path, c.path);
    assert.equal(create.authorization, `Bearer ${rig.fake.apiKey}`);
    const { callBackUrl, ...body } = create.body as Record<string, unknown>;
    assert.deepEqual(body, c.body);
    assert.match(String(callBackUrl), /^http:\/\/127\.0\.0\.1:\d+\/v1\/callbacks\/suno-test\/[0-9a-f]{32}$/);
    assert.equal(rig.fake.creates().filter((call) => rig.fake.calls.indexOf(call) >= before).length, 1);

    assert.deepEqual(status, { state: 'succeeded' });
    assert.ok(outputs);
    assert.equal(outputs.files.length, c.files);
    assert.equal(outputs.caption, request.plan.caption);
    for (const [i, file] of outputs.files.entries()) {
      assert.equal(file.kind, 'audio');
      assert.equal(file.contentType, 'audio/mpeg');
      assert.match(file.filename, new RegExp(`-v${i + 1}\\.mp3$`));
      assert.match(file.caption, new RegExp(` \\(v${i + 1}\\)$`));
    }
    assert.equal(outputs.texts.length, c.files * c.textsPerFile);
    if (c.textsPerFile === 2) assert.match(outputs.texts[1] ?? '', /^\[Verse\]\nLyrics of /);
  });
}

test('the channel’s upstream_models replaces our model version', async () => {
  const own = await sunoRig({ upstreamModels: { V6: 'V5' } });
  try {
    await own.adapter.create(
      musicRequest({ mode: 'sounds', soundDescription: 'wind' }),
      runStart(),
      AbortSignal.timeout(5_000),
    );
    const body = (own.fake.creates()[0]?.body ?? {}) as Record<string, unknown>;
    assert.equal(body['model'], 'V5');
  } finally {
    await own.close();
  }
});

test('a simple songDescription longer than 500 characters is cut to the upstream limit', async () => {
  const before = rig.fake.calls.length;
  await rig.adapter.create(
    musicRequest({ mode: 'generate', songDescription: 'la '.repeat(400) }),
    runStart(),
    AbortSignal.timeout(5_000),
  );
  const body = rig.fake.calls.slice(before).find((c) => c.method === 'POST')?.body as Record<string, unknown>;
  assert.equal(String(body['prompt']).length, 500);
});

const refusedBeforeAnyCall: [string, Record<string, unknown>, Record<string, Record<string, unknown>>?][] = [
  [
    'replace_upload of a foreign file',
    {
      mode: 'replace_upload',
      audio: [UPLOAD2],
      infillStartS: 10,
      infillEndS: 25,
      prompt: 'x',
      fullLyrics: 'x',
      tags: 't',
      title: 'T',
    },
  ],
  [
    'replace_upload of a file another provider made',
    {
      mode: 'replace_upload',
      audio: [OTHERS],
      infillStartS: 10,
      infillEndS: 25,
      prompt: 'x',
      fullLyrics: 'x',
      tags: 't',
      title: 'T',
    },
  ],
  [
    'replace_upload of a section over 60 s',
    {
      mode: 'replace_upload',
      audio: [UPLOAD],
      infillStartS: 0,
      infillEndS: 61,
      prompt: 'x',
      fullLyrics: 'x',
      tags: 't',
      title: 'T',
    },
  ],
  [
    'a persona not saved at suno',
    { mode: 'generate', songDescription: 'x', persona: 'per_sim' },
    { per_sim: { name: 'Sim' } },
  ],
];

for (const [name, settings, records] of refusedBeforeAnyCall) {
  test(`${name} fails with generation_failed before any upstream call`, async () => {
    const before = rig.fake.calls.length;
    const request = { ...musicRequest({ ...settings }, records) };
    await assert.rejects(
      rig.adapter.create(request, runStart(), AbortSignal.timeout(5_000)),
      (error: unknown) => error instanceof GenerationError && error.code === 'generation_failed',
    );
    assert.equal(rig.fake.calls.length, before);
  });
}

test('find answers null before any callback and cancel reaches nothing: suno has neither', async () => {
  const request = musicRequest({ mode: 'sounds', soundDescription: 'wind' });
  const before = rig.fake.calls.length;
  assert.equal(await rig.adapter.find(request, runStart(), AbortSignal.timeout(1_000)), null);
  await rig.adapter.cancel('{"v":1,"taskId":"x","key":"k"}', AbortSignal.timeout(1_000));
  assert.equal(rig.fake.calls.length, before);
});

test('a resumed run whose handle was never saved finds its task from its callbacks, not a second one', async () => {
  const request = musicRequest({ mode: 'sounds', soundDescription: 'rain after the crash' });
  const run = runStart();
  const signal = AbortSignal.timeout(10_000);
  // Suno took the create, then the worker died before it saved the handle.
  const handle = await rig.adapter.create(request, run, signal);
  const creates = rig.fake.calls.filter((call) => call.method === 'POST').length;
  for (let i = 0; i < 100 && (rig.test.received.get(run.key) ?? []).length === 0; i++)
    await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(await rig.adapter.find(request, run, signal), handle);
  assert.equal(rig.fake.calls.filter((call) => call.method === 'POST').length, creates, 'no second create');
  // Another run's callbacks never name this run's task.
  assert.equal(await rig.adapter.find(request, runStart(), signal), null);
});
