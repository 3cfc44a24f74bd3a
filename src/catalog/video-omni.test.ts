import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GenerationPlan } from './model-spec.ts';
import rates from './prices/video-omni.json' with { type: 'json' };
import { bad, type Case, ok, type Settings, settingsCases, unknown } from './settings-cases.ts';
import { videoOmni } from './video-omni.ts';

const base = { prompt: 'two friends talk' };

const cases: Case[] = [
  ['prompt 5000', { prompt: 'x'.repeat(5000) }, ok],
  ['prompt 5001', { prompt: 'x'.repeat(5001) }, bad('prompt')],
  ['prompt empty', { prompt: '' }, bad('prompt')],
  ['prompt required', { duration: 5 }, bad('prompt')],
  ['3 characters', { ...base, character_ids: ['a', 'b', 'c'] }, ok],
  ['4 characters', { ...base, character_ids: ['a', 'b', 'c', 'd'] }, bad('character_ids')],
  ['character id is a string', { ...base, character_ids: [1] }, bad('character_ids.0')],
  ['character id not empty', { ...base, character_ids: [''] }, bad('character_ids.0')],
  ['character ids do not repeat', { ...base, character_ids: ['a', 'a'] }, bad('character_ids')],
  ['3 voices', { ...base, audio_ids: ['a', 'b', 'c'] }, ok],
  ['4 voices', { ...base, audio_ids: ['a', 'b', 'c', 'd'] }, bad('audio_ids')],
  ['voice ids do not repeat', { ...base, audio_ids: ['v', 'v'] }, bad('audio_ids')],
  ['duration 3', { ...base, duration: 3 }, ok],
  ['duration 15', { ...base, duration: 15 }, ok],
  ['duration 2', { ...base, duration: 2 }, bad('duration')],
  ['duration 16', { ...base, duration: 16 }, bad('duration')],
  ['duration integer', { ...base, duration: 4.5 }, bad('duration')],
  ['duration is a number', { ...base, duration: '5s' }, bad('duration')],
  ...['16:9', '9:16', '1:1'].map((r): Case => [`aspect_ratio ${r}`, { ...base, aspect_ratio: r }, ok]),
  ['aspect_ratio 4:3', { ...base, aspect_ratio: '4:3' }, bad('aspect_ratio')],
  ['unknown setting', { ...base, quality: '720p' }, unknown('quality')],
];

const suite = settingsCases(videoOmni);

suite.describe('video-omni settings', cases, () => {
  suite.itFillsInDefaults(base, { ...base, duration: 5, aspect_ratio: '16:9' });
  suite.itPublishesJsonSchemas();

  it('references the characters and voices of the person', () => {
    const result = suite.accept({ ...base, character_ids: ['c1', 'c2'], audio_ids: ['v1'] });
    assert.deepEqual(result.mode.references?.(result.settings), [
      { library: 'characters', model: 'video-omni', id: 'c1', field: 'character_ids.0' },
      { library: 'characters', model: 'video-omni', id: 'c2', field: 'character_ids.1' },
      { library: 'voices', model: 'video-omni', id: 'v1', field: 'audio_ids.0' },
    ]);
  });
});

function run(settings: Settings): { price: number; plan: GenerationPlan } {
  const result = suite.accept(settings);
  const inputs = { files: [] };
  return {
    price: result.mode.price(result.settings, inputs, rates),
    plan: result.mode.plan(result.settings, inputs),
  };
}

describe('video-omni price and plan', () => {
  it('charges per second; saved characters and voices are free', () => {
    assert.equal(run(base).price, 5 * rates.second);
    assert.ok(run({ ...base, duration: 6 }).price > run(base).price);
    assert.equal(run({ ...base, character_ids: ['c'], audio_ids: ['v'] }).price, run(base).price);
  });

  const sizes: [string, number, number][] = [
    ['16:9', 1280, 720],
    ['9:16', 720, 1280],
    ['1:1', 720, 720],
  ];
  for (const [aspect_ratio, width, height] of sizes) {
    it(`makes one ${width}×${height} mp4 for ${aspect_ratio}`, () => {
      const { plan } = run({ ...base, aspect_ratio, duration: 8 });
      assert.equal(plan.outputs.length, 1);
      const [out] = plan.outputs;
      assert.ok(out?.kind === 'video');
      assert.deepEqual([out.format, out.width, out.height, out.durationSeconds], ['mp4', width, height, 8]);
      assert.deepEqual(plan.texts, []);
    });
  }
});
