/**
 * The operator's price table as the start reads it: a file that lacks a rate some mode reads (a deleted
 * line, a misspelt name) stops the start with the file and the rate, instead of answering 500 to every
 * run that reads it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadPriceTable, MODELS } from './index.ts';
import { DEFAULT_PRICES_DIR } from './prices.ts';

/** A copy of the shipped price table, with `edit` applied to model-3d's file. */
function tableWith(edit: (rates: Record<string, number>) => void): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-prices-'));
  for (const name of fs.readdirSync(DEFAULT_PRICES_DIR)) {
    fs.copyFileSync(path.join(DEFAULT_PRICES_DIR, name), path.join(dir, name));
  }
  const file = path.join(dir, 'model-3d.json');
  const rates = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, number>;
  edit(rates);
  fs.writeFileSync(file, JSON.stringify(rates));
  return dir;
}

describe('loadPriceTable', () => {
  it('reads the shipped table', () => {
    assert.equal(loadPriceTable(MODELS)['model-3d']?.text_to_model, 1500);
  });

  it('refuses a file without a rate a mode reads, naming the file and the rate', () => {
    const dir = tableWith((rates) => {
      delete rates.texture;
      rates.textrue = 500;
    });
    try {
      assert.throws(
        () => loadPriceTable(MODELS, dir),
        (error: Error) => error.message.includes('model-3d.json') && /no rate texture$/.test(error.message),
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
