/**
 * The ModelSpec port: everything the service knows about a model is declared by one module of
 * `src/catalog/` that returns a `ModelSpec`. The core (tasks, pricing, worker, simulator) reads these
 * declarations and never special-cases a model key.
 *
 * Glossary: a *model* is addressed by its key (`model-3d`); a *mode* is one of its ways of working,
 * chosen by the model's mode selector field (`settings.task_type`, `settings.mode`) or the single
 * mode `default`; *settings* are the caller's parameters of a mode; a *plan* is what the generator
 * must produce for accepted settings.
 */
import type { z } from 'zod';
import type { LibrarySegment } from '../libraries/index.ts';
import type { ModeExample } from './example.ts';
import type { PriceRule } from './price-rule.ts';

export type ModelKind = '3d' | 'video' | 'audio' | 'speech' | 'image';
export type ArtifactKind = 'image' | 'document' | 'video' | 'audio';

/** Media formats a URL setting can accept, recognised by content (CONTRACT §6). */
export type MediaFormat =
  | 'jpeg'
  | 'png'
  | 'webp'
  | 'mp3'
  | 'wav'
  | 'ogg'
  | 'm4a'
  | 'flac'
  | 'aac'
  | 'mp4'
  | 'mov';

/** Facts about one file named by a URL setting, probed before pricing and rule checks. */
export interface InputFile {
  /** Setting that named the file, for example `ref_video_urls`. */
  field: string;
  /** Position of the URL inside its list setting (0-based). */
  position: number;
  url: string;
  format: MediaFormat;
  sizeBytes: number;
  /** Length of audio and video (seconds). */
  durationSeconds?: number;
  /** Picture or video frame size (pixels). */
  width?: number;
  height?: number;
}

/** What pricing and planning know besides the settings: the probed input files and library records. */
export interface ModeInputs {
  files: readonly InputFile[];
  /** Public data of the library records the settings name (`references`), by record id. */
  records?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/** Per-field rules of a URL setting, enforced once the file has been probed (CONTRACT §6). */
export interface InputRule {
  formats: readonly MediaFormat[];
  /** Largest accepted file (bytes). */
  maxBytes: number;
  /** Bounds of each file's length (seconds), audio and video only. */
  minSeconds?: number;
  maxSeconds?: number;
  /** Bound on the summed length of all files of the field (seconds). */
  maxTotalSeconds?: number;
  /**
   * The length enters the price or the rules of other settings: a file whose length cannot be read is
   * refused, as it is where a bound is set.
   */
  lengthNeeded?: boolean;
}

/** A rule broken by settings or inputs; messages in both languages of the service. */
export interface Violation {
  /** Path of the offending setting, for example `face_limit` or `shots.1.duration`. */
  field: string;
  en: string;
  ru: string;
}

/** Library items a task refers to; checked by the core before any hold (CONTRACT §7). */
export interface LibraryRef {
  /** Library path segment at the model that owns it, for example `personas`. */
  library: LibrarySegment;
  /** Model key that owns the library (`music`, `video-elements`, ...). */
  model: string;
  id: string;
  field: string;
}

interface OutputBase {
  /** Name of the file as the model chooses it (Content-Disposition of the download). */
  filename: string;
  /**
   * A run may end without it (the reference's "0 or 1", a 3D preview); every other output's kind must come
   * back at least once, or the run failed (`filesForPlan`).
   */
  optional?: true;
  /** May be empty. */
  caption: string;
  /** Text the simulator derives its drawing or tune from, so different settings give different files. */
  seed: string;
}

export interface MeshOutput extends OutputBase {
  kind: 'document';
  format: 'glb' | 'fbx';
  /** Upper bound on the number of triangles (faces). */
  faceLimit: number;
  textured: boolean;
  pbr: boolean;
  /** Mesh split into separate named parts. */
  parts: boolean;
}

export interface ImageOutput extends OutputBase {
  kind: 'image';
  format: 'png' | 'svg';
  width: number;
  height: number;
  /** `mesh`: a preview of the 3D mesh planned from the same seed, instead of a free picture. */
  subject?: 'mesh';
}

export interface VideoOutput extends OutputBase {
  kind: 'video';
  format: 'mp4';
  width: number;
  height: number;
  durationSeconds: number;
}

export interface AudioOutput extends OutputBase {
  kind: 'audio';
  format: 'mp3';
  durationSeconds: number;
  /** Tempo in beats per minute, when the settings fix one. */
  tempoBpm?: number;
  /** Musical key such as `C#m`, when the settings fix one. */
  musicalKey?: string;
  /** End flows into the beginning. */
  loop?: boolean;
  /** Voice-like (speech) rather than music. */
  speech?: boolean;
}

export type OutputPlan = MeshOutput | ImageOutput | VideoOutput | AudioOutput;

/** What a generator must produce for accepted settings. */
export interface GenerationPlan {
  outputs: OutputPlan[];
  /** result.caption; may be empty. */
  caption: string;
  /** result.texts (title and lyrics for music); empty otherwise. */
  texts: string[];
  /** Typical generation time before the simulator's SIM_SPEED scaling (seconds). */
  workSeconds: number;
}

/**
 * Price rates of one model: a flat map of named integer amounts in kopecks, kept as operator data in
 * `src/catalog/prices/<model>.json`.
 */
export type PriceRates = Readonly<Record<string, number>>;

/**
 * One mode of a model. Methods (not function properties) so a mode typed on its own schema can sit in
 * a `ModeSpec[]` list.
 */
export interface ModeSpec<S extends z.ZodType<Record<string, unknown>> = z.ZodType<Record<string, unknown>>> {
  /** Value of the mode selector (`text_to_model`), or `default` for single-mode models. */
  name: string;
  /**
   * Settings schema of the mode: a strict object (unknown keys are `unknown_setting`) with defaults,
   * the mode selector as a literal, and cross-field rules in `superRefine` that add issues through
   * `addRule` (messages in English and Russian).
   */
  schema: S;
  /** Rules per URL setting, keyed by setting name. */
  inputRules?: Readonly<Record<string, InputRule>>;
  /** Rules that need the probed files (lengths, positions). Pure. */
  checkInputs?(settings: z.output<S>, inputs: ModeInputs): Violation[];
  /** Library items named by the settings. */
  references?(settings: z.output<S>): LibraryRef[];
  /** Price of the run in kopecks. Pure: the same answer for /v1/price and the hold (CONTRACT §5). */
  price(settings: z.output<S>, inputs: ModeInputs, rates: PriceRates): number;
  /** How `price()` computes the amount: one Markdown sentence naming the rates (docs/models.md). */
  readonly priceDescription: string;
  /** Every rate of the model's price table that `price()` may read. */
  readonly priceRates: readonly string[];
  /** What the generator must produce. Pure. */
  plan(settings: z.output<S>, inputs: ModeInputs): GenerationPlan;
  /** An example run (docs/models.md, catalog tests). */
  readonly example: ModeExample;
}

/** A mode as its module declares it: the price is a rule, from which `defineMode` derives the rest. */
export type ModeDefinition<S extends z.ZodType<Record<string, unknown>>> = Omit<
  ModeSpec<S>,
  'price' | 'priceDescription' | 'priceRates'
> & { price: PriceRule<z.output<S>> };

export interface ModelSpec {
  /** Model key as GET /v1/models shows it (CONTRACT §2). */
  key: string;
  kind: ModelKind;
  /** Name for people. */
  name: string;
  /** Settings field that selects the mode, or null for a single-mode model (mode `default`). */
  modeField: string | null;
  modes: readonly ModeSpec[];
}

/**
 * Types a mode against its own schema and erases it for the catalog list; its price rule gives the
 * mode's `price()`, `priceDescription` and `priceRates` together.
 */
export function defineMode<S extends z.ZodType<Record<string, unknown>>>(
  definition: ModeDefinition<S>,
): ModeSpec {
  const { price: rule, ...mode } = definition;
  const spec: ModeSpec<S> = {
    ...mode,
    price: (settings, inputs, rates) => rule.price(settings, inputs, rates),
    priceDescription: rule.description,
    priceRates: rule.rates,
  };
  return spec as unknown as ModeSpec;
}

/** Reads a rate, failing loudly when the price table lacks it (a data error, caught by the price tests). */
export function rate(rates: PriceRates, name: string): number {
  const value = rates[name];
  if (value === undefined) throw new Error(`price table has no rate "${name}"`);
  return value;
}

/**
 * A number with at most two decimals (weights, seconds). zod's `multipleOf` takes anything within 4 ε of
 * a multiple, so 1e-300 and 5e-324 passed as multiples of 0.01; a number `toFixed(2)` writes back as
 * itself has two decimals at most (0.29, 0.57 pass; 0.123 and 1e-300 fail). `multipleOf` stays, for the
 * JSON Schema and the same words; when it refuses, the check after it is skipped (`abort`), so 0.655 is
 * told once, not twice.
 */
export function twoDecimals(number: z.ZodNumber): z.ZodNumber {
  return number.multipleOf(0.01, { abort: true }).refine((value) => Number(value.toFixed(2)) === value, {
    message: 'Invalid number: must be a multiple of 0.01',
    params: { ru: 'Неверное число: должно быть кратным 0,01' },
  });
}

/** Adds a cross-field rule violation inside a schema's superRefine. */
export function addRule(
  ctx: z.RefinementCtx,
  path: string | readonly (string | number)[],
  en: string,
  ru: string,
): void {
  ctx.addIssue({
    code: 'custom',
    path: typeof path === 'string' ? [path] : [...path],
    message: en,
    params: { ru },
  });
}
