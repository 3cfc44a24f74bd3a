import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AudioOutput, ModeInputs } from './model-spec.ts';
import rates from './prices/voice.json' with { type: 'json' };
import { bad, type Case, inputFile, ok, type Settings, settingsCases, unknown } from './settings-cases.ts';
import { EXTRA_VOICES, voice } from './voice.ts';

const URL = 'https://example.com/my-voice.wav';
const NO_INPUTS: ModeInputs = { files: [] };
const T = { mode: 'text_to_dialogue', text: 'Hello there', voice: 'v1' };
const V = { mode: 'voice_change', audio: [URL], voice: 'v1' };

const cases: Case[] = [
  ['mode required', { text: 'x', voice: 'v1' }, bad('mode')],
  ['mode unknown', { ...T, mode: 'tts' }, bad('mode')],
  ['text 1 char', { ...T, text: 'x' }, ok],
  ['text 5000 chars', { ...T, text: 'x'.repeat(5000) }, ok],
  ['text empty', { ...T, text: '' }, bad('text')],
  ['text only white space', { ...T, text: ' \n\t\u00a0' }, bad('text')],
  ['text only speaker tags', { ...T, text: '[voice]\n [voice_2] \n', voice_2: 'v2' }, bad('text')],
  ['text 5001 chars', { ...T, text: 'x'.repeat(5001) }, bad('text')],
  ['text 5000 emoji', { ...T, text: '😀'.repeat(5000) }, ok],
  ['text 5001 emoji', { ...T, text: '😀'.repeat(5001) }, bad('text')],
  ['text required', { mode: 'text_to_dialogue', voice: 'v1' }, bad('text')],
  ['voice required (dialogue)', { mode: 'text_to_dialogue', text: 'x' }, bad('voice')],
  ['voice empty', { ...T, voice: '' }, bad('voice')],
  ['voice must be a string', { ...T, voice: 7 }, bad('voice')],
  ...EXTRA_VOICES.map((f): Case => [`${f} accepted`, { ...T, [f]: 'v2' }, ok]),
  ['voice_20 must be a string', { ...T, voice_20: 1 }, bad('voice_20')],
  ['voice_1 is not a setting', { ...T, voice_1: 'v2' }, unknown('voice_1')],
  ['voice_21 is not a setting', { ...T, voice_21: 'v2' }, unknown('voice_21')],
  [
    'dialogue lines of set voices',
    { ...T, text: '[voice] Hi\n[voice_2] Hello\n[voice_1] Bye', voice_2: 'v2' },
    ok,
  ],
  ['line of an unset voice', { ...T, text: '[voice] Hi\n[voice_3] Hello' }, bad('text')],
  // The ElevenLabs adapter reads a tag after any white space of its line, a no-break space too.
  ['line of an unset voice after a no-break space', { ...T, text: 'Hi\n\u00a0[voice_3] Hello' }, bad('text')],
  ['line of an unset voice after an ideographic space', { ...T, text: '\u3000[voice_3] Hello' }, bad('text')],
  ['dialogue refuses audio', { ...T, audio: [URL] }, unknown('audio')],
  ['voice_change', V, ok],
  ['voice_change audio required', { mode: 'voice_change', voice: 'v1' }, bad('audio')],
  ['voice_change audio empty list', { ...V, audio: [] }, bad('audio')],
  ['voice_change audio two items', { ...V, audio: [URL, URL] }, bad('audio')],
  ['voice_change audio not a uri', { ...V, audio: ['my voice'] }, bad('audio.0')],
  ['voice_change audio not a list', { ...V, audio: URL }, bad('audio')],
  ['voice_change voice required', { mode: 'voice_change', audio: [URL] }, bad('voice')],
  ['voice_change refuses text', { ...V, text: 'x' }, unknown('text')],
  ['voice_change refuses voice_2', { ...V, voice_2: 'v2' }, unknown('voice_2')],
];

const suite = settingsCases(voice);
const { accept } = suite;

suite.describe('voice settings', cases);
const audioFile = (durationSeconds?: number) =>
  inputFile('audio', { url: URL, format: 'wav', sizeBytes: 100_000, durationSeconds });

describe('voice price, plan, references', () => {
  const prices: [string, Settings, ModeInputs, number][] = [
    ['short text: one block', T, NO_INPUTS, 300],
    ['1000 chars: one block', { ...T, text: 'x'.repeat(1000) }, NO_INPUTS, 300],
    ['1001 chars: two blocks', { ...T, text: 'x'.repeat(1001) }, NO_INPUTS, 600],
    // The length rule counts an emoji as one character; the price counts the same way.
    ['1000 emoji: one block', { ...T, text: '😀'.repeat(1000) }, NO_INPUTS, 300],
    ['5000 emoji: five blocks', { ...T, text: '😀'.repeat(5000) }, NO_INPUTS, 1500],
    ['voice change 60 s', V, { files: [audioFile(60)] }, 300],
    ['voice change 61 s', V, { files: [audioFile(61)] }, 600],
    // Encoder padding of a 60 s mp3 does not start a second minute; half a second more does.
    ['voice change 60.03 s', V, { files: [audioFile(60.03)] }, 300],
    ['voice change 60.5 s', V, { files: [audioFile(60.5)] }, 600],
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
    [
      'tags after a no-break space are not spoken',
      { ...T, text: '\u00a0[voice] ' + 'x'.repeat(15) },
      NO_INPUTS,
      1,
    ],
    ['30 emoji: 2 s', { ...T, text: '😀'.repeat(30) }, NO_INPUTS, 2],
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
  suite.itPublishesJsonSchemas();
});
