/**
 * `music` (reference: <key_music_a>, "Music generation"): songs, sounds and audio transformations in
 * eight modes chosen by `settings.mode`. Shared fields and rules live in `music-common.ts`; modes
 * are built by `music-mode.ts`, the simple/advanced song modes by `song-mode.ts`.
 *
 * Decisions where the documents are silent:
 * - `defaultParamFlag` (extend) is known to the schema and refused with `invalid_settings` and a message
 *   saying the service sets it, rather than `unknown_setting`: the reference names the field. Its
 *   published schema is `not: {}` (`refusedSetting`), so a body built from the schema never sends it.
 * - Output lengths: the settings' `duration` in advanced mode; otherwise a typical 120 s song, or the
 *   length of the source track where the result follows it (simple cover and mashup, add_vocals,
 *   add_instrumental, replace_upload), at least the shortest song's 10 s (`followingSeconds`); extend = the
 *   kept part (continueAt) plus a 120 s continuation;
 *   sounds 10 s.
 * - add_instrumental has the title only in texts: the lyrics are in the caller's vocals, not in the
 *   settings. A prompt sent with instrumental true is accepted and ignored (no lyrics in texts).
 * - extend's title, style and prompt, when sent, have at least one character; vocalGender there and in
 *   add_instrumental follows add_vocals (m, f or empty, default empty).
 * - "Cover and continue tracks are at most 8 minutes" is declared as `inputRules.audio.maxSeconds` (480),
 *   which the core enforces for every probed file; `checkInputs` holds the rules that relate a file to
 *   other settings (continueAt, the replaced section). Its violations name the setting without the
 *   `settings.` prefix, as `Violation.field` documents.
 */
import { z } from 'zod';
import { ruDecimal } from '../i18n/index.ts';
import { exactSeconds } from '../lib/index.ts';
import { fileSeconds, refusedSetting, text } from './fields.ts';
import type { ModeInputs, ModelSpec, Violation } from './model-spec.ts';
import { addRule, twoDecimals } from './model-spec.ts';
import {
  followingSeconds,
  instrumental,
  LONG_AUDIO_INPUT,
  MUSIC_AUDIO_INPUT,
  madeUpTitle,
  onePersonaOrVoice,
  personaOrVoice,
  REPLACE_INCLUDED_INPUT_SECONDS,
  requireLyrics,
  singerRefs,
  TYPICAL_SOUND_SECONDS,
  twoTracksPlan,
  vocalGender,
  vocalHint,
  weights,
} from './music-common.ts';
import { musicMode } from './music-mode.ts';
import { songMode } from './song-mode.ts';

/** Lyrics of the examples. */
const LYRICS = '[Verse]\nMorning light on the river';

/** Reference: soundKey values; empty means any key. */
export const SOUND_KEYS = [
  ...['C', 'C#', 'D', 'D#', 'E', 'F', 'F#', 'G', 'G#', 'A', 'A#', 'B'].flatMap((k) => [k, `${k}m`]),
] as const;

/** Reference (generate): vocalGender is advanced only, default m. */
const generate = songMode({
  name: 'generate',
  advancedOnly: { vocalGender: vocalGender.default('m') },
  lyricsRequired: true,
  singer: true,
  example: { settings: { songDescription: 'a cheerful song about a ginger cat' } },
});

const sounds = musicMode({
  name: 'sounds',
  fields: {
    soundDescription: text(1, 500),
    soundLoop: z.boolean().default(false),
    soundTempo: z.int().min(1).max(300).optional(),
    soundKey: z.enum(['', ...SOUND_KEYS]).default(''),
  },
  example: { settings: { soundDescription: 'rain on a tin roof' } },
  plan: (s) =>
    twoTracksPlan({
      settings: s,
      title: madeUpTitle(s.soundDescription),
      lyrics: undefined,
      durationSeconds: TYPICAL_SOUND_SECONDS,
      sound: {
        loop: s.soundLoop,
        ...(s.soundTempo === undefined ? {} : { tempoBpm: s.soundTempo }),
        ...(s.soundKey === '' ? {} : { musicalKey: s.soundKey }),
      },
    }),
});

const addVocals = musicMode({
  name: 'add_vocals',
  tracks: { audio: MUSIC_AUDIO_INPUT },
  fields: {
    title: text(1, 80),
    style: text(1, 1000),
    prompt: text(1, 5000),
    negativeTags: text(1, 500),
    vocalGender: vocalHint,
    ...weights,
  },
  example: {
    settings: { title: 'River', style: 'folk', prompt: LYRICS, negativeTags: 'metal' },
    files: { audio: ['mp3', 90] },
  },
  plan: (s, inputs) =>
    twoTracksPlan({
      settings: s,
      title: s.title,
      lyrics: s.prompt,
      durationSeconds: followingSeconds(fileSeconds(inputs, 'audio')),
    }),
});

const addInstrumental = musicMode({
  name: 'add_instrumental',
  tracks: { audio: MUSIC_AUDIO_INPUT },
  fields: {
    title: text(1, 80),
    tags: text(1, 500),
    negativeTags: text(1, 500),
    vocalGender: vocalHint,
    ...weights,
  },
  example: {
    settings: { title: 'River', tags: 'folk guitar', negativeTags: 'metal' },
    files: { audio: ['mp3', 90] },
  },
  plan: (s, inputs) =>
    twoTracksPlan({
      settings: s,
      title: s.title,
      lyrics: undefined,
      durationSeconds: followingSeconds(fileSeconds(inputs, 'audio')),
    }),
});

/** Reference (cover_upload): negativeTags max 500, advanced only; no vocalGender. */
const coverUpload = songMode({
  name: 'cover_upload',
  tracks: { audio: LONG_AUDIO_INPUT },
  advancedOnly: { negativeTags: text(0, 500).optional() },
  lyricsRequired: true,
  singer: true,
  example: { settings: { songDescription: 'a jazz cover' }, files: { audio: ['mp3', 90] } },
});

/** Kept part plus a typical continuation (see the decisions above). */
const CONTINUATION_SECONDS = 120;

const extend = musicMode({
  name: 'extend',
  tracks: { audio: LONG_AUDIO_INPUT },
  fields: {
    continueAt: z.number().min(1).max(480),
    title: text(1, 100).optional(),
    style: text(1, 1000).optional(),
    prompt: text(1, 5000).optional(),
    instrumental,
    negativeTags: text(0, 500).optional(),
    vocalGender: vocalHint,
    ...weights,
    ...personaOrVoice,
    /** Known only to be refused (reference: "The service sets defaultParamFlag itself"). */
    defaultParamFlag: refusedSetting(
      z.unknown().optional().meta({ description: 'Set by the service; must not be sent.' }),
    ),
  },
  refine: (s, ctx) => {
    if (s.defaultParamFlag !== undefined) {
      addRule(
        ctx,
        'defaultParamFlag',
        'defaultParamFlag is set by the service itself and must not be sent',
        'defaultParamFlag задаёт сам сервис, его нельзя передавать',
      );
    }
    requireLyrics(s, ctx);
    onePersonaOrVoice(s, ctx);
  },
  checkInputs: (s, inputs) => {
    const length = fileSeconds(inputs, 'audio');
    if (length === undefined || s.continueAt < length) return [];
    return [
      {
        field: 'continueAt',
        en: `continueAt (${s.continueAt} s) must be before the end of the audio file (${secondsText(length)} s)`,
        ru: `continueAt (${ruDecimal(s.continueAt)} с) должен быть раньше конца аудиофайла (${ruDecimal(secondsText(length))} с)`,
      },
    ];
  },
  references: (s) => singerRefs(s),
  example: { settings: { continueAt: 60, prompt: LYRICS }, files: { audio: ['mp3', 90] } },
  plan: (s) =>
    twoTracksPlan({
      settings: s,
      title: s.title ?? madeUpTitle(s.style ?? 'Extended track'),
      lyrics: s.instrumental ? undefined : s.prompt,
      durationSeconds: Math.round(s.continueAt) + CONTINUATION_SECONDS,
    }),
});

const replaceUpload = musicMode({
  name: 'replace_upload',
  tracks: { audio: MUSIC_AUDIO_INPUT },
  includedSeconds: REPLACE_INCLUDED_INPUT_SECONDS,
  fields: {
    infillStartS: twoDecimals(z.number().min(0)),
    infillEndS: z.number().min(0),
    prompt: text(1, 5000),
    fullLyrics: text(1, 5000),
    tags: text(1, 500),
    title: text(1, 80),
    negativeTags: text(0, 500).optional(),
  },
  refine: (s, ctx) => {
    if (s.infillEndS <= s.infillStartS) {
      addRule(
        ctx,
        'infillEndS',
        'infillEndS must be greater than infillStartS',
        'infillEndS должен быть больше infillStartS',
      );
    } else if (sectionSeconds(s.infillStartS, s.infillEndS) < 10) {
      addRule(
        ctx,
        'infillEndS',
        'the replaced section (infillEndS - infillStartS) must be at least 10 seconds',
        'заменяемый участок (infillEndS - infillStartS) должен быть не короче 10 секунд',
      );
    }
  },
  checkInputs: (s, inputs) => replaceSectionViolations(s.infillStartS, s.infillEndS, inputs),
  example: {
    settings: {
      infillStartS: 10,
      infillEndS: 25,
      prompt: LYRICS,
      fullLyrics: LYRICS,
      tags: 'folk',
      title: 'River',
    },
    files: { audio: ['mp3', 60] },
  },
  plan: (s, inputs) => {
    const section = sectionSeconds(s.infillStartS, s.infillEndS);
    const length = fileSeconds(inputs, 'audio') ?? Math.max(s.infillEndS, 2 * section);
    return twoTracksPlan({
      settings: s,
      title: s.title,
      lyrics: s.fullLyrics,
      durationSeconds: Math.round(length),
    });
  },
});

/**
 * Seconds as a message shows them: at most two decimals, as the settings take them, so a probed length
 * (90.04081632653062) or a difference of two settings (19.900000000000002) reads 90.04 and 19.9.
 */
function secondsText(seconds: number): string {
  return String(Math.round(seconds * 100) / 100);
}

/** Length of the replaced section, exact to the microsecond (`exactSeconds`): 10 s and half the track are limits. */
function sectionSeconds(start: number, end: number): number {
  return exactSeconds(end - start);
}

/** Reference (replace_upload): the section is at most half the track and lies within it. */
function replaceSectionViolations(start: number, end: number, inputs: ModeInputs): Violation[] {
  const length = fileSeconds(inputs, 'audio');
  const section = sectionSeconds(start, end);
  if (length === undefined) return [];
  if (end > length) {
    return [
      {
        field: 'infillEndS',
        en: `infillEndS (${end} s) must be within the audio file (${secondsText(length)} s)`,
        ru: `infillEndS (${ruDecimal(end)} с) должен быть в пределах аудиофайла (${ruDecimal(secondsText(length))} с)`,
      },
    ];
  }
  if (section > length / 2) {
    return [
      {
        field: 'infillEndS',
        en: `the replaced section (infillEndS - infillStartS = ${secondsText(section)} s) must be at most half the track (${secondsText(length / 2)} s)`,
        ru: `заменяемый участок (infillEndS - infillStartS = ${ruDecimal(secondsText(section))} с) должен быть не длиннее половины трека (${ruDecimal(secondsText(length / 2))} с)`,
      },
    ];
  }
  return [];
}

/** Reference (mashup): audio sets the base, audio2 is the second track; lyrics optional in advanced mode. */
const mashup = songMode({
  name: 'mashup',
  tracks: { audio: MUSIC_AUDIO_INPUT, audio2: MUSIC_AUDIO_INPUT },
  lyricsRequired: false,
  singer: false,
  example: {
    settings: { songDescription: 'both songs as one' },
    files: { audio: ['mp3', 45], audio2: ['mp3', 45] },
  },
});

export const music: ModelSpec = {
  key: 'music',
  kind: 'audio',
  name: 'Songs and sounds',
  modeField: 'mode',
  modes: [generate, sounds, addVocals, addInstrumental, coverUpload, extend, replaceUpload, mashup],
};
