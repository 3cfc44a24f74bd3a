import assert from 'node:assert/strict';
import { it } from 'node:test';
import { AUDIO_INPUT, text } from './fields.ts';
import { addRule, type GenerationPlan, type ModelSpec } from './model-spec.ts';
import { musicMode } from './music-mode.ts';
import { bad, type Case, ok, settingsCases, unknown } from './settings-cases.ts';

const NO_PLAN: GenerationPlan = { outputs: [], caption: '', texts: [], workSeconds: 1 };

/** Modes declared only here: what a new music mode takes to write. */
const hum = musicMode({
  name: 'hum',
  tracks: { audio: AUDIO_INPUT },
  includedSeconds: 60,
  fields: { tune: text(1, 10) },
  refine: (s, ctx) => {
    if (s.tune === 'no') addRule(ctx, 'tune', 'tune must not be no', 'tune не может быть no');
  },
  plan: () => NO_PLAN,
  example: { settings: { tune: 'la' }, files: { audio: ['mp3', 61] } },
});
const whistle = musicMode({
  name: 'whistle',
  fields: { tune: text(1, 10) },
  plan: () => NO_PLAN,
  example: { settings: { tune: 'fi' } },
});
const model: ModelSpec = {
  key: 'music',
  kind: 'audio',
  name: 'test',
  modeField: 'mode',
  modes: [hum, whistle],
};
const AUDIO = ['https://example.com/a.mp3'];

const cases: Case[] = [
  ['hum', { mode: 'hum', audio: AUDIO, tune: 'la' }, ok],
  ['hum with a model version', { mode: 'hum', model: 'V6_MINI', audio: AUDIO, tune: 'la' }, ok],
  ['hum without its track', { mode: 'hum', tune: 'la' }, bad('audio')],
  ['hum refused by its rule', { mode: 'hum', audio: AUDIO, tune: 'no' }, bad('tune')],
  ['whistle with a track', { mode: 'whistle', audio: AUDIO, tune: 'fi' }, unknown('audio')],
];

settingsCases(model).describe('a music mode built by musicMode', cases, () => {
  it('derives the selector, the model version and the tracks, in that order', () => {
    const { settings } = settingsCases(model).accept({ mode: 'hum', audio: AUDIO, tune: 'la' });
    assert.deepEqual(Object.keys(settings), ['mode', 'model', 'audio', 'tune']);
    assert.equal(settings['model'], 'V6');
    assert.deepEqual(hum.inputRules, { audio: AUDIO_INPUT });
    assert.equal(whistle.inputRules, undefined);
  });

  it('prices by the rate named like the mode, with audio input beyond the included seconds', () => {
    const rates = { hum: 100, whistle: 50, audio_input_per_30s: 10 };
    assert.equal(hum.price({}, { files: hum.example.files }, rates), 110);
    assert.match(hum.priceDescription, /^`hum` \+ `audio_input_per_30s` .* beyond 60 s;/);
    assert.equal(whistle.price({}, { files: [] }, rates), 50);
    assert.match(whistle.priceDescription, /^`whistle`, flat; this mode takes no audio input;/);
  });

  it('puts the mode into its example', () => {
    assert.deepEqual(hum.example.settings, {
      mode: 'hum',
      tune: 'la',
      audio: ['https://example.com/audio.mp3'],
    });
    assert.deepEqual(whistle.example, { settings: { mode: 'whistle', tune: 'fi' }, files: [] });
  });
});
