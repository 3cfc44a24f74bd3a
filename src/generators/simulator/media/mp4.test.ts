import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { parseFile } from 'music-metadata';
import { PNG } from 'pngjs';
import type { VideoOutput } from '../../../catalog/model-spec.ts';
import { probeFile } from '../../../media/probe.ts';
import { renderOutput } from './index.ts';
import { FFMPEG_PATH } from './mp4.ts';

const run = promisify(execFile);

function video(over: Partial<VideoOutput>): VideoOutput {
  return {
    kind: 'video',
    format: 'mp4',
    filename: 'clip.mp4',
    caption: '',
    seed: 'clip seed',
    width: 320,
    height: 240,
    durationSeconds: 2,
    ...over,
  };
}

/** `Video: h264 ... WxH` line that ffmpeg prints about an input. */
async function probe(path: string): Promise<string> {
  const result = await run(FFMPEG_PATH, ['-hide_banner', '-i', path]).catch(
    (error: { stderr: string }) => error,
  );
  return result.stderr;
}

describe('MP4 renderer', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'media-mp4-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const plan of [
    video({ width: 320, height: 240, durationSeconds: 2 }),
    video({ width: 1280, height: 720, durationSeconds: 1.5, seed: 'wide' }),
    video({ width: 480, height: 854, durationSeconds: 3.3, seed: 'tall' }),
    video({ width: 854, height: 480, durationSeconds: 2, seed: '480p' }),
  ]) {
    it(`draws ${plan.width}×${plan.height} for ${plan.durationSeconds} s`, async () => {
      const file = await renderOutput(plan, { dir });
      assert.equal(file.contentType, 'video/mp4');
      const meta = await parseFile(file.path);
      const track = meta.format.trackInfo.find((t) => t.codecName?.includes('avc1'));
      assert.ok(track?.duration);
      assert.ok(Math.abs(track.duration - plan.durationSeconds) <= 0.2, `${track.duration}`);
      assert.ok(Math.abs(meta.format.duration! - plan.durationSeconds) <= 0.2);
      // Whole seconds (the catalog's durations) exactly, as our own probe reads them: a 5 s clip must pass
      // as a 5 s reference video.
      if (Number.isInteger(plan.durationSeconds)) {
        const probed = (await probeFile(file.path, 'mp4')).durationSeconds ?? Number.NaN;
        assert.ok(Math.abs(probed - plan.durationSeconds) < 1e-6, `${probed}`);
      }
      const info = await probe(file.path);
      assert.match(info, new RegExp(`Video: h264 .*yuv420p.*${plan.width}x${plan.height}`));
      // Square pixels: the frame is shown at its own proportions (854×480 as 16:9, not 107:60).
      assert.match(info, new RegExp(`${plan.width}x${plan.height} \\[SAR 1:1 `));
      // faststart: the moov box comes before mdat.
      const head = (await readFile(file.path)).subarray(0, 4096).toString('latin1');
      assert.ok(head.includes('moov'));
    });
  }

  it('draws moving, colourful frames', async () => {
    const file = await renderOutput(video({ seed: 'frames' }), { dir });
    const frame = async (at: string): Promise<PNG> => {
      const out = join(dir, `frame-${at}.png`);
      await run(FFMPEG_PATH, ['-v', 'error', '-ss', at, '-i', file.path, '-frames:v', '1', '-y', out]);
      return PNG.sync.read(await readFile(out));
    };
    const [a, b] = [await frame('0.2'), await frame('1.5')];
    assert.equal(a.width, 320);
    const colours = new Set<number>();
    for (let i = 0; i < a.data.length; i += 4 * 13)
      colours.add((a.data[i]! << 16) | (a.data[i + 1]! << 8) | a.data[i + 2]!);
    assert.ok(colours.size > 100, `${colours.size} colours`);
    assert.notDeepEqual(a.data, b.data, 'frames change over time');
  });

  it('kills ffmpeg on abort and removes the partial file', async () => {
    const sub = await mkdtemp(join(dir, 'abort-'));
    const controller = new AbortController();
    // A ten-minute full-HD clip would take minutes to render.
    const pending = renderOutput(video({ width: 1920, height: 1080, durationSeconds: 600 }), {
      dir: sub,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error('cancelled')), 300);
    const started = Date.now();
    await assert.rejects(pending, /cancelled/);
    assert.ok(Date.now() - started < 20_000);
    assert.deepEqual(await readdir(sub), []);
  });
});
