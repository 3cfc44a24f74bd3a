import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { ModeInputs, ModelSpec, ModeSpec, PriceRates } from './model-spec.ts';

/** Rates of every model, by model key. */
export type PriceTable = Readonly<Record<string, PriceRates>>;

export const DEFAULT_PRICES_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'prices');

const ratesSchema = z.record(z.string(), z.number().int().nonnegative());

/**
 * Reads the operator's price table: one JSON file per model in `dir` (`<model key>.json`, a flat map of
 * integer kopecks). Every model must have its file with every rate its modes read; a malformed file, or
 * one without such a rate (a typo, a deleted line), stops the start with its name, rather than failing
 * each run that reads the rate with a 500.
 */
export function loadPriceTable(models: readonly ModelSpec[], dir: string = DEFAULT_PRICES_DIR): PriceTable {
  const table: Record<string, PriceRates> = {};
  for (const model of models) {
    const file = path.join(dir, `${model.key}.json`);
    let raw: unknown;
    try {
      raw = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (cause) {
      throw new Error(`price table ${file} is missing or not JSON`, { cause });
    }
    const parsed = ratesSchema.safeParse(raw);
    if (!parsed.success) throw new Error(`price table ${file}: every rate must be a non-negative integer`);
    const missing = [...new Set(model.modes.flatMap((mode) => mode.priceRates))].filter(
      (name) => !Object.hasOwn(parsed.data, name),
    );
    if (missing.length > 0) throw new Error(`price table ${file} has no rate ${missing.join(', ')}`);
    table[model.key] = Object.freeze(parsed.data);
  }
  return Object.freeze(table);
}

/** The price of a run: the one function behind both POST /v1/price and the hold (CONTRACT §5). */
export function priceOf(
  model: ModelSpec,
  mode: ModeSpec,
  settings: Record<string, unknown>,
  inputs: ModeInputs,
  table: PriceTable,
): number {
  const rates = table[model.key];
  if (!rates) throw new Error(`price table has no model ${model.key}`);
  const amount = mode.price(settings, inputs, rates);
  if (!Number.isSafeInteger(amount) || amount < 0)
    throw new Error(`price of ${model.key} is not a whole amount`);
  return amount;
}
