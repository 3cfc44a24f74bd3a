/**
 * Pieces shared by the modes of the `music` model (and the made-up titles of `music-styles`): settings
 * fields, rules, the input-length price and the two-track output plan. Song modes with simple and
 * advanced settings are built by `song-mode.ts`. Every rule cites the API reference ("reference") or
 * `CONTRACT.md` ("CONTRACT").
 */
import { z } from 'zod';
import { AUDIO_INPUT, libraryId } from './fields.ts';
import type { AudioOutput, GenerationPlan, InputRule, LibraryRef, ModeInputs } from './model-spec.ts';
import { addRule, twoDecimals } from './model-spec.ts';
import { baseWithSurcharges, fixedRate, type PriceRule, type Surcharge } from './price-rule.ts';

/** Settings as a refinement sees them (all music schemas are objects). */
type Settings = Readonly<Record<string, unknown>>;

// ---------------------------------------------------------------------------------------------
// Fields
// ---------------------------------------------------------------------------------------------

/** Reference: "Every mode has settings.model (string: V6, V6_MINI, V6_WILD; default V6)". */
export const MUSIC_MODELS = ['V6', 'V6_MINI', 'V6_WILD'] as const;
export const musicModel = z.enum(MUSIC_MODELS).default('V6');

/**
 * Reference: weights are numbers 0 to 1 with at most two decimals, default 0.65 (`twoDecimals`, published
 * as JSON Schema `multipleOf`).
 */
export const weight = twoDecimals(z.number().min(0).max(1));
export const WEIGHT_DEFAULT = 0.65;
export const weights = {
  styleWeight: weight.default(WEIGHT_DEFAULT),
  weirdnessConstraint: weight.default(WEIGHT_DEFAULT),
  audioWeight: weight.default(WEIGHT_DEFAULT),
};

/**
 * A source track of a music mode. Its length is charged beyond the included seconds, sets the length of
 * the result and bounds continueAt and the replaced section, so a file whose length cannot be read is
 * refused (`lengthNeeded`) rather than priced and checked as if it were short.
 */
export const MUSIC_AUDIO_INPUT: InputRule = { ...AUDIO_INPUT, lengthNeeded: true };

/** Reference: "Cover and continue tracks are at most 8 minutes long"; the core enforces `maxSeconds`. */
export const LONG_AUDIO_INPUT: InputRule = { ...MUSIC_AUDIO_INPUT, maxSeconds: 480 };

export const instrumental = z.boolean().default(false);
/** Reference (generate): "vocalGender: m or f, default m, advanced only". */
export const vocalGender = z.enum(['m', 'f']);
/** Reference (add_vocals and the modes that copy it): "m, f; default empty; only raises the chance". */
export const vocalHint = z.enum(['', 'm', 'f']).default('');
/** Reference: "duration integer 10 to 360, default 20". */
export const SHORTEST_SONG_SECONDS = 10;
export const songDuration = z.int().min(SHORTEST_SONG_SECONDS).max(360);

/** Singing persona or voice (reference: "persona or voice (optional ids, not together)"). */
export const personaOrVoice = {
  persona: libraryId.optional(),
  voice: libraryId.optional(),
};

// ---------------------------------------------------------------------------------------------
// Cross-field rules (called from superRefine)
// ---------------------------------------------------------------------------------------------

/** Reference: "prompt (lyrics) is required unless instrumental is true". */
export function requireLyrics(s: Settings, ctx: z.RefinementCtx): void {
  if (s['instrumental'] !== true && s['prompt'] === undefined) {
    addRule(
      ctx,
      'prompt',
      'prompt (lyrics) is required unless instrumental is true',
      'prompt (текст песни) обязателен, если instrumental не true',
    );
  }
}

/** Reference: "Voice and persona are not sent together". */
export function onePersonaOrVoice(s: Settings, ctx: z.RefinementCtx): void {
  if (s['persona'] !== undefined && s['voice'] !== undefined) {
    addRule(
      ctx,
      'voice',
      'persona and voice cannot be used together; choose one',
      'persona и voice нельзя использовать вместе; выберите одно',
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Inputs and price
// ---------------------------------------------------------------------------------------------

/** URL settings of the music modes whose length is charged. */
const AUDIO_FIELDS: readonly string[] = ['audio', 'audio2'];
/** Input length charged per `audio_input_per_30s` beyond the included seconds. */
const INPUT_BLOCK_SECONDS = 30;

/**
 * Total length of the audio inputs (audio, audio2) for the price. Each file is rounded to the nearest
 * whole second, so encoder padding (a "90 s" mp3 probed as 90.03 s) does not start another 30 s. A file
 * whose length cannot be read is refused before the price (`MUSIC_AUDIO_INPUT`).
 */
export function audioInputTotal(inputs: ModeInputs): number {
  return inputs.files
    .filter((f) => AUDIO_FIELDS.includes(f.field))
    .reduce((sum, f) => sum + Math.round(f.durationSeconds ?? 0), 0);
}

/** Input seconds the base price covers (CONTRACT §5): 90 s in total, replace_upload 60 s. */
export const INCLUDED_INPUT_SECONDS = 90;
export const REPLACE_INCLUDED_INPUT_SECONDS = 60;

/** `audio_input_per_30s` for each started 30 s of input beyond `includedSeconds`. */
function inputSurcharge(includedSeconds: number): Surcharge<unknown> {
  return {
    rate: 'audio_input_per_30s',
    when:
      `for each started ${INPUT_BLOCK_SECONDS} s of audio input (${AUDIO_FIELDS.join(' and ')} together, ` +
      `each file rounded to the nearest second) beyond ${includedSeconds} s`,
    times: (_s, inputs) => {
      const over = audioInputTotal(inputs) - includedSeconds;
      return over > 0 ? Math.ceil(over / INPUT_BLOCK_SECONDS) : 0;
    },
  };
}

/**
 * Price rule of a music mode (CONTRACT §5): the mode's base rate (`rates[mode]`, the same for V6,
 * V6_MINI and V6_WILD), plus, when the mode takes audio input, `audio_input_per_30s` for each started
 * 30 s of input beyond the included seconds.
 */
export function musicPriceRule(
  mode: string,
  options: { audioInput: boolean; includedSeconds?: number },
): PriceRule<unknown> {
  const included = options.includedSeconds ?? INCLUDED_INPUT_SECONDS;
  return baseWithSurcharges({
    base: fixedRate(mode),
    surcharges: options.audioInput ? [inputSurcharge(included)] : [],
    notes: [
      ...(options.audioInput ? [] : ['this mode takes no audio input']),
      `the same for ${MUSIC_MODELS.join(', ')}`,
    ],
  });
}

// ---------------------------------------------------------------------------------------------
// Plan
// ---------------------------------------------------------------------------------------------

/** Typical lengths where the settings fix none (seconds). */
export const TYPICAL_SONG_SECONDS = 120;
export const TYPICAL_SOUND_SECONDS = 10;

/**
 * Length of a song that follows its source track (rounded: encoder padding adds no second), a typical
 * song's when the track's is unknown. The reference sets no least length of a source here, so a 0.2 s
 * track is taken; the song made from it is never shorter than the shortest song the model makes.
 */
export function followingSeconds(sourceSeconds: number | undefined): number {
  return Math.max(SHORTEST_SONG_SECONDS, Math.round(sourceSeconds ?? TYPICAL_SONG_SECONDS));
}

/** Reference: "A song takes 5 to 10 minutes, a sound about a minute". */
export const SONG_WORK_SECONDS = 450;
export const SOUND_WORK_SECONDS = 60;

/**
 * The first `max` characters (code points) of a text: a cut by UTF-16 units could split an emoji's
 * surrogate pair and leave a lone surrogate in texts, captions and file names.
 */
export function firstChars(text: string, max: number): string {
  return Array.from(text).slice(0, max).join('');
}

/**
 * A title made up from a description (simple mode, sounds): its first words, at most 80 characters,
 * ending on a word (a detached "!" or "..." or the cut must not leave a space at the end).
 */
export function madeUpTitle(description: string): string {
  const words = description.trim().split(/\s+/).slice(0, 6).join(' ');
  const title = firstChars(words.replace(/[\s.,;:!?]+$/, ''), 80).trimEnd();
  return title === '' ? 'Untitled' : title.charAt(0).toUpperCase() + title.slice(1);
}

/** Lyrics made up from a simple-mode description (the real model writes them; CONTRACT §2 wants them). */
export function madeUpLyrics(description: string, title: string): string {
  return `[Verse]\n${description.trim()}\n\n[Chorus]\n${title}`;
}

/** File name stem: letters and digits of any script, dashes between words. */
export function slug(title: string): string {
  const words = title
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '');
  const stem = firstChars(words, 60).replace(/-+$/, '');
  return stem === '' ? 'track' : stem;
}

/**
 * Reference: the caption names "model and its settings": the mode and version, then what shapes the
 * song (advanced or simple, instrumental, a persona or singing voice) and its length.
 */
function musicCaption(settings: Settings, durationSeconds: number, isSound: boolean): string {
  const shape = [
    settings['customMode'] === true ? 'advanced' : settings['customMode'] === false ? 'simple' : '',
    settings['instrumental'] === true ? 'instrumental' : '',
    settings['persona'] !== undefined ? 'persona' : '',
    settings['voice'] !== undefined ? 'own singing voice' : '',
    isSound && settings['soundLoop'] === true ? 'loop' : '',
  ].filter(Boolean);
  const length = `${Math.round(durationSeconds)} s`;
  return ['music', String(settings['mode']), `model ${String(settings['model'])}`, ...shape, length].join(
    ' · ',
  );
}

export interface TwoTracks {
  /** Accepted settings; their JSON goes into the seeds so different settings give different files. */
  settings: Settings;
  title: string;
  /** Lyrics of the song; undefined for an instrumental or when they are unknown. */
  lyrics: string | undefined;
  durationSeconds: number;
  /** Sounds: no texts (CONTRACT §2), about a minute of work, tempo, key and loop on the files. */
  sound?: Pick<AudioOutput, 'tempoBpm' | 'musicalKey' | 'loop'>;
}

/**
 * Reference: "Output of every mode: two artifacts of kind audio (mp3)". CONTRACT §2: texts hold the title
 * and the lyrics of each song, an instrumental only its title, sounds none.
 */
export function twoTracksPlan(track: TwoTracks): GenerationPlan {
  const { settings, title, lyrics, sound } = track;
  const caption = musicCaption(settings, track.durationSeconds, sound !== undefined);
  const outputs: AudioOutput[] = ['v1', 'v2'].map((version) => ({
    kind: 'audio',
    format: 'mp3',
    filename: `${slug(title)}-${version}.mp3`,
    caption: `${title} (${version})`,
    seed: `${title} ${version} ${JSON.stringify(settings)}`,
    durationSeconds: track.durationSeconds,
    ...sound,
  }));
  const song = lyrics === undefined ? [title] : [title, lyrics];
  return {
    outputs,
    caption,
    texts: sound === undefined ? [...song, ...song] : [],
    workSeconds: sound === undefined ? SONG_WORK_SECONDS : SOUND_WORK_SECONDS,
  };
}

/** Persona and singing voice live in the libraries of this model (reference "Singing personas"). */
export function singerRefs(s: { persona?: string | undefined; voice?: string | undefined }): LibraryRef[] {
  return [
    ...(s.persona === undefined
      ? []
      : [{ library: 'personas' as const, model: 'music', id: s.persona, field: 'persona' }]),
    ...(s.voice === undefined
      ? []
      : [{ library: 'voices' as const, model: 'music', id: s.voice, field: 'voice' }]),
  ];
}
