import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import type { AudioOutput, ModeSpec } from './model-spec.ts';
import { musicStyles } from './music-styles.ts';
import rates from './prices/music-styles.json' with { type: 'json' };
import { validateSettings } from './validate.ts';

const P = { prompt: 'slow piano ballad about autumn' };
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
  { name: 'prompt 3000 chars', settings: { prompt: 'x'.repeat(3000) }, ...ok },
  { name: 'prompt empty', settings: { prompt: '' }, ...bad('prompt') },
  { name: 'prompt 3001 chars', settings: { prompt: 'x'.repeat(3001) }, ...bad('prompt') },
  { name: 'prompt required', settings: {}, ...bad('prompt') },
  { name: 'style', settings: { ...P, style: 'st1' }, ...ok },
  { name: 'style empty', settings: { ...P, style: '' }, ...bad('style') },
  { name: 'instrumental', settings: { ...P, instrumental: true }, ...ok },
  { name: 'instrumental boolean', settings: { ...P, instrumental: 'yes' }, ...bad('instrumental') },
  ...[10, 300].map(
    (duration): Case => ({ name: `duration ${duration}`, settings: { ...P, duration }, ...ok }),
  ),
  ...[9, 301, 30.5, '60'].map(
    (duration): Case => ({
      name: `duration ${duration} refused`,
      settings: { ...P, duration },
      ...bad('duration'),
    }),
  ),
  { name: 'unknown setting', settings: { ...P, title: 'x' }, ...unknown('title') },
];

describe('music-styles settings', () => {
  for (const c of cases) {
    it(c.name, () => {
      const result = validateSettings(musicStyles, c.settings);
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
  const result = validateSettings(musicStyles, settings);
  if (!result.ok) assert.fail(JSON.stringify(result.violations));
  return { mode: result.mode, settings: result.settings };
}

describe('music-styles defaults, price, plan, references', () => {
  it('defaults: instrumental false, duration 60', () => {
    assert.deepEqual(accept(P).settings, { ...P, instrumental: false, duration: 60 });
  });
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
  it('publishes a JSON Schema', () => {
    for (const mode of musicStyles.modes)
      assert.doesNotThrow(() => z.toJSONSchema(mode.schema, { io: 'input' }));
  });
});
