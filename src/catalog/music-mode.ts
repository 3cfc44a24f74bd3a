/**
 * Builder of a mode of the `music` model. Every music mode starts with `settings.mode` and
 * `settings.model`, takes its source tracks as one-URL lists, and is priced by its own rate plus the
 * audio input beyond the included seconds (CONTRACT §5). A mode states its name once; the selector, the
 * track settings, the price rule and the example's mode are derived from it.
 */
import { z } from 'zod';
import { type ExampleFile, exampleRun } from './example.ts';
import { audioUrl } from './fields.ts';
import {
  defineMode,
  type GenerationPlan,
  type InputRule,
  type LibraryRef,
  type ModeInputs,
  type ModeSpec,
  type Violation,
} from './model-spec.ts';
import { musicModel, musicPriceRule } from './music-common.ts';

/** The settings every music mode starts with: the selector, the model version and the tracks. */
export type MusicBase<K extends string> = {
  mode: z.ZodLiteral<string>;
  model: typeof musicModel;
} & { [P in K]: typeof audioUrl };

/** `mode`, `model` and one URL list per track, in the order the settings are published. */
export function musicBase<K extends string>(
  name: string,
  tracks: Readonly<Record<K, InputRule>>,
): MusicBase<K> {
  const urls = Object.fromEntries(Object.keys(tracks).map((field) => [field, audioUrl]));
  return { mode: z.literal(name), model: musicModel, ...urls } as MusicBase<K>;
}

/** An example run of a music mode, without its `mode`: settings and the tracks' files. */
export interface MusicExample {
  settings: Readonly<Record<string, unknown>>;
  files?: Readonly<Record<string, ExampleFile>>;
}

/** Accepted settings of a music mode with tracks `K` and further settings `T`. */
export type MusicSettings<K extends string, T extends z.core.$ZodLooseShape> = z.output<
  z.ZodObject<MusicBase<K> & T, z.core.$strict>
>;

export interface MusicModeDefinition<K extends string, T extends z.core.$ZodLooseShape> {
  /** Value of `settings.mode`, and the name of the mode's base rate. */
  name: string;
  /** URL settings of the source tracks with their input rules, in order (none: no audio input). */
  tracks?: Readonly<Record<K, InputRule>>;
  /** Input seconds the base rate covers (Default: 90). */
  includedSeconds?: number;
  /** Settings after `mode`, `model` and the tracks. */
  fields: T;
  /** Cross-field rules, adding issues with `addRule`. */
  refine?(s: MusicSettings<K, T>, ctx: z.RefinementCtx): void;
  checkInputs?(s: MusicSettings<K, T>, inputs: ModeInputs): Violation[];
  references?(s: MusicSettings<K, T>): LibraryRef[];
  plan(s: MusicSettings<K, T>, inputs: ModeInputs): GenerationPlan;
  example: MusicExample;
}

/** The example run of mode `name`. */
export function musicExample(name: string, example: MusicExample): ReturnType<typeof exampleRun> {
  return exampleRun({ mode: name, ...example.settings }, example.files);
}

/** A mode of the `music` model whose settings are one strict object. */
export function musicMode<K extends string = never, T extends z.core.$ZodLooseShape = z.core.$ZodLooseShape>(
  definition: MusicModeDefinition<K, T>,
): ModeSpec {
  const { name, tracks = {} as Record<K, InputRule>, fields, refine } = definition;
  const object = z.strictObject({ ...musicBase(name, tracks), ...fields });
  const schema =
    refine === undefined ? object : object.superRefine((s, ctx) => refine(s as MusicSettings<K, T>, ctx));
  const audioInput = Object.keys(tracks).length > 0;
  return defineMode({
    name,
    schema: schema as unknown as z.ZodType<MusicSettings<K, T>>,
    ...(audioInput ? { inputRules: tracks } : {}),
    ...(definition.checkInputs ? { checkInputs: definition.checkInputs } : {}),
    ...(definition.references ? { references: definition.references } : {}),
    price: musicPriceRule(name, {
      audioInput,
      ...(definition.includedSeconds === undefined ? {} : { includedSeconds: definition.includedSeconds }),
    }),
    plan: definition.plan,
    example: musicExample(name, definition.example),
  });
}
