/**
 * Settings fields and input helpers that models of different families share: URL lists, bounded
 * texts, audio inputs, library ids. A family's own pieces stay in its `*-common.ts`.
 */
import { z } from 'zod';
import type { InputRule, ModeInputs } from './model-spec.ts';

export const MB = 1024 * 1024;

/** A string of `min` to `max` characters. */
export function text(min: number, max: number): z.ZodString {
  return z.string().min(min).max(max);
}

/**
 * A URL list setting (reference: "URL fields are lists of strings in uri form"). Only http(s) is
 * accepted; the host is not restricted here because the service's own upload links may sit on a
 * loopback address, and downloads are guarded against private addresses when probed (CONTRACT §6).
 */
export function urlList(max: number): z.ZodArray<z.ZodURL> {
  return z.array(z.url({ protocol: /^https?$/ })).max(max);
}

/** Reference: "All url fields (audio, audio2) are lists of uri with at most 1 item"; all are required. */
export const audioUrl = z
  .array(z.url({ protocol: /^https?$/ }))
  .min(1)
  .max(1);

/** Reference: audio inputs are mp3, wav, ogg, m4a, flac or aac, up to 20 MB (taken as MiB). */
export const AUDIO_INPUT: InputRule = {
  formats: ['mp3', 'wav', 'ogg', 'm4a', 'flac', 'aac'],
  maxBytes: 20 * MB,
};

/** Id of a library item (persona, voice, style); existence is checked by the core (CONTRACT §7). */
export const libraryId = z.string().min(1);

/** Settings a mode knows only to refuse them clearly whenever they are set (refusedSetting). */
const refusedSettings = new WeakSet<z.ZodType>();

/**
 * Marks a setting its mode knows only to refuse whenever it is set (title in simple song mode, audio of
 * the older video versions…): it stays a known setting (a clear `invalid_settings`, not
 * `unknown_setting`), and the published settings schema says it is never valid (`not: {}`), so a body
 * built from the schema is never refused for it.
 */
export function refusedSetting<T extends z.ZodType>(field: T): T {
  refusedSettings.add(field);
  return field;
}

/** True for a setting marked with refusedSetting. */
export function isRefusedSetting(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && refusedSettings.has(schema as z.ZodType);
}

/**
 * Where a published schema says that a number has at most two decimals: `x-multipleOf: 0.01` instead of
 * `multipleOf: 0.01`, which JSON Schema validators check by floating-point division, so Ajv and Python's
 * jsonschema refuse 0.07 or 0.29, values the service takes. The service checks the decimals itself
 * (`twoDecimals`); the dashboard and the generated docs read the step from either keyword (`stepOf`).
 */
export const DECIMAL_STEP = 'x-multipleOf';

/** The step of a number's schema: `multipleOf`, or `x-multipleOf` (DECIMAL_STEP). */
export function stepOf(schema: { multipleOf?: unknown; [DECIMAL_STEP]?: unknown }): number | undefined {
  const step = schema.multipleOf ?? schema[DECIMAL_STEP];
  return typeof step === 'number' ? step : undefined;
}

/** Moves every fractional `multipleOf` of a JSON Schema (in place, at any depth) to DECIMAL_STEP. */
export function portableSteps<T>(node: T): T {
  if (Array.isArray(node)) for (const item of node) portableSteps(item);
  else if (typeof node === 'object' && node !== null) {
    const record = node as Record<string, unknown>;
    const step = record.multipleOf;
    if (typeof step === 'number' && !Number.isInteger(step)) {
      delete record.multipleOf;
      record[DECIMAL_STEP] = step;
    }
    for (const value of Object.values(record)) portableSteps(value);
  }
  return node;
}

/**
 * The JSON Schema (draft 2020-12) of a mode's settings as callers send them, the one GET /v1/models
 * and the OpenAPI document publish: a refused setting is `not: {}`, a step of two decimals DECIMAL_STEP.
 */
export function settingsJsonSchema(schema: z.ZodType): Record<string, unknown> {
  return portableSteps(
    z.toJSONSchema(schema, {
      io: 'input',
      unrepresentable: 'any',
      override: ({ zodSchema, jsonSchema }) => {
        if (!isRefusedSetting(zodSchema)) return;
        // Known to the mode only to be refused: never valid there.
        for (const key of Object.keys(jsonSchema)) delete (jsonSchema as Record<string, unknown>)[key];
        (jsonSchema as Record<string, unknown>)['not'] = {};
      },
    }) as Record<string, unknown>,
  );
}

/** Length of the first file named by `field`, when it was probed (seconds). */
export function fileSeconds(inputs: ModeInputs, field: string): number | undefined {
  return inputs.files.find((f) => f.field === field)?.durationSeconds;
}
