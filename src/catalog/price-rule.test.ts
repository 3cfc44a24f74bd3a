import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ModeInputs } from './model-spec.ts';
import {
  baseWithSurcharges,
  fixedRate,
  flagSurcharge,
  perUnit,
  rateBySetting,
  type Surcharge,
  settingCount,
} from './price-rule.ts';

const NO_INPUTS: ModeInputs = { files: [] };

describe('price rules', () => {
  it('rateBySetting names a rate per value and picks the one of the settings', () => {
    const ref = rateBySetting('second_', 'quality', ['480p', '720p']);
    assert.deepEqual(ref.names, ['second_480p', 'second_720p']);
    assert.equal(ref.text, 'second_<quality>');
    assert.equal(ref.pick({ quality: '720p' }), 'second_720p');
  });

  it('perUnit multiplies the rate and describes itself with its notes', () => {
    const rule = perUnit({ rate: fixedRate('picture'), units: settingCount('n'), notes: ['style is free'] });
    assert.equal(rule.price({ n: 3 }, NO_INPUTS, { picture: 400 }), 1200);
    assert.equal(rule.description, '`picture` × n; style is free.');
    assert.deepEqual(rule.rates, ['picture']);
  });

  it('baseWithSurcharges adds each surcharge that applies, as often as it applies', () => {
    type S = { pbr: boolean; quad: boolean; blocks: number };
    const surcharges: Surcharge<S>[] = [
      { rate: 'pbr', when: 'when pbr is true', times: (s) => Number(s.pbr) },
      flagSurcharge('quad'),
      { rate: 'block', when: 'per block', times: (s) => s.blocks },
    ];
    const rule = baseWithSurcharges({ base: fixedRate('base'), surcharges });
    const rates = { base: 1000, pbr: 100, quad: 10, block: 1 };
    assert.equal(rule.price({ pbr: false, quad: false, blocks: 0 }, NO_INPUTS, rates), 1000);
    assert.equal(rule.price({ pbr: true, quad: true, blocks: 3 }, NO_INPUTS, rates), 1113);
    assert.deepEqual(rule.rates, ['base', 'pbr', 'quad', 'block']);
  });

  it('a surcharge that does not apply reads no rate; one that applies needs its rate', () => {
    const rule = baseWithSurcharges({ base: fixedRate('base'), surcharges: [flagSurcharge('quad')] });
    assert.equal(rule.price({ quad: false }, NO_INPUTS, { base: 5 }), 5);
    assert.throws(() => rule.price({ quad: true }, NO_INPUTS, { base: 5 }), /no rate "quad"/);
  });

  it('groups neighbouring surcharges that apply alike in the description', () => {
    const rule = baseWithSurcharges({
      base: fixedRate('base'),
      surcharges: [
        { rate: 'pbr', when: 'when pbr is true', times: () => 0 },
        flagSurcharge('quad'),
        flagSurcharge('parts'),
        { rate: 'autofix', when: 'when autofix is true', times: () => 0 },
      ],
      notes: ['the same for every version'],
    });
    assert.equal(
      rule.description,
      '`base` + `pbr` when pbr is true, + `quad`, `parts` each when true, + `autofix` when autofix is true; ' +
        'the same for every version.',
    );
  });

  it('a base without surcharges is described as flat', () => {
    const rule = baseWithSurcharges({ base: fixedRate('sounds'), surcharges: [] });
    assert.equal(rule.description, '`sounds`, flat.');
    assert.equal(rule.price({}, NO_INPUTS, { sounds: 300 }), 300);
  });
});
