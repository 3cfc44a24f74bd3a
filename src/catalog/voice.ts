/**
 * `voice` (reference: <key_voice>, voice-cloning speech generator; settings decided in CONTRACT §2):
 * speech from text in cloned voices (`text_to_dialogue`) and voice change of a recording
 * (`voice_change`). Voices come from this model's library (reference "Other libraries").
 *
 * Decisions where the documents are silent:
 * - A line starting with `[voice_N]` is spoken by voice_N (CONTRACT §2); naming a voice that is not set is
 *   `invalid_settings` on `text`. `[voice]` and `[voice_1]` name the first voice (`voice`). A text with
 *   nothing but white space and tags is `invalid_settings` on `text` too.
 * - Output length: about 15 characters of spoken text per second (tags not counted), at least 1 s; voice
 *   change keeps the input's length (30 s when unknown).
 * - Prices: per started 1000 characters of text, and per started minute of input audio (its length
 *   rounded to the nearest second) with a file of unknown length counted as one minute (the price
 *   rules below; rates in `prices/voice.json`).
 * - Audio input follows the music model's rule (mp3, wav, ogg, m4a, flac, aac; 20 MB).
 */
import { z } from 'zod';
import { characters } from '../lib/index.ts';
import { exampleRun } from './example.ts';
import { AUDIO_INPUT, audioUrl, fileSeconds, libraryId } from './fields.ts';
import type { AudioOutput, GenerationPlan, LibraryRef, ModelSpec } from './model-spec.ts';
import { addRule, defineMode } from './model-spec.ts';
import { fixedRate, perUnit } from './price-rule.ts';

/** CONTRACT §2: `voice` (required) and `voice_2` … `voice_20` (optional). */
export const EXTRA_VOICES: readonly string[] = Array.from({ length: 19 }, (_, i) => `voice_${i + 2}`);
const extraVoices: Record<string, z.ZodOptional<z.ZodString>> = Object.fromEntries(
  EXTRA_VOICES.map((field) => [field, libraryId.optional()]),
);

/**
 * Speaker tags at the start of lines: `[voice_3] Hello`, after any white space but a line break (a
 * no-break space too), as the providers' adapters read each line (`\s` within it).
 */
const SPEAKER_TAG = /^[^\S\n\r\u2028\u2029]*\[(voice(?:_\d+)?)\]/gm;

/** Setting that a speaker tag names (`voice_1` is `voice`). */
function speakerField(tag: string): string {
  return tag === 'voice_1' ? 'voice' : tag;
}

/** Characters that are spoken: the text without speaker tags. */
export function spokenLength(text: string): number {
  return characters(text.replace(SPEAKER_TAG, '').trim());
}

/** CONTRACT §2 decision above: ~15 characters per second, at least 1 s. */
export const CHARS_PER_SECOND = 15;

function speech(settings: Record<string, unknown>, filename: string, durationSeconds: number): AudioOutput {
  return {
    kind: 'audio',
    format: 'mp3',
    filename,
    caption: '',
    seed: JSON.stringify(settings),
    durationSeconds,
    speech: true,
  };
}

/** Every voice setting that is set, as library references of this model. */
function voiceRefs(s: Readonly<Record<string, unknown>>): LibraryRef[] {
  return ['voice', ...EXTRA_VOICES].flatMap((field) => {
    const id = s[field];
    return typeof id === 'string' ? [{ library: 'voices' as const, model: 'voice', id, field }] : [];
  });
}

const textToDialogue = defineMode({
  name: 'text_to_dialogue',
  schema: z
    .strictObject({
      mode: z.literal('text_to_dialogue'),
      text: z.string().min(1).max(5000),
      voice: libraryId,
      ...extraVoices,
    })
    .superRefine((s, ctx) => {
      // Every generator needs a line to speak: ElevenLabs fails a dialogue without one.
      if (spokenLength(s.text) === 0) {
        addRule(
          ctx,
          'text',
          'text has nothing to speak: it holds only white space and speaker tags',
          'в text нечего произносить: в нём только пробелы и метки говорящих',
        );
      }
      const voices: Readonly<Record<string, unknown>> = s;
      const tags = new Set(Array.from(s.text.matchAll(SPEAKER_TAG), (m) => m[1] ?? ''));
      for (const tag of tags) {
        const field = speakerField(tag);
        if (voices[field] !== undefined) continue;
        addRule(
          ctx,
          'text',
          `text gives a line to [${tag}], but ${field} is not set`,
          `в text есть реплика для [${tag}], но ${field} не задан`,
        );
      }
    }),
  references: (s) => voiceRefs(s),
  price: perUnit({
    rate: fixedRate('dialogue_per_1000_chars'),
    units: {
      text: 'started 1000 characters of text (at least one)',
      count: (s: { text: string }) => Math.max(1, Math.ceil(characters(s.text) / 1000)),
    },
  }),
  plan: (s): GenerationPlan => {
    const speakers = voiceRefs(s).length;
    const durationSeconds = Math.max(1, Math.ceil(spokenLength(s.text) / CHARS_PER_SECOND));
    return {
      outputs: [speech(s, 'dialogue.mp3', durationSeconds)],
      caption: `voice · text_to_dialogue · ${speakers} ${speakers === 1 ? 'voice' : 'voices'}`,
      texts: [],
      workSeconds: 30,
    };
  },
  example: exampleRun({ mode: 'text_to_dialogue', text: 'Hello, world!', voice: 'voice-id' }),
});

/** Length assumed for a voice-change input whose length was not probed (seconds). */
const UNKNOWN_INPUT_SECONDS = 30;

const voiceChange = defineMode({
  name: 'voice_change',
  schema: z.strictObject({
    mode: z.literal('voice_change'),
    audio: audioUrl,
    voice: libraryId,
  }),
  inputRules: { audio: AUDIO_INPUT },
  references: (s) => voiceRefs(s),
  price: perUnit({
    rate: fixedRate('voice_change_per_minute'),
    units: {
      text:
        'started minutes of the input audio (its length rounded to the nearest second; at least one; ' +
        'a file of unknown length counts as one)',
      // Rounded first, as the music inputs are: encoder padding (a "60 s" mp3 probed as 60.03 s) does
      // not start another minute.
      count: (_s, inputs) => {
        const seconds = fileSeconds(inputs, 'audio');
        return seconds === undefined ? 1 : Math.max(1, Math.ceil(Math.round(seconds) / 60));
      },
    },
  }),
  example: exampleRun({ mode: 'voice_change', voice: 'voice-id' }, { audio: ['mp3', 30] }),
  plan: (s, inputs): GenerationPlan => {
    const durationSeconds = Math.max(1, Math.round(fileSeconds(inputs, 'audio') ?? UNKNOWN_INPUT_SECONDS));
    return {
      outputs: [speech(s, 'voice-change.mp3', durationSeconds)],
      caption: 'voice · voice_change',
      texts: [],
      workSeconds: 60,
    };
  },
});

export const voice: ModelSpec = {
  key: 'voice',
  kind: 'speech',
  name: 'Cloned voice speech',
  modeField: 'mode',
  modes: [textToDialogue, voiceChange],
};
