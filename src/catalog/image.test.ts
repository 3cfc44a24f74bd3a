import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IMAGE_SIZES, image } from './image.ts';
import type { ImageOutput } from './model-spec.ts';
import rates from './prices/image.json' with { type: 'json' };
import { bad, type Case, ok, settingsCases, unknown } from './settings-cases.ts';

const P = { prompt: 'a lighthouse at dawn' };

const cases: Case[] = [
  ['prompt 1 char', { prompt: 'x' }, ok],
  ['prompt 10000 chars', { prompt: 'x'.repeat(10000) }, ok],
  ['prompt empty', { prompt: '' }, bad('prompt')],
  ['prompt 10001 chars', { prompt: 'x'.repeat(10001) }, bad('prompt')],
  ['prompt required', {}, bad('prompt')],
  ['style_id', { ...P, style_id: 's1' }, ok],
  ['style_id empty', { ...P, style_id: '' }, bad('style_id')],
  ...IMAGE_SIZES.map((size): Case => [`size ${size}`, { ...P, size }, ok]),
  ['size 512x512', { ...P, size: '512x512' }, bad('size')],
  ...[1, 4].map((n): Case => [`n ${n}`, { ...P, n }, ok]),
  ...[0, 5, 1.5, '2'].map((n): Case => [`n ${n} refused`, { ...P, n }, bad('n')]),
  ['no mode selector', { ...P, mode: 'default' }, unknown('mode')],
  ['unknown setting', { ...P, negative_prompt: 'x' }, unknown('negative_prompt')],
];

const suite = settingsCases(image);
const { accept } = suite;

suite.describe('image settings', cases);

describe('image defaults, price, plan, references', () => {
  suite.itFillsInDefaults(P, { ...P, size: '1024x1024', n: 1 }, 'defaults: size 1024x1024, n 1');
  it('price per picture times n', () => {
    for (const n of [1, 2, 4]) {
      const { mode, settings } = accept({ ...P, n });
      assert.equal(mode.price(settings, { files: [] }, rates), n * 400);
    }
  });
  it('plan: n PNG pictures of the size', () => {
    const { mode, settings } = accept({ ...P, n: 3, size: '1365x1024' });
    const plan = mode.plan(settings, { files: [] });
    assert.equal(plan.outputs.length, 3);
    for (const out of plan.outputs as ImageOutput[]) {
      assert.deepEqual([out.kind, out.format, out.width, out.height], ['image', 'png', 1365, 1024]);
    }
    assert.equal(new Set(plan.outputs.map((o) => o.seed)).size, 3);
    assert.equal(new Set(plan.outputs.map((o) => o.filename)).size, 3);
    assert.deepEqual(plan.texts, []);
  });
  it('style_id is a reference to the image styles', () => {
    const { mode, settings } = accept({ ...P, style_id: 's1' });
    assert.deepEqual(mode.references?.(settings), [
      { library: 'styles', model: 'image', id: 's1', field: 'style_id' },
    ]);
    const plain = accept(P);
    assert.deepEqual(plain.mode.references?.(plain.settings), []);
  });
  suite.itPublishesJsonSchemas();
});

it('a vector style gives SVG pictures, a raster style PNG (CONTRACT §2)', () => {
  const mode = image.modes[0]!;
  const settings = { prompt: 'a fox', style_id: 's1', size: '1024x1024', n: 2 };
  const vector = mode.plan(settings, { files: [], records: { s1: { type: 'vector' } } });
  assert.deepEqual(
    vector.outputs.map((o) => [o.format, o.filename]),
    [
      ['svg', 'image-1.svg'],
      ['svg', 'image-2.svg'],
    ],
  );
  const raster = mode.plan(settings, { files: [], records: { s1: { type: 'raster' } } });
  assert.deepEqual(
    raster.outputs.map((o) => o.format),
    ['png', 'png'],
  );
});
