/**
 * Builder of the music modes that write a song in simple or advanced mode (reference "Simple and
 * advanced mode"): generate, cover_upload and mashup. A mode declares only what sets it apart (its
 * tracks, its advanced-only settings, whether it takes a singer); the two branches, their rules, the
 * price and the plan are built here the same way for every such mode.
 */
import { z } from 'zod';
import { fileSeconds, refusedSetting, text } from './fields.ts';
import { addRule, defineMode, type GenerationPlan, type InputRule, type ModeSpec } from './model-spec.ts';
import {
  followingSeconds,
  instrumental,
  madeUpLyrics,
  madeUpTitle,
  musicPriceRule,
  onePersonaOrVoice,
  personaOrVoice,
  requireLyrics,
  singerRefs,
  songDuration,
  twoTracksPlan,
  WEIGHT_DEFAULT,
  weight,
  weights,
} from './music-common.ts';
import { type MusicExample, musicBase, musicExample } from './music-mode.ts';

/** Settings as a refinement sees them (all music schemas are objects). */
type Settings = Readonly<Record<string, unknown>>;

/**
 * The two branches of a song. The schema is a discriminated union on `customMode`, so defaults are
 * filled in only where they apply (advanced-only settings stay unset in simple mode). Every field of
 * the mode is known to both branches, so a setting of the other branch is `invalid_settings` with a
 * clear message, not `unknown_setting`.
 */
export const simpleSong = {
  customMode: z.literal(false).default(false),
  songDescription: text(1, 3000),
  title: refusedSetting(text(1, 80).optional()),
  style: refusedSetting(text(1, 1000).optional()),
  prompt: refusedSetting(text(1, 5000).optional()),
};
export const advancedSong = {
  customMode: z.literal(true),
  songDescription: refusedSetting(text(1, 3000).optional()),
  title: text(1, 80),
  style: text(1, 1000),
  prompt: text(1, 5000).optional(),
};

/** Reference: "styleWeight and weirdnessConstraint, duration work in advanced mode only". */
export const advancedKnobs = {
  duration: songDuration.default(20),
  styleWeight: weight.default(WEIGHT_DEFAULT),
  weirdnessConstraint: weight.default(WEIGHT_DEFAULT),
};

/**
 * Advanced-only settings as the simple branch knows them: the same fields without their defaults, so
 * they stay unset there and can be refused clearly (each a copy of its own, marked refusedSetting).
 */
export function withoutDefaults(shape: Readonly<Record<string, z.ZodType>>): Record<string, z.ZodType> {
  return Object.fromEntries(
    Object.entries(shape).map(([name, field]) => [
      name,
      refusedSetting(
        field instanceof z.ZodDefault ? (field.unwrap() as z.ZodType).optional() : field.optional(),
      ),
    ]),
  );
}

export interface SongRuleOptions {
  /** Settings refused in simple mode besides title, style and prompt. */
  advancedOnly: readonly string[];
  /** Advanced mode needs prompt unless instrumental (false for mashup: "lyrics are optional"). */
  lyricsRequired: boolean;
}

/** Reference "Simple and advanced mode": what each branch refuses and requires. */
export function songModeRules(s: Settings, ctx: z.RefinementCtx, options: SongRuleOptions): void {
  if (s['customMode'] === true) {
    if (s['songDescription'] !== undefined) {
      addRule(
        ctx,
        'songDescription',
        'songDescription is used only in simple mode (customMode false); in advanced mode use title, style and prompt',
        'songDescription задаётся только в простом режиме (customMode false); в расширенном используйте title, style и prompt',
      );
    }
    if (options.lyricsRequired) requireLyrics(s, ctx);
    return;
  }
  for (const field of ['title', 'style', 'prompt', ...options.advancedOnly]) {
    if (s[field] !== undefined) {
      addRule(
        ctx,
        field,
        `${field} is set only in advanced mode (customMode true); simple mode uses songDescription`,
        `${field} задаётся только в расширенном режиме (customMode true); простой режим использует songDescription`,
      );
    }
  }
}

export interface Song {
  customMode: boolean;
  songDescription?: string | undefined;
  title?: string | undefined;
  prompt?: string | undefined;
  instrumental: boolean;
  duration?: number | undefined;
  persona?: string | undefined;
  voice?: string | undefined;
}

/** Title, lyrics and length of a simple/advanced song; `sourceSeconds` is the track a simple song follows. */
export function songPlan(s: Song & Settings, sourceSeconds?: number): GenerationPlan {
  const title = s.customMode ? (s.title ?? 'Untitled') : madeUpTitle(s.songDescription ?? '');
  const lyrics = s.customMode ? s.prompt : madeUpLyrics(s.songDescription ?? '', title);
  const durationSeconds = s.customMode ? (s.duration ?? 20) : followingSeconds(sourceSeconds);
  return twoTracksPlan({ settings: s, title, lyrics: s.instrumental ? undefined : lyrics, durationSeconds });
}

/** What sets one song mode apart. */
export interface SongModeOptions {
  /** Value of `settings.mode`. */
  name: string;
  /** URL settings of the source tracks with their input rules, in order; the first is the one a simple song follows. */
  tracks?: Readonly<Record<string, InputRule>>;
  /** Settings that only advanced mode takes besides duration and the weights, with their advanced defaults. */
  advancedOnly?: Readonly<Record<string, z.ZodType>>;
  /** Advanced mode needs lyrics unless instrumental. */
  lyricsRequired: boolean;
  /** Takes a singing persona or voice of this model's libraries. */
  singer: boolean;
  example: MusicExample;
}

/** A simple/advanced song mode of the `music` model. */
export function songMode(options: SongModeOptions): ModeSpec {
  const { name, tracks = {}, advancedOnly = {}, singer } = options;
  const branch = (song: typeof simpleSong | typeof advancedSong, extras: Record<string, z.ZodType>) =>
    z.strictObject({
      ...musicBase(name, tracks),
      ...song,
      instrumental,
      ...extras,
      audioWeight: weights.audioWeight,
      ...(singer ? personaOrVoice : {}),
    });
  const advanced = { ...advancedOnly, ...advancedKnobs };
  const schema = z
    .discriminatedUnion('customMode', [
      branch(simpleSong, withoutDefaults(advanced)),
      branch(advancedSong, advanced),
    ])
    .superRefine((s, ctx) => {
      // Knobs first, then the mode's own: the order violations are reported in.
      const refused = [...Object.keys(advancedKnobs), ...Object.keys(advancedOnly)];
      songModeRules(s, ctx, { advancedOnly: refused, lyricsRequired: options.lyricsRequired });
      if (singer) onePersonaOrVoice(s, ctx);
    }) as unknown as z.ZodType<Song & Settings>;
  const source = Object.keys(tracks)[0];
  return defineMode({
    name,
    schema,
    ...(source === undefined ? {} : { inputRules: tracks }),
    ...(singer ? { references: (s: Song) => singerRefs(s) } : {}),
    price: musicPriceRule(name, { audioInput: source !== undefined }),
    plan: (s, inputs) => songPlan(s, source === undefined ? undefined : fileSeconds(inputs, source)),
    example: musicExample(name, options.example),
  });
}
