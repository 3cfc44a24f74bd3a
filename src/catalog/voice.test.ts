import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import type { AudioOutput, InputFile, ModeInputs, ModeSpec } from './model-spec.ts';
import rates from './prices/voice.json' with { type: 'json' };
import { validateSettings } from './validate.ts';
import { EXTRA_VOICES, voice } from './voice.ts';

const URL = 'https://example.com/my-voice.wav';
const NO_INPUTS: ModeInputs = { files: [] };
const T = { mode: 'text_to_dialogue', text: 'Hello there', voice: 'v1' };
const V = { mode: 'voice_change', audio: [URL], voice: 'v1' };

type Settings = Record<string, unknown>;
type Case = { name: string; settings: Settings } & (
  | { ok: true }
  | { ok: false; code: 'unknown_setting' | 'invalid_settings'; field: string }
);
const ok = { ok: true } as const;
const bad = (field: string) => ({ ok: false, code: 'invalid_settings', field }) as const;
const unknown = (field: string) => ({ ok: false, code: 'unknown_setting', field }) as const;

const cases: Case[] = [
  { name: 'mode required', settings: { text: 'x', voice: 'v1' }, ...bad('mode') },
  { name: 'mode unknown', settings: { ...T, mode: 'tts' }, ...bad('mode') },
  { name: 'text 1 char', settings: { ...T, text: 'x' }, ...ok },
  { name: 'text 5000 chars', settings: { ...T, text: 'x'.repeat(5000) }, ...ok },
  { name: 'text empty', settings: { ...T, text: '' }, ...bad('text') },
  { name: 'text 5001 chars', settings: { ...T, text: 'x'.repeat(5001) }, ...bad('text') },
  { name: 'text required', settings: { mode: 'text_to_dialogue', voice: 'v1' }, ...bad('text') },
  { name: 'voice required (dialogue)', settings: { mode: 'text_to_dialogue', text: 'x' }, ...bad('voice') },
  { name: 'voice empty', settings: { ...T, voice: '' }, ...bad('voice') },
  { name: 'voice must be a string', settings: { ...T, voice: 7 }, ...bad('voice') },
  ...EXTRA_VOICES.map((f): Case => ({ name: `${f} accepted`, settings: { ...T, [f]: 'v2' }, ...ok })),
  { name: 'voice_20 must be a string', settings: { ...T, voice_20: 1 }, ...bad('voice_20') },
  { name: 'voice_1 is not a setting', settings: { ...T, voice_1: 'v2' }, ...unknown('voice_1') },
  { name: 'voice_21 is not a setting', settings: { ...T, voice_21: 'v2' }, ...unknown('voice_21') },
  {
    name: 'dialogue lines of set voices',
    settings: { ...T, text: '[voice] Hi\n[voice_2] Hello\n[voice_1] Bye', voice_2: 'v2' },
    ...ok,
  },
  { name: 'line of an unset voice', settings: { ...T, text: '[voice] Hi\n[voice_3] Hello' }, ...bad('text') },
  { name: 'dialogue refuses audio', settings: { ...T, audio: [URL] }, ...unknown('audio') },
  { name: 'voice_change', settings: V, ...ok },
  { name: 'voice_change audio required', settings: { mode: 'voice_change', voice: 'v1' }, ...bad('audio') },
  { name: 'voice_change audio empty list', settings: { ...V, audio: [] }, ...bad('audio') },
  { name: 'voice_change audio two items', settings: { ...V, audio: [URL, URL] }, ...bad('audio') },
  { name: 'voice_change audio not a uri', settings: { ...V, audio: ['my voice'] }, ...bad('audio') },
  { name: 'voice_change audio not a list', settings: { ...V, audio: URL }, ...bad('audio') },
  { name: 'voice_change voice required', settings: { mode: 'voice_change', audio: [URL] }, ...bad('voice') },
  { name: 'voice_change refuses text', settings: { ...V, text: 'x' }, ...unknown('text') },
  { name: 'voice_change refuses voice_2', settings: { ...V, voice_2: 'v2' }, ...unknown('voice_2') },
];

/** The violation names the setting; the selector's violation comes without the `settings.` prefix. */
function names(violationField: string, field: string): boolean {
  return `${violationField.replace(/^settings\./, '')}.`.startsWith(`${field}.`);
}

describe('voice settings', () => {
  for (const c of cases) {
    it(c.name, () => {
      const result = validateSettings(voice, c.settings);
      if (c.ok) {
        assert.equal(result.ok, true, JSON.stringify(result.ok ? '' : result.violations));
        return;
      }
      assert.equal(result.ok, false, 'expected a refusal');
      if (result.ok) return;
      assert.equal(result.code, c.code, JSON.stringify(result.violations));
      assert.ok(
        result.violations.some((v) => names(v.field, c.field)),
        JSON.stringify(result.violations),
      );
    });
  }
});

function accept(settings: Settings): { mode: ModeSpec; settings: Settings } {
  const result = validateSettings(voice, settings);
  if (!result.ok) assert.fail(JSON.stringify(result.violations));
  return { mode: result.mode, settings: result.settings };
}
const audioFile = (durationSeconds?: number): InputFile => ({
  field: 'audio',
  position: 0,
  url: URL,
  format: 'wav',
  sizeBytes: 100_000,
  ...(durationSeconds === undefined ? {} : { durationSeconds }),
});

describe('voice price, plan, references', () => {
  const prices: [string, Settings, ModeInputs, number][] = [
    ['short text: one block', T, NO_INPUTS, 300],
    ['1000 chars: one block', { ...T, text: 'x'.repeat(1000) }, NO_INPUTS, 300],
    ['1001 chars: two blocks', { ...T, text: 'x'.repeat(1001) }, NO_INPUTS, 600],
    ['voice change 60 s', V, { files: [audioFile(60)] }, 300],
    ['voice change 61 s', V, { files: [audioFile(61)] }, 600],
    ['voice change length unknown', V, { files: [audioFile()] }, 300],
  ];
  for (const [name, settings, inputs, amount] of prices) {
    it(`price: ${name} = ${amount}`, () => {
      const { mode, settings: s } = accept(settings);
      assert.equal(mode.price(s, inputs, rates), amount);
    });
  }
  it('inputRules: audio formats, 20 MB', () => {
    const rule = voice.modes.find((m) => m.name === 'voice_change')?.inputRules?.['audio'];
    assert.deepEqual(rule?.formats, ['mp3', 'wav', 'ogg', 'm4a', 'flac', 'aac']);
    assert.equal(rule?.maxBytes, 20 * 1024 * 1024);
  });
  const durations: [string, Settings, ModeInputs, number][] = [
    ['30 chars: 2 s', { ...T, text: 'x'.repeat(30) }, NO_INPUTS, 2],
    ['31 chars: 3 s', { ...T, text: 'x'.repeat(31) }, NO_INPUTS, 3],
    ['tags are not spoken', { ...T, text: '[voice] ' + 'x'.repeat(15) }, NO_INPUTS, 1],
    ['1 char: at least 1 s', { ...T, text: 'x' }, NO_INPUTS, 1],
    ['voice change keeps the input length', V, { files: [audioFile(42.4)] }, 42],
  ];
  for (const [name, settings, inputs, seconds] of durations) {
    it(`plan: ${name}`, () => {
      const { mode, settings: s } = accept(settings);
      const plan = mode.plan(s, inputs);
      assert.equal(plan.outputs.length, 1);
      const out = plan.outputs[0] as AudioOutput;
      assert.equal(out.kind, 'audio');
      assert.equal(out.format, 'mp3');
      assert.equal(out.speech, true);
      assert.equal(out.durationSeconds, seconds);
      assert.deepEqual(plan.texts, []);
    });
  }
  it('every voice is a reference to the voice library', () => {
    const { mode, settings: s } = accept({ ...T, voice_2: 'b', voice_17: 'c' });
    assert.deepEqual(mode.references?.(s), [
      { library: 'voices', model: 'voice', id: 'v1', field: 'voice' },
      { library: 'voices', model: 'voice', id: 'b', field: 'voice_2' },
      { library: 'voices', model: 'voice', id: 'c', field: 'voice_17' },
    ]);
    const change = accept(V);
    assert.deepEqual(change.mode.references?.(change.settings), [
      { library: 'voices', model: 'voice', id: 'v1', field: 'voice' },
    ]);
  });
  it('every mode publishes a JSON Schema', () => {
    for (const mode of voice.modes) assert.doesNotThrow(() => z.toJSONSchema(mode.schema, { io: 'input' }));
  });
});
