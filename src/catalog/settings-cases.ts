/**
 * Test support for the catalog tests: tables of settings that a model must accept or refuse, and the
 * checks every model shares (defaults filled in, a JSON Schema for every mode).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import type { InputFile, MediaFormat, ModelSpec, ModeSpec } from './model-spec.ts';
import { validateSettings } from './validate.ts';

export type Settings = Record<string, unknown>;
export type Refusal = { ok: false; code: 'unknown_setting' | 'invalid_settings'; field: string };
export type Expect = { ok: true } | Refusal;
/** One row of a settings table: what the test is called, the settings, what validation must say. */
export type Case = [name: string, settings: Settings, expect: Expect];

export const ok: Expect = { ok: true };
/** Refused as `invalid_settings` with a violation on `settings.<field>`. */
export const bad = (field: string): Expect => ({ ok: false, code: 'invalid_settings', field });
/** Refused as `unknown_setting` with a violation on `settings.<field>`. */
export const unknown = (field: string): Expect => ({ ok: false, code: 'unknown_setting', field });

/** Validates `settings` against `model` and asserts the expected acceptance or refusal. */
export function checkCase(model: ModelSpec, [name, settings, expect]: Case): void {
  const result = validateSettings(model, settings);
  if (expect.ok) {
    assert.equal(result.ok, true, JSON.stringify(result.ok ? '' : result.violations));
    return;
  }
  assert.equal(result.ok, false, `${name} was accepted`);
  if (result.ok) return;
  assert.equal(result.code, expect.code, JSON.stringify(result.violations));
  // validate.ts names every field, the mode selector too, with the `settings.` prefix.
  assert.ok(
    result.violations.some((v) => v.field === `settings.${expect.field}`),
    `no violation on settings.${expect.field}: ${JSON.stringify(result.violations)}`,
  );
  for (const v of result.violations) assert.ok(v.en !== '' && v.ru !== '', 'messages in both languages');
}

/**
 * Registers a `describe(title)` with one test per case, named `accepts: …` or `refuses: …`; `more`
 * registers further tests inside the same block.
 */
export function describeSettingsCases(
  title: string,
  model: ModelSpec,
  cases: readonly Case[],
  more?: () => void,
): void {
  describe(title, () => {
    for (const c of cases) {
      it(`${c[2].ok ? 'accepts' : 'refuses'}: ${c[0]}`, () => checkCase(model, c));
    }
    more?.();
  });
}

/** Validated settings and their mode; fails the test when the settings are refused. */
export function acceptSettings(model: ModelSpec, settings: Settings): { mode: ModeSpec; settings: Settings } {
  const result = validateSettings(model, settings);
  if (!result.ok) assert.fail(JSON.stringify(result.violations));
  return { mode: result.mode, settings: result.settings };
}

/** Registers a test that `given` is accepted and comes back exactly as `filled`. */
export function itFillsInDefaults(
  model: ModelSpec,
  given: Settings,
  filled: Settings,
  title = 'fills in the defaults',
): void {
  it(title, () => assert.deepEqual(acceptSettings(model, given).settings, filled));
}

/**
 * Registers a test that every mode's schema converts to a JSON Schema of its input; `modes`, when
 * given, is how many modes the model must have.
 */
export function itPublishesJsonSchemas(model: ModelSpec, modes?: number): void {
  it('publishes a JSON schema for every mode', () => {
    if (modes !== undefined) assert.equal(model.modes.length, modes);
    for (const mode of model.modes) {
      assert.doesNotThrow(() => z.toJSONSchema(mode.schema, { io: 'input' }), mode.name);
    }
  });
}

/** An input file of `field` at position 0; `durationSeconds` only when given. */
export function inputFile(
  field: string,
  file: { url: string; format: MediaFormat; sizeBytes: number; durationSeconds?: number | undefined },
): InputFile {
  const { durationSeconds, ...rest } = file;
  return { field, position: 0, ...rest, ...(durationSeconds === undefined ? {} : { durationSeconds }) };
}

/** The helpers above bound to one model, for a test file about that model. */
export interface ModelCases {
  describe(title: string, cases: readonly Case[], more?: () => void): void;
  accept(settings: Settings): { mode: ModeSpec; settings: Settings };
  itFillsInDefaults(given: Settings, filled: Settings, title?: string): void;
  itPublishesJsonSchemas(modes?: number): void;
}

/** `settingsCases(image).describe('image settings', cases)` and so on. */
export function settingsCases(model: ModelSpec): ModelCases {
  return {
    describe: (title, cases, more) => describeSettingsCases(title, model, cases, more),
    accept: (settings) => acceptSettings(model, settings),
    itFillsInDefaults: (given, filled, title) => itFillsInDefaults(model, given, filled, title),
    itPublishesJsonSchemas: (modes) => itPublishesJsonSchemas(model, modes),
  };
}
