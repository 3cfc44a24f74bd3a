import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AudioOutput } from './model-spec.ts';
import { musicStyles } from './music-styles.ts';
import rates from './prices/music-styles.json' with { type: 'json' };
import { bad, type Case, ok, settingsCases, unknown } from './settings-cases.ts';

const P = { prompt: 'slow piano ballad about autumn' };

const cases: Case[] = [
  ['prompt 1 char', { prompt: 'x' }, ok],
  ['prompt 3000 chars', { prompt: 'x'.repeat(3000) }, ok],
  ['prompt empty', { prompt: '' }, bad('prompt')],
  ['prompt 3001 chars', { prompt: 'x'.repeat(3001) }, bad('prompt')],
  ['prompt required', {}, bad('prompt')],
  ['style', { ...P, style: 'st1' }, ok],
  ['style empty', { ...P, style: '' }, bad('style')],
  ['instrumental', { ...P, instrumental: true }, ok],
  ['instrumental boolean', { ...P, instrumental: 'yes' }, bad('instrumental')],
  ...[10, 300].map((duration): Case => [`duration ${duration}`, { ...P, duration }, ok]),
  ...[9, 301, 30.5, '60'].map(
    (duration): Case => [`duration ${duration} refused`, { ...P, duration }, bad('duration')],
  ),
  ['unknown setting', { ...P, title: 'x' }, unknown('title')],
];

const suite = settingsCases(musicStyles);
const { accept } = suite;

suite.describe('music-styles settings', cases);

describe('music-styles defaults, price, plan, references', () => {
  suite.itFillsInDefaults(
    P,
    { ...P, instrumental: false, duration: 60 },
    'defaults: instrumental false, duration 60',
  );
  const prices: [number, number][] = [
    [10, 300],
    [30, 300],
    [60, 600],
    [61, 900],
    [300, 3000],
  ];
  for (const [duration, amount] of prices) {
    it(`price of ${duration} s = ${amount}`, () => {
      const { mode, settings } = accept({ ...P, duration });
      assert.equal(mode.price(settings, { files: [] }, rates), amount);
    });
  }
  it('plan: one mp3 of the duration; title and lyrics unless instrumental', () => {
    const { mode, settings } = accept({ ...P, duration: 95 });
    const plan = mode.plan(settings, { files: [] });
    assert.equal(plan.outputs.length, 1);
    const out = plan.outputs[0] as AudioOutput;
    assert.deepEqual([out.kind, out.format, out.durationSeconds], ['audio', 'mp3', 95]);
    assert.equal(plan.texts.length, 2);
    const inst = accept({ ...P, instrumental: true });
    assert.equal(inst.mode.plan(inst.settings, { files: [] }).texts.length, 1);
  });
  it('style is a reference to the music styles', () => {
    const { mode, settings } = accept({ ...P, style: 'st1' });
    assert.deepEqual(mode.references?.(settings), [
      { library: 'styles', model: 'music-styles', id: 'st1', field: 'style' },
    ]);
  });
  suite.itPublishesJsonSchemas();
});
