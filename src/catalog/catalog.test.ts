/**
 * What every mode of the catalog declares besides its settings: an example run that is valid for that
 * mode, and a price rule whose rates are exactly the model's price table.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadPriceTable, MODELS, priceOf, validateSettings } from './index.ts';

const table = loadPriceTable(MODELS);

describe('catalog', () => {
  for (const model of MODELS) {
    for (const mode of model.modes) {
      it(`${model.key} ${mode.name}: the example is valid for its mode and its files are its URL settings`, () => {
        const checked = validateSettings(model, mode.example.settings);
        assert.ok(checked.ok, JSON.stringify(checked));
        assert.equal(checked.mode, mode);
        for (const file of mode.example.files) {
          assert.ok(mode.inputRules?.[file.field], `${file.field} has an input rule`);
          assert.deepEqual(mode.example.settings[file.field], [file.url]);
          assert.ok(mode.inputRules[file.field]?.formats.includes(file.format), file.field);
        }
        const amount = priceOf(model, mode, checked.settings, { files: mode.example.files }, table);
        assert.ok(Number.isSafeInteger(amount) && amount > 0, String(amount));
      });

      it(`${model.key} ${mode.name}: the price rule reads only rates of the price table`, () => {
        const rates = table[model.key] ?? {};
        for (const name of mode.priceRates) assert.ok(name in rates, `${model.key}.json has no rate ${name}`);
        assert.match(mode.priceDescription, /^`[^`]+`.*\.$/);
      });
    }

    it(`${model.key}: every rate of the price table is read by some mode`, () => {
      const read = new Set(model.modes.flatMap((mode) => mode.priceRates));
      for (const name of Object.keys(table[model.key] ?? {})) assert.ok(read.has(name), name);
    });
  }
});
