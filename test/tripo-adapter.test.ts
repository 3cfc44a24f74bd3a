/**
 * The Tripo adapter against the Tripo fake, through the Generator methods: every model-3d mode, the
 * settings that change the upstream body (asserted field by field against PROVIDERS.md §1), uploads of
 * our own pictures, and the result files.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createTripoAdapter } from '../src/generators/adapters/tripo/index.ts';
import type { GenerationRequest } from '../src/generators/generator.ts';
import { makeJpeg, makePng } from '../src/media/fixtures.ts';
import { pollingTestDeps, testChannel } from './fakes/adapter-deps.ts';
import { TripoFake } from './fakes/tripo.ts';
import { pollToEnd, RUN, request3d, runToEnd } from './fakes/tripo-kit.ts';

const KEY = 'tsk_adapter';
const LINK = (name: string): string => `https://gta.example/v1/files/${name}`;
let fake: TripoFake;
let dir: string;
const inputs = new Map<string, Uint8Array>();

before(async () => {
  fake = await TripoFake.start({ apiKeys: [KEY], queuedMs: 100, runningMs: 300 });
  dir = await mkdtemp(path.join(os.tmpdir(), 'tripo-adapter-'));
  inputs.set(LINK('front.png'), await readFile(await makePng(dir, 64, 48)));
  inputs.set(LINK('back.jpg'), await readFile(await makeJpeg(dir, 64, 48)));
  inputs.set(LINK('right.png'), await readFile(await makePng(dir, 48, 64)));
});
after(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

function adapter(upstreamModels: Record<string, string> = {}) {
  const channel = { ...testChannel('tripo', fake.baseUrl, KEY, ['model-3d']), upstreamModels };
  return createTripoAdapter(pollingTestDeps(channel, { inputs }));
}

/** The body of the last `POST /task`. */
function lastSubmission(): unknown {
  return fake.callsTo('POST', '/task').at(-1)?.json;
}

/** Runs the request to its end and fetches its files into a fresh folder. */
async function generate(request: GenerationRequest, tripo = adapter()) {
  const { handle, seen } = await runToEnd(tripo, request);
  const out = await mkdtemp(path.join(dir, 'out-'));
  const outputs = await tripo.outputs(handle, request, out, AbortSignal.timeout(10_000));
  return { handle, seen, outputs };
}

test('text_to_model with defaults sends type, prompt and our default version only, and yields a GLB and a PNG', async () => {
  const request = request3d({ task_type: 'text_to_model', prompt: 'a small wooden chair' });
  const { handle, seen, outputs } = await generate(request);
  assert.deepEqual(lastSubmission(), {
    type: 'text_to_model',
    prompt: 'a small wooden chair',
    model_version: 'v3.1-20260211',
  });
  assert.equal(fake.callsTo('POST', '/task').at(-1)?.key, KEY, 'Bearer key of the channel');
  assert.ok(fake.tasks.has(handle), 'the handle is the upstream task id');
  assert.equal(seen.at(-1)?.state, 'succeeded');
  const running = seen.filter((s) => s.state === 'running');
  assert.ok(running.length >= 2, 'queued and running are both running');
  for (const s of running) assert.equal(s.state === 'running' && s.pollAfterMs, 5_000);
  const progress = running.map((s) => (s.state === 'running' ? s.progress : -1));
  assert.deepEqual(
    progress,
    [...progress].sort((a, b) => a - b),
    'progress only grows',
  );
  assert.ok(progress.every((p) => p >= 0 && p <= 99));
  const [model, preview] = outputs.files;
  assert.equal(outputs.files.length, 2);
  assert.equal(outputs.caption, request.plan.caption);
  assert.deepEqual(outputs.texts, []);
  assert.deepEqual(
    [model?.kind, model?.filename, model?.contentType, model?.caption],
    ['document', 'model.glb', 'model/gltf-binary', ''],
  );
  const glb = await readFile(model?.path ?? '');
  assert.equal(glb.toString('latin1', 0, 4), 'glTF');
  assert.equal(glb.readUInt32LE(4), 2, 'glTF 2.0');
  assert.equal(glb.readUInt32LE(8), glb.length, 'header length is the file length');
  assert.equal(model?.sizeBytes, glb.length);
  assert.deepEqual(
    [preview?.kind, preview?.filename, preview?.contentType],
    ['image', 'preview.png', 'image/png'],
  );
  const png = await readFile(preview?.path ?? '');
  assert.equal(png.toString('latin1', 1, 4), 'PNG');
});

test('every setting that differs from Tripo’s default is sent with its upstream name', async () => {
  const request = request3d({
    task_type: 'text_to_model',
    prompt: 'a lamp',
    negative_prompt: 'blurry',
    model_version: 'v3.0-20250812',
    texture: false,
    pbr: false,
    geometry_quality: 'detailed',
    face_limit: 5000,
    auto_size: true,
  });
  await generate(request);
  assert.deepEqual(lastSubmission(), {
    type: 'text_to_model',
    prompt: 'a lamp',
    negative_prompt: 'blurry',
    model_version: 'v3.0-20250812',
    texture: false,
    pbr: false,
    geometry_quality: 'detailed',
    face_limit: 5000,
    auto_size: true,
  });
  await generate(request3d({ task_type: 'text_to_model', prompt: 'a cup', texture_quality: 'detailed' }));
  assert.deepEqual(lastSubmission(), {
    type: 'text_to_model',
    prompt: 'a cup',
    model_version: 'v3.1-20260211',
    texture_quality: 'detailed',
  });
});

test('quad yields an FBX named model.fbx; smart_low_poly and face_limit go as set', async () => {
  const request = request3d({ task_type: 'text_to_model', prompt: 'a robot', quad: true, face_limit: 8000 });
  const { outputs } = await generate(request);
  assert.deepEqual(lastSubmission(), {
    type: 'text_to_model',
    prompt: 'a robot',
    model_version: 'v3.1-20260211',
    quad: true,
    face_limit: 8000,
  });
  const model = outputs.files[0];
  assert.equal(model?.filename, 'model.fbx');
  assert.equal((await readFile(model?.path ?? '')).toString('latin1', 0, 18), 'Kaydara FBX Binary');
  await generate(
    request3d({ task_type: 'text_to_model', prompt: 'a rock', smart_low_poly: true, face_limit: 2000 }),
  );
  assert.deepEqual(lastSubmission(), {
    type: 'text_to_model',
    prompt: 'a rock',
    model_version: 'v3.1-20260211',
    smart_low_poly: true,
    face_limit: 2000,
  });
});

test('face_limit is brought into Tripo’s range for quad (500–10000), smart_low_poly (1000–20000), both', async () => {
  const sent = async (settings: Record<string, unknown>): Promise<unknown> => {
    await generate(request3d({ task_type: 'text_to_model', prompt: 'a crate', ...settings }));
    return (lastSubmission() as Record<string, unknown>)['face_limit'];
  };
  assert.equal(await sent({ quad: true, face_limit: 20_000 }), 10_000);
  assert.equal(await sent({ quad: true, face_limit: 100 }), 500);
  assert.equal(await sent({ smart_low_poly: true, face_limit: 600 }), 1_000);
  assert.equal(await sent({ smart_low_poly: true, face_limit: 20_000 }), 20_000);
  assert.equal(await sent({ face_limit: 150_000 }), 150_000);
  // Both at once: in both ranges (1000–10000), which the fake checks as Tripo would.
  assert.equal(await sent({ quad: true, smart_low_poly: true, face_limit: 600 }), 1_000);
  assert.equal(await sent({ quad: true, smart_low_poly: true, face_limit: 15_000 }), 10_000);
});

test('emoji are taken out of the prompts, which Tripo refuses with them', async () => {
  await generate(
    request3d({ task_type: 'text_to_model', prompt: 'a red chair 🪑 ✨', negative_prompt: 'no 🚫 legs' }),
  );
  const body = lastSubmission() as Record<string, unknown>;
  assert.equal(body['prompt'], 'a red chair');
  assert.equal(body['negative_prompt'], 'no legs');
});

test('generate_parts is sent with texture, pbr and quad false', async () => {
  const request = request3d({
    task_type: 'text_to_model',
    prompt: 'a car',
    generate_parts: true,
    texture: false,
    pbr: false,
  });
  const { outputs } = await generate(request);
  assert.deepEqual(lastSubmission(), {
    type: 'text_to_model',
    prompt: 'a car',
    model_version: 'v3.1-20260211',
    generate_parts: true,
    texture: false,
    pbr: false,
    quad: false,
  });
  assert.equal(outputs.files[0]?.filename, 'model.glb');
});

test('the channel’s upstream_models decides the version sent; P1 goes by its own id otherwise', async () => {
  await generate(
    request3d({ task_type: 'text_to_model', prompt: 'a vase' }),
    adapter({ 'v3.1-20260211': 'v3.0-20250812' }),
  );
  assert.equal((lastSubmission() as Record<string, unknown>)['model_version'], 'v3.0-20250812');
  await generate(
    request3d({ task_type: 'text_to_model', prompt: 'a vase', model_version: 'P1-20260311', face_limit: 60 }),
  );
  assert.deepEqual(lastSubmission(), {
    type: 'text_to_model',
    prompt: 'a vase',
    model_version: 'P1-20260311',
    face_limit: 60,
  });
});

test('image_to_model uploads the picture first and names it by file token, with the image options', async () => {
  const uploadsBefore = fake.callsTo('POST', '/upload').length;
  const request = request3d({
    task_type: 'image_to_model',
    image_url: [LINK('back.jpg')],
    orientation: 'align_image',
    texture_alignment: 'geometry',
    enable_image_autofix: true,
  });
  const { outputs } = await generate(request);
  const uploads = fake.callsTo('POST', '/upload').slice(uploadsBefore);
  assert.equal(uploads.length, 1);
  assert.deepEqual(uploads[0]?.upload, {
    filename: 'back.jpg',
    contentType: 'image/jpeg',
    size: inputs.get(LINK('back.jpg'))?.length,
  });
  const body = lastSubmission() as Record<string, unknown>;
  const file = body['file'] as { type: string; file_token: string };
  assert.deepEqual(body, {
    type: 'image_to_model',
    file: { type: 'jpg', file_token: file.file_token },
    model_version: 'v3.1-20260211',
    orientation: 'align_image',
    texture_alignment: 'geometry',
    enable_image_autofix: true,
  });
  assert.match(file.file_token, /^[0-9a-f-]{36}$/);
  assert.equal(outputs.files.length, 2);
});

test('multiview sends exactly four views in Tripo’s order with {} for a missing one', async () => {
  const uploadsBefore = fake.callsTo('POST', '/upload').length;
  await generate(
    request3d({
      task_type: 'multiview_to_model',
      front_url: [LINK('front.png')],
      back_url: [LINK('back.jpg')],
      right_url: [LINK('right.png')],
    }),
  );
  const uploads = fake.callsTo('POST', '/upload').slice(uploadsBefore);
  assert.deepEqual(
    uploads.map((u) => u.upload?.filename),
    ['front.png', 'back.jpg', 'right.png'],
  );
  const body = lastSubmission() as { files: Record<string, unknown>[] };
  assert.equal(body.files.length, 4);
  assert.deepEqual(
    body.files.map((f) => f['type'] ?? null),
    ['png', null, 'jpg', 'png'],
  );
  assert.deepEqual(body.files[1], {});
  assert.deepEqual(Object.keys(body).sort(), ['files', 'model_version', 'type']);
  assert.equal((body as unknown as Record<string, unknown>)['type'], 'multiview_to_model');
});

test('a multiview with only its front is sent as image_to_model with that picture', async () => {
  const request = request3d({ task_type: 'multiview_to_model', front_url: [LINK('front.png')], pbr: false });
  await generate(request);
  const body = lastSubmission() as Record<string, unknown>;
  assert.equal(body['type'], 'image_to_model');
  assert.deepEqual(Object.keys(body).sort(), ['file', 'model_version', 'pbr', 'type']);
  assert.equal((body['file'] as Record<string, unknown>)['type'], 'png');
  assert.equal(body['pbr'], false);
});

test('find answers null and cancel asks nothing of Tripo (no idempotency key, no cancel)', async () => {
  const tripo = adapter();
  const request = request3d({ task_type: 'text_to_model', prompt: 'a hat' });
  const calls = fake.calls.length;
  assert.equal(await tripo.find(request, RUN, AbortSignal.timeout(1_000)), null);
  const handle = await tripo.create(request, RUN, AbortSignal.timeout(10_000));
  await tripo.cancel(handle, AbortSignal.timeout(1_000));
  assert.equal(fake.calls.length, calls + 1, 'only the submission reached Tripo');
  assert.equal(
    (await pollToEnd(tripo, handle, request)).at(-1)?.state,
    'succeeded',
    'the run goes on upstream',
  );
});
