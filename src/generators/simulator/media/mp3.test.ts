import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseFile } from 'music-metadata';
import type { AudioOutput } from '../../../catalog/model-spec.ts';
import { renderOutput } from './index.ts';
import { parseKey } from './synth-music.ts';

function audio(over: Partial<AudioOutput>): AudioOutput {
  return {
    kind: 'audio',
    format: 'mp3',
    filename: 'tune.mp3',
    caption: '',
    seed: 'tune seed',
    durationSeconds: 3,
    ...over,
  };
}

describe('MP3 renderer', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'media-mp3-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const plan of [
    audio({ durationSeconds: 3, tempoBpm: 100, musicalKey: 'C#m' }),
    audio({ durationSeconds: 20, loop: true, musicalKey: 'Bb' }),
    audio({ durationSeconds: 4.7, speech: true }),
  ]) {
    it(`lasts ${plan.durationSeconds} s (${plan.speech ? 'speech' : 'music'})`, async () => {
      const file = await renderOutput(plan, { dir });
      assert.equal(file.contentType, 'audio/mpeg');
      const meta = await parseFile(file.path, { duration: true });
      assert.equal(meta.format.codec, 'MPEG 2 Layer 3');
      assert.equal(meta.format.numberOfChannels, 1);
      assert.ok(Math.abs(meta.format.duration! - plan.durationSeconds) <= 0.15, `${meta.format.duration}`);
      const bytes = await readFile(file.path);
      assert.equal(bytes.length, file.sizeBytes);
      // Not silence: frames carry varied payload.
      assert.ok(new Set(bytes.subarray(1000, 3000)).size > 100);
    });
  }

  it('gives different bytes for different seeds, the same for the same plan', async () => {
    const read = async (seed: string) => readFile((await renderOutput(audio({ seed }), { dir })).path);
    const [a, b, c] = [await read('one'), await read('two'), await read('one')];
    assert.notDeepEqual(a, b);
    assert.deepEqual(a, c);
  });

  it('stops when the signal aborts and leaves no file', async () => {
    const controller = new AbortController();
    const pending = renderOutput(audio({ durationSeconds: 60 }), { dir, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('cancelled')), 50);
    await assert.rejects(pending, /cancelled/);
  });

  it('reads musical keys', () => {
    assert.deepEqual(
      parseKey('C#m', () => 0),
      { root: 1, minor: true },
    );
    assert.deepEqual(
      parseKey('Bb', () => 0),
      { root: 10, minor: false },
    );
    assert.deepEqual(
      parseKey('A minor', () => 0),
      { root: 9, minor: true },
    );
    assert.deepEqual(
      parseKey('F major', () => 0),
      { root: 5, minor: false },
    );
  });
});
