import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { InputFile, ModeInputs } from './model-spec.ts';
import { audioInputTotal, madeUpTitle, musicPriceRule, slug } from './music-common.ts';
import { inputFile } from './settings-cases.ts';

const file = (field: string, durationSeconds?: number): InputFile =>
  inputFile(field, { url: 'https://example.com/a.mp3', format: 'mp3', sizeBytes: 1, durationSeconds });

describe('music-common', () => {
  it('slug keeps letters of any script', () => {
    assert.equal(slug('Ночной город, часть 2!'), 'ночной-город-часть-2');
    assert.equal(slug('***'), 'track');
    assert.ok(slug('x'.repeat(200)).length <= 60);
  });
  it('madeUpTitle takes the first words', () => {
    assert.equal(
      madeUpTitle('a calm song about the northern sea at night'),
      'A calm song about the northern',
    );
    assert.equal(madeUpTitle('rain.'), 'Rain');
    assert.equal(madeUpTitle('   '), 'Untitled');
  });
  it('madeUpTitle ends on a word, not on a space left by punctuation', () => {
    assert.equal(madeUpTitle('Une chanson sur la pluie !'), 'Une chanson sur la pluie');
    assert.equal(madeUpTitle('rain on the roof ...'), 'Rain on the roof');
    assert.equal(madeUpTitle(`${'a'.repeat(79)} b`), 'A'.padEnd(79, 'a'));
  });
  it('madeUpTitle and slug never split a character in two', () => {
    const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
    const title = madeUpTitle(`a${'😀'.repeat(100)}`);
    assert.equal(title, `A${'😀'.repeat(79)}`);
    assert.ok(!lone.test(title));
    // Letters outside the BMP (mathematical bold) are letters: the slug keeps 60 of them whole.
    const stem = slug(`a${'𝐀'.repeat(100)}`);
    assert.equal(Array.from(stem).length, 60);
    assert.ok(!lone.test(stem));
  });
  it('audioInputTotal sums audio and audio2, each to the nearest second', () => {
    const files = [file('audio', 60.4), file('audio2', 29.6), file('other', 500), file('audio')];
    assert.equal(audioInputTotal({ files }), 90);
  });
  it('musicPriceRule adds a rate per started 30 s beyond the included seconds', () => {
    const rates = { extend: 1200, replace_upload: 500, audio_input_per_30s: 300 };
    const musicPrice = (mode: string, inputs: ModeInputs, includedSeconds?: number): number =>
      musicPriceRule(mode, { audioInput: true, ...(includedSeconds ? { includedSeconds } : {}) }).price(
        {},
        inputs,
        rates,
      );
    assert.equal(musicPrice('extend', { files: [file('audio', 90)] }), 1200);
    assert.equal(musicPrice('extend', { files: [file('audio', 120)] }), 1500);
    assert.equal(musicPrice('extend', { files: [file('audio', 150)] }), 1800);
    assert.equal(musicPrice('replace_upload', { files: [file('audio', 90)] }, 60), 800);
    assert.throws(() => musicPrice('generate', { files: [] }), /no rate "generate"/);
  });
});
