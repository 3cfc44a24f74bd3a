/**
 * `music-styles` (reference: <key_music_b>, music generator with saved styles; settings decided in
 * CONTRACT §2): one track from a prompt, optionally in a style trained on the caller's own tracks.
 *
 * Decisions where the documents are silent:
 * - Price: per started 30 s of output; the style is not part of the price. The rate is in
 *   `prices/music-styles.json`.
 * - texts follow the music model (CONTRACT §2): a title made up from the prompt and, unless instrumental,
 *   lyrics made up from it.
 * - About 5 minutes of work (the reference's song time).
 */
import { z } from 'zod';
import { exampleRun } from './example.ts';
import { libraryId } from './fields.ts';
import type { GenerationPlan, LibraryRef, ModelSpec } from './model-spec.ts';
import { defineMode } from './model-spec.ts';
import { madeUpLyrics, madeUpTitle, slug } from './music-common.ts';
import { fixedRate, perUnit } from './price-rule.ts';

const WORK_SECONDS = 300;

const generate = defineMode({
  name: 'default',
  schema: z.strictObject({
    prompt: z.string().min(1).max(3000),
    style: libraryId.optional(),
    instrumental: z.boolean().default(false),
    duration: z.int().min(10).max(300).default(60),
  }),
  references: (s): LibraryRef[] =>
    s.style === undefined ? [] : [{ library: 'styles', model: 'music-styles', id: s.style, field: 'style' }],
  price: perUnit({
    rate: fixedRate('per_30s'),
    units: {
      text: 'started 30 s of duration',
      count: (s: { duration: number }) => Math.ceil(s.duration / 30),
    },
    notes: ['the style is free'],
  }),
  example: exampleRun({ prompt: 'calm lo-fi beat for studying' }),
  plan: (s): GenerationPlan => {
    const title = madeUpTitle(s.prompt);
    return {
      outputs: [
        {
          kind: 'audio',
          format: 'mp3',
          filename: `${slug(title)}.mp3`,
          caption: title,
          seed: JSON.stringify(s),
          durationSeconds: s.duration,
        },
      ],
      caption: `music-styles · ${s.style === undefined ? 'no style' : 'own style'} · ${s.duration} s`,
      texts: s.instrumental ? [title] : [title, madeUpLyrics(s.prompt, title)],
      workSeconds: WORK_SECONDS,
    };
  },
});

export const musicStyles: ModelSpec = {
  key: 'music-styles',
  kind: 'audio',
  name: 'Music in own styles',
  modeField: null,
  modes: [generate],
};
