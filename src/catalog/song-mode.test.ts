import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { AUDIO_INPUT, isRefusedSetting, text } from './fields.ts';
import type { InputFile, ModelSpec } from './model-spec.ts';
import { vocalGender } from './music-common.ts';
import { bad, type Case, inputFile, ok, settingsCases } from './settings-cases.ts';
import { songMode, withoutDefaults } from './song-mode.ts';

/** A song mode declared only here: what a new simple/advanced mode of `music` takes to write. */
const remix = songMode({
  name: 'remix',
  tracks: { audio: AUDIO_INPUT },
  advancedOnly: { negativeTags: text(0, 500).optional(), vocalGender: vocalGender.default('m') },
  lyricsRequired: true,
  singer: true,
  example: { settings: { songDescription: 'a remix' }, files: { audio: ['mp3', 100] } },
});
const model: ModelSpec = { key: 'music', kind: 'audio', name: 'test', modeField: 'mode', modes: [remix] };
const { describe: describeCases, accept } = settingsCases(model);

const AUDIO = ['https://example.com/a.mp3'];
const FILES: InputFile[] = [
  inputFile('audio', { url: AUDIO[0] ?? '', format: 'mp3', sizeBytes: 1_000_000, durationSeconds: 100 }),
];
const SIMPLE = { mode: 'remix', audio: AUDIO, songDescription: 'a remix' };
const ADVANCED = { mode: 'remix', audio: AUDIO, customMode: true, title: 'T', style: 's', prompt: 'la' };

describe('withoutDefaults', () => {
  it('makes fields with a default optional, keeps the others, and marks every one refused', () => {
    const optional = text(1, 5).optional();
    const shape = withoutDefaults({ n: z.int().default(3), o: optional });
    assert.equal(shape['n']?.safeParse(undefined).data, undefined);
    assert.equal(shape['o']?.safeParse('abc').data, 'abc');
    assert.ok(isRefusedSetting(shape['n']) && isRefusedSetting(shape['o']));
    // The field the other branch shares is not marked there.
    assert.ok(!isRefusedSetting(optional));
  });
});

const cases: Case[] = [
  ['simple', SIMPLE, ok],
  ['advanced', ADVANCED, ok],
  ['simple with an advanced-only setting', { ...SIMPLE, negativeTags: 'x' }, bad('negativeTags')],
  ['simple with duration', { ...SIMPLE, duration: 30 }, bad('duration')],
  ['advanced without lyrics', { ...ADVANCED, prompt: undefined }, bad('prompt')],
  ['persona and voice together', { ...SIMPLE, persona: 'p', voice: 'v' }, bad('voice')],
];

describeCases('a song mode built by songMode', cases, () => {
  it('fills in the advanced defaults only in advanced mode', () => {
    const simple = accept(SIMPLE).settings;
    assert.equal('vocalGender' in simple, false);
    assert.equal('duration' in simple, false);
    const advanced = accept(ADVANCED).settings;
    assert.equal(advanced['vocalGender'], 'm');
    assert.equal(advanced['duration'], 20);
  });

  it('prices audio input beyond 90 s', () => {
    const rates = { remix: 1000, audio_input_per_30s: 300 };
    assert.equal(remix.price(accept(SIMPLE).settings, { files: FILES }, rates), 1300);
  });

  it('describes its price rule and names the rates it reads', () => {
    assert.deepEqual(remix.priceRates, ['remix', 'audio_input_per_30s']);
    assert.match(remix.priceDescription, /^`remix` \+ `audio_input_per_30s` .* beyond 90 s; the same for V6/);
  });

  it('carries its example run', () => {
    assert.deepEqual(remix.example.settings, {
      mode: 'remix',
      songDescription: 'a remix',
      audio: ['https://example.com/audio.mp3'],
    });
    assert.equal(remix.example.files[0]?.durationSeconds, 100);
  });

  it('takes the singer from the libraries and follows the source track', () => {
    const settings = accept({ ...SIMPLE, persona: 'p1' }).settings;
    assert.deepEqual(remix.references?.(settings), [
      { library: 'personas', model: 'music', id: 'p1', field: 'persona' },
    ]);
    const plan = remix.plan(settings, { files: FILES });
    assert.equal(plan.outputs[0]?.kind === 'audio' && plan.outputs[0].durationSeconds, 100);
  });
});
