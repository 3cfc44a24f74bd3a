import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { IMAGE_SIZES, image } from './image.ts';
import type { ImageOutput, ModeSpec } from './model-spec.ts';
import rates from './prices/image.json' with { type: 'json' };
import { validateSettings } from './validate.ts';

const P = { prompt: 'a lighthouse at dawn' };
type Settings = Record<string, unknown>;
type Case = { name: string; settings: Settings } & (
  | { ok: true }
  | { ok: false; code: 'unknown_setting' | 'invalid_settings'; field: string }
);
const ok = { ok: true } as const;
const bad = (field: string) => ({ ok: false, code: 'invalid_settings', field }) as const;
const unknown = (field: string) => ({ ok: false, code: 'unknown_setting', field }) as const;

const cases: Case[] = [
  { name: 'prompt 1 char', settings: { prompt: 'x' }, ...ok },
  { name: 'prompt 10000 chars', settings: { prompt: 'x'.repeat(10000) }, ...ok },
  { name: 'prompt empty', settings: { prompt: '' }, ...bad('prompt') },
  { name: 'prompt 10001 chars', settings: { prompt: 'x'.repeat(10001) }, ...bad('prompt') },
  { name: 'prompt required', settings: {}, ...bad('prompt') },
  { name: 'style_id', settings: { ...P, style_id: 's1' }, ...ok },
  { name: 'style_id empty', settings: { ...P, style_id: '' }, ...bad('style_id') },
  ...IMAGE_SIZES.map((size): Case => ({ name: `size ${size}`, settings: { ...P, size }, ...ok })),
  { name: 'size 512x512', settings: { ...P, size: '512x512' }, ...bad('size') },
  ...[1, 4].map((n): Case => ({ name: `n ${n}`, settings: { ...P, n }, ...ok })),
  ...[0, 5, 1.5, '2'].map((n): Case => ({ name: `n ${n} refused`, settings: { ...P, n }, ...bad('n') })),
  { name: 'no mode selector', settings: { ...P, mode: 'default' }, ...unknown('mode') },
  { name: 'unknown setting', settings: { ...P, negative_prompt: 'x' }, ...unknown('negative_prompt') },
];

describe('image settings', () => {
  for (const c of cases) {
    it(c.name, () => {
      const result = validateSettings(image, c.settings);
      if (c.ok) {
        assert.equal(result.ok, true, JSON.stringify(result.ok ? '' : result.violations));
        return;
      }
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.equal(result.code, c.code);
      assert.ok(
        result.violations.some((v) => v.field === `settings.${c.field}`),
        JSON.stringify(result.violations),
      );
    });
  }
});

function accept(settings: Settings): { mode: ModeSpec; settings: Settings } {
  const result = validateSettings(image, settings);
  if (!result.ok) assert.fail(JSON.stringify(result.violations));
  return { mode: result.mode, settings: result.settings };
}

describe('image defaults, price, plan, references', () => {
  it('defaults: size 1024x1024, n 1', () => {
    assert.deepEqual(accept(P).settings, { ...P, size: '1024x1024', n: 1 });
  });
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
  it('publishes a JSON Schema', () => {
    for (const mode of image.modes) assert.doesNotThrow(() => z.toJSONSchema(mode.schema, { io: 'input' }));
  });
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
