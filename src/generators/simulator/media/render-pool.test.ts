import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { OutputPlan } from '../../../catalog/model-spec.ts';
import { renderOutput } from './index.ts';
import { RenderPool } from './render-pool.ts';

const base = { filename: 'out', caption: '', seed: 'pool seed' };
const plans: OutputPlan[] = [
  { ...base, kind: 'audio', format: 'mp3', durationSeconds: 2 },
  { ...base, kind: 'image', format: 'png', width: 64, height: 48 },
  { ...base, kind: 'image', format: 'svg', width: 64, height: 48 },
  { ...base, kind: 'document', format: 'glb', faceLimit: 500, textured: true, pbr: true, parts: false },
  { ...base, kind: 'document', format: 'fbx', faceLimit: 500, textured: false, pbr: false, parts: false },
];

describe('render pool', () => {
  let dir = '';
  let pool: RenderPool;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'render-pool-'));
    pool = new RenderPool(1);
  });
  after(async () => {
    await pool.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('draws in a thread exactly the bytes the calling thread draws', async () => {
    for (const plan of plans) {
      const threaded = await pool.render(plan, { dir });
      const inline = await renderOutput(plan, { dir });
      assert.equal(threaded.contentType, inline.contentType);
      assert.equal(threaded.sizeBytes, inline.sizeBytes, plan.format);
      assert.deepEqual(await readFile(threaded.path), await readFile(inline.path), plan.format);
    }
    assert.equal(pool.renderedInThreads, plans.length);
  });

  it('leaves video to its ffmpeg process, and a pool of 0 threads draws everything in place', async () => {
    const before = pool.renderedInThreads;
    const video = await pool.render(
      { ...base, kind: 'video', format: 'mp4', width: 64, height: 64, durationSeconds: 1 },
      { dir },
    );
    assert.equal(video.contentType, 'video/mp4');
    assert.equal(pool.renderedInThreads, before);
    const inPlace = new RenderPool(0);
    assert.equal((await inPlace.render(plans[0]!, { dir })).contentType, 'audio/mpeg');
    assert.equal(inPlace.renderedInThreads, 0);
    await inPlace.close();
  });

  it('an abort stops the thread with the signal’s reason and leaves no file; the pool goes on', async () => {
    const sub = await mkdtemp(join(dir, 'abort-'));
    const controller = new AbortController();
    const long: OutputPlan = { ...base, kind: 'audio', format: 'mp3', durationSeconds: 600 };
    const pending = pool.render(long, { dir: sub, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('cancelled')), 200);
    await assert.rejects(pending, /cancelled/);
    assert.deepEqual(await readdir(sub), []);
    const again = await pool.render(plans[1]!, { dir: sub });
    assert.equal(again.contentType, 'image/png');
  });

  it('a thread’s failure reaches the caller', async () => {
    const bad = { ...base, kind: 'image', format: 'png', width: -1, height: 0 } as OutputPlan;
    await assert.rejects(pool.render(bad, { dir }));
  });
});
