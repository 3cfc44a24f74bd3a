/**
 * Every model's outputs, end to end through HTTP: create a task with valid settings, wait for it to
 * succeed, download every artifact and check it with a real parser (ffmpeg and music-metadata for MP4,
 * music-metadata and ffmpeg for MP3, pngjs for PNG, glTF-Transform for GLB) against what the settings
 * promise (reference "Endpoints", CONTRACT §2 and §10).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import ffmpeg from '@ffmpeg-installer/ffmpeg';
import { NodeIO } from '@gltf-transform/core';
import { parseBuffer } from 'music-metadata';
import { PNG } from 'pngjs';
import { findModel, type GenerationPlan, validateSettings } from '../src/catalog/index.ts';
import { makeWav } from '../src/media/fixtures.ts';
import { startTestApp, type TestAccount, type TestApp, waitForFinal } from './helpers.ts';

const run = promisify(execFile);

/** Songs take a few seconds of CPU to encode even at SIM_SPEED 1000. */
const TASK_TIMEOUT_MS = 60_000;
/** Allowed difference between a promised and a measured length (seconds). */
const DURATION_TOLERANCE = 0.3;

interface Artifact {
  index: number;
  kind: string;
  filename: string;
  size: number;
  caption: string;
  download_path: string;
}

interface TaskResult {
  caption: string;
  texts: string[];
  artifacts: Artifact[];
}

/** One downloaded artifact with the headers of its download. */
interface Download {
  artifact: Artifact;
  body: Buffer;
  contentType: string;
  disposition: string;
}

interface Finished {
  result: TaskResult;
  downloads: Download[];
}

// ---------------------------------------------------------------------------------------------
// The catalog's plan (what the generator must produce for the accepted settings)
// ---------------------------------------------------------------------------------------------

/** The catalog's plan for settings (defaults filled in), with no input files. */
function planOf(model: string, settings: Record<string, unknown>): GenerationPlan {
  const spec = findModel(model);
  assert.ok(spec, `model ${model}`);
  const checked = validateSettings(spec, settings);
  assert.ok(checked.ok, `settings of ${model} are valid: ${JSON.stringify(checked)}`);
  return checked.mode.plan(checked.settings, { files: [] });
}

/** Planned lengths of the audio outputs (seconds). */
function audioSeconds(plan: GenerationPlan): number[] {
  return plan.outputs.flatMap((output) => (output.kind === 'audio' ? [output.durationSeconds] : []));
}

// ---------------------------------------------------------------------------------------------
// Parsers
// ---------------------------------------------------------------------------------------------

interface VideoFacts {
  codec: string;
  width: number;
  height: number;
  /** Container duration printed by ffmpeg (seconds). */
  ffmpegSeconds: number;
  /** Duration read by music-metadata (seconds). */
  metadataSeconds: number;
}

interface AudioFacts {
  codec: string;
  seconds: number;
}

/** Writes a download to a temporary file for ffmpeg. */
async function toFile(dir: string, download: Download): Promise<string> {
  const path = join(dir, `${download.artifact.index}-${download.artifact.filename}`);
  await writeFile(path, download.body);
  return path;
}

/** What `ffmpeg -i` prints about an input (it exits 1 without an output file, hence the catch). */
async function ffmpegInfo(path: string): Promise<string> {
  const result = await run(ffmpeg.path, ['-hide_banner', '-i', path]).catch(
    (error: { stderr: string }) => error,
  );
  return result.stderr;
}

/** Decodes the whole file; ffmpeg's error log must stay empty. */
async function assertDecodes(path: string): Promise<void> {
  const { stderr } = await run(ffmpeg.path, ['-v', 'error', '-i', path, '-f', 'null', '-']);
  assert.equal(stderr.trim(), '', `ffmpeg decoding errors in ${path}`);
}

function ffmpegDuration(info: string): number {
  const match = /Duration: (\d+):(\d+):(\d+(?:\.\d+)?)/.exec(info);
  assert.ok(match, `no Duration in ffmpeg output:\n${info}`);
  return Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3]);
}

async function probeVideo(dir: string, download: Download): Promise<VideoFacts> {
  const path = await toFile(dir, download);
  const info = await ffmpegInfo(path);
  const video = /Video: (\w+)[^\n]*?[\s,](\d{2,5})x(\d{2,5})[\s,[]/.exec(info);
  assert.ok(video, `no video stream in ffmpeg output:\n${info}`);
  await assertDecodes(path);
  const meta = await parseBuffer(download.body, { mimeType: 'video/mp4' }, { duration: true });
  return {
    codec: video[1] ?? '',
    width: Number(video[2]),
    height: Number(video[3]),
    ffmpegSeconds: ffmpegDuration(info),
    metadataSeconds: meta.format.duration ?? Number.NaN,
  };
}

async function probeAudio(dir: string, download: Download): Promise<AudioFacts> {
  const meta = await parseBuffer(download.body, { mimeType: 'audio/mpeg' }, { duration: true });
  await assertDecodes(await toFile(dir, download));
  return { codec: meta.format.codec ?? '', seconds: meta.format.duration ?? Number.NaN };
}

interface MeshFacts {
  triangles: number;
  textures: number;
  texturedMaterials: number;
}

/** Triangles of every primitive (indexed or not), textures and materials with a base colour map. */
async function probeGlb(body: Buffer): Promise<MeshFacts> {
  const doc = await new NodeIO().readBinary(new Uint8Array(body));
  const root = doc.getRoot();
  let triangles = 0;
  for (const mesh of root.listMeshes()) {
    for (const primitive of mesh.listPrimitives()) {
      assert.equal(primitive.getMode(), 4, 'primitives are TRIANGLES');
      const vertices = primitive.getIndices() ?? primitive.getAttribute('POSITION');
      triangles += (vertices?.getCount() ?? 0) / 3;
    }
  }
  return {
    triangles,
    textures: root.listTextures().length,
    texturedMaterials: root.listMaterials().filter((m) => m.getBaseColorTexture() !== null).length,
  };
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

function assertNear(actual: number, expected: number, what: string): void {
  assert.ok(
    Math.abs(actual - expected) <= DURATION_TOLERANCE,
    `${what}: ${actual} s, expected ${expected} ± ${DURATION_TOLERANCE} s`,
  );
}

/** Content-Type, Content-Disposition filename and size of a download. */
function assertHeaders(download: Download, contentType: string, filename: string): void {
  const { artifact } = download;
  assert.equal(artifact.filename, filename);
  assert.equal(download.contentType, contentType, `Content-Type of ${filename}`);
  assert.match(download.disposition, /^attachment;/);
  assert.ok(
    download.disposition.includes(`filename="${filename}"`),
    `Content-Disposition names ${filename}: ${download.disposition}`,
  );
  assert.equal(download.body.length, artifact.size, `size of ${filename}`);
}

async function assertMp4(
  dir: string,
  download: Download,
  expected: { width: number; height: number; seconds: number },
): Promise<void> {
  assertHeaders(download, 'video/mp4', 'video.mp4');
  assert.equal(download.artifact.kind, 'video');
  const facts = await probeVideo(dir, download);
  assert.equal(facts.codec, 'h264');
  assert.equal(`${facts.width}x${facts.height}`, `${expected.width}x${expected.height}`);
  assertNear(facts.ffmpegSeconds, expected.seconds, 'ffmpeg duration');
  assertNear(facts.metadataSeconds, expected.seconds, 'music-metadata duration');
}

async function assertMp3(dir: string, download: Download, filename: string, seconds: number): Promise<void> {
  assertHeaders(download, 'audio/mpeg', filename);
  assert.equal(download.artifact.kind, 'audio');
  const facts = await probeAudio(dir, download);
  assert.match(facts.codec, /Layer 3/);
  assertNear(facts.seconds, seconds, `duration of ${filename}`);
}

function assertPng(download: Download, filename: string, width: number, height: number): void {
  assertHeaders(download, 'image/png', filename);
  assert.equal(download.artifact.kind, 'image');
  const png = PNG.sync.read(download.body);
  assert.equal(`${png.width}x${png.height}`, `${width}x${height}`);
}

/** Two songs of a music task: different files of the same length. */
async function assertTwoTracks(dir: string, done: Finished, plan: GenerationPlan): Promise<void> {
  assert.equal(done.downloads.length, 2, 'music gives exactly two files');
  for (const [i, download] of done.downloads.entries()) {
    const output = plan.outputs[i];
    assert.ok(output?.kind === 'audio');
    await assertMp3(dir, download, output.filename, output.durationSeconds);
  }
  const [first, second] = done.downloads;
  assert.ok(first && second && !first.body.equals(second.body), 'the two versions differ');
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

describe('outputs of every model, checked with real parsers', () => {
  let t: TestApp;
  let acct: TestAccount;
  let dir = '';

  before(async () => {
    t = await startTestApp();
    acct = await t.account({ balanceMinor: 10_000_000 });
    dir = await mkdtemp(join(tmpdir(), 'gta-outputs-'));
  });
  after(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * Uploads a small PNG with POST /v1/files and returns its direct link: URL settings are probed, and the
   * service reads its own uploads from storage (CONTRACT §6).
   */
  async function uploadPicture(name: string): Promise<string> {
    const picture = new PNG({ width: 64, height: 64 });
    picture.data.fill(200);
    const res = await t.call(acct.key, 'POST', `/v1/files?filename=${name}`, PNG.sync.write(picture), {
      'content-type': 'image/png',
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().url;
  }

  /** Creates a task, waits for success and downloads every artifact. */
  async function finish(model: string, settings: Record<string, unknown>): Promise<Finished> {
    const created = await t.call(acct.key, 'POST', '/v1/tasks', { model, settings });
    assert.equal(created.statusCode, 202, created.body);
    const task = await waitForFinal(t, acct.key, created.json().id, TASK_TIMEOUT_MS);
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    const result = task.result as TaskResult;
    assert.deepEqual(
      result.artifacts.map((a) => a.index),
      result.artifacts.map((_, i) => i),
    );
    const downloads: Download[] = [];
    for (const artifact of result.artifacts) {
      const res = await t.call(acct.key, 'GET', artifact.download_path);
      assert.equal(res.statusCode, 200, `${artifact.download_path}: ${res.body.slice(0, 200)}`);
      downloads.push({
        artifact,
        body: res.rawPayload,
        contentType: String(res.headers['content-type']),
        disposition: String(res.headers['content-disposition']),
      });
    }
    return { result, downloads };
  }

  describe('model-3d', () => {
    test('textured GLB within face_limit 500 and a PNG preview', async () => {
      const done = await finish('model-3d', {
        task_type: 'text_to_model',
        prompt: 'a small wooden chair',
        face_limit: 500,
      });
      assert.deepEqual(
        done.downloads.map((d) => d.artifact.kind),
        ['document', 'image'],
      );
      const [glb, preview] = done.downloads;
      assert.ok(glb && preview);
      assertHeaders(glb, 'model/gltf-binary', 'model.glb');
      const mesh = await probeGlb(glb.body);
      assert.ok(mesh.triangles > 0 && mesh.triangles <= 500, `${mesh.triangles} triangles`);
      assert.ok(mesh.textures > 0, 'textured mesh has a texture');
      assert.ok(mesh.texturedMaterials > 0, 'a material uses a base colour texture');
      assertPng(preview, 'preview.png', 512, 512);
      assert.deepEqual(done.result.texts, []);
    });

    test('texture:false and pbr:false give a GLB without textures', async () => {
      const done = await finish('model-3d', {
        task_type: 'text_to_model',
        prompt: 'a plain stone cube',
        face_limit: 500,
        texture: false,
        pbr: false,
      });
      const glb = done.downloads.find((d) => d.artifact.kind === 'document');
      assert.ok(glb);
      assertHeaders(glb, 'model/gltf-binary', 'model.glb');
      const mesh = await probeGlb(glb.body);
      assert.ok(mesh.triangles > 0 && mesh.triangles <= 500, `${mesh.triangles} triangles`);
      assert.equal(mesh.textures, 0);
      assert.equal(mesh.texturedMaterials, 0);
    });
  });

  describe('video', () => {
    test('frames 480p 9:16 2s: H.264 480x854 lasting 2 s', async () => {
      const done = await finish('video', {
        mode: 'frames',
        prompt: 'a paper boat on a stream',
        image_urls: [await uploadPicture('first-frame.png')],
        quality: '480p',
        aspect_ratio: '9:16',
        duration: '2s',
      });
      assert.equal(done.downloads.length, 1);
      await assertMp4(dir, done.downloads[0]!, { width: 480, height: 854, seconds: 2 });
    });

    test('frames 1080p 16:9 3s: H.264 1920x1080 lasting 3 s', async () => {
      const done = await finish('video', {
        mode: 'frames',
        prompt: 'a lighthouse at dusk',
        image_urls: [await uploadPicture('first.png'), await uploadPicture('last.png')],
        quality: '1080p',
        aspect_ratio: '16:9',
        duration: '3s',
      });
      assert.equal(done.downloads.length, 1);
      await assertMp4(dir, done.downloads[0]!, { width: 1920, height: 1080, seconds: 3 });
    });
  });

  describe('music', () => {
    test('generate, advanced, 10 s: two different 10 s MP3s; texts hold title and lyrics', async () => {
      const settings = {
        mode: 'generate',
        customMode: true,
        title: 'Morning Tram',
        style: 'indie pop',
        prompt: '[Verse]\nThe tram bell rings at dawn',
        duration: 10,
      };
      const done = await finish('music', settings);
      const plan = planOf('music', settings);
      assert.deepEqual(audioSeconds(plan), [10, 10], 'advanced mode: the duration setting');
      await assertTwoTracks(dir, done, plan);
      assert.ok(done.result.texts.includes('Morning Tram'), JSON.stringify(done.result.texts));
      assert.ok(done.result.texts.includes(settings.prompt), JSON.stringify(done.result.texts));
      assert.deepEqual(done.result.texts, plan.texts);
    });

    test('generate, advanced instrumental, 10 s: texts hold the title only', async () => {
      const settings = {
        mode: 'generate',
        model: 'V6_MINI',
        customMode: true,
        title: 'Quiet Harbour',
        style: 'ambient piano',
        instrumental: true,
        duration: 10,
      };
      const done = await finish('music', settings);
      await assertTwoTracks(dir, done, planOf('music', settings));
      assert.ok(done.result.texts.length > 0);
      assert.ok(
        done.result.texts.every((text) => text === 'Quiet Harbour'),
        JSON.stringify(done.result.texts),
      );
    });

    test('generate, simple mode with songDescription: two songs of the planned length, title and lyrics', async () => {
      const settings = { mode: 'generate', songDescription: 'a cheerful song about a ginger cat' };
      const done = await finish('music', settings);
      const plan = planOf('music', settings);
      await assertTwoTracks(dir, done, plan);
      const [title, lyrics] = plan.texts;
      assert.ok(title && lyrics);
      assert.ok(done.result.texts.includes(title) && done.result.texts.includes(lyrics));
      assert.deepEqual(done.result.texts, plan.texts);
    });

    test('sounds with loop, tempo and key: two different MP3s of the planned length, no texts', async () => {
      const settings = {
        mode: 'sounds',
        soundDescription: 'rain on a tin roof',
        soundLoop: true,
        soundTempo: 90,
        soundKey: 'Am',
      };
      const done = await finish('music', settings);
      await assertTwoTracks(dir, done, planOf('music', settings));
      assert.deepEqual(done.result.texts, []);
    });
  });

  test('video-elements length 3: H.264 1280x720 lasting 3 s', async () => {
    const done = await finish('video-elements', { prompt: 'a red kite over hills', length: 3 });
    assert.equal(done.downloads.length, 1);
    await assertMp4(dir, done.downloads[0]!, { width: 1280, height: 720, seconds: 3 });
  });

  /** Clones a voice from an uploaded recording (the voice library, CONTRACT §7) and returns its id. */
  async function clonedVoice(name: string): Promise<string> {
    const sample = await makeWav(dir, 2);
    const up = await t.call(acct.key, 'POST', '/v1/files?filename=sample.wav', await readFile(sample), {
      'content-type': 'audio/wav',
    });
    assert.equal(up.statusCode, 201, up.body);
    const res = await t.call(acct.key, 'POST', '/v1/models/voice/voices', {
      name,
      sample_urls: [up.json().url],
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id;
  }

  test('voice text_to_dialogue: one MP3 whose length follows the text', async () => {
    const settings = {
      mode: 'text_to_dialogue',
      text: '[voice] Good morning, how are you today?\n[voice_2] Very well, thank you, and you?',
      voice: await clonedVoice('Anna'),
      voice_2: await clonedVoice('Boris'),
    };
    const done = await finish('voice', settings);
    // Catalog decision (src/catalog/voice.ts): about 15 spoken characters (tags left out) per second.
    const spoken = 'Good morning, how are you today?\n Very well, thank you, and you?'.length;
    const seconds = Math.ceil(spoken / 15);
    assert.deepEqual(audioSeconds(planOf('voice', settings)), [seconds]);
    assert.equal(done.downloads.length, 1);
    await assertMp3(dir, done.downloads[0]!, 'dialogue.mp3', seconds);
    assert.deepEqual(done.result.texts, []);
  });

  test('image n 2, size 1365x1024: two PNGs of that size', async () => {
    const done = await finish('image', { prompt: 'a fox in the snow', n: 2, size: '1365x1024' });
    assert.equal(done.downloads.length, 2);
    for (const [i, download] of done.downloads.entries()) {
      assertPng(download, `image-${i + 1}.png`, 1365, 1024);
    }
    const [first, second] = done.downloads;
    assert.ok(first && second && !first.body.equals(second.body), 'the two pictures differ');
  });

  test('music-styles duration 10: one MP3 lasting 10 s with title and lyrics', async () => {
    const settings = { prompt: 'calm lo-fi beat for studying', duration: 10 };
    const done = await finish('music-styles', settings);
    const plan = planOf('music-styles', settings);
    assert.equal(done.downloads.length, 1);
    await assertMp3(dir, done.downloads[0]!, plan.outputs[0]?.filename ?? '', 10);
    assert.equal(done.result.texts.length, 2, JSON.stringify(done.result.texts));
    assert.deepEqual(done.result.texts, plan.texts);
  });

  test('video-omni duration 3, 9:16: H.264 720x1280 lasting 3 s', async () => {
    const done = await finish('video-omni', {
      prompt: 'a dancer on a rooftop',
      duration: 3,
      aspect_ratio: '9:16',
    });
    assert.equal(done.downloads.length, 1);
    await assertMp4(dir, done.downloads[0]!, { width: 720, height: 1280, seconds: 3 });
  });
});
