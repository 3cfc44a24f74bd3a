/**
 * Model `video-omni` (CONTRACT §2, reference "Other libraries"): one mode; up to three saved
 * characters (`character_ids`) and voices (`audio_ids`) of the person.
 */
import { z } from 'zod';
import { exampleRun } from './example.ts';
import { addRule, defineMode, type LibraryRef, type ModelSpec } from './model-spec.ts';
import { fixedRate, perUnit, settingCount } from './price-rule.ts';
import { aspectFrameSize, mp4Plan } from './video-common.ts';

/**
 * Ids of library records: up to three per video (reference "Other libraries"). Decisions: an id is a
 * non-empty string of at most 200 characters and may not repeat within its list.
 */
function idList(description: string): z.ZodArray<z.ZodString> {
  return z.array(z.string().min(1).max(200)).max(3).describe(description);
}

const settings = z
  .strictObject({
    prompt: z.string().min(1).max(5000),
    character_ids: idList('ids of own characters (/v1/models/video-omni/characters), up to 3').optional(),
    audio_ids: idList('ids of own or ready voices (/v1/models/video-omni/voices), up to 3').optional(),
    duration: z.int().min(3).max(15).default(5),
    aspect_ratio: z.enum(['16:9', '9:16', '1:1']).default('16:9'),
  })
  .superRefine((s, ctx) => {
    for (const field of ['character_ids', 'audio_ids'] as const) {
      const ids = s[field] ?? [];
      if (new Set(ids).size === ids.length) continue;
      addRule(ctx, field, `${field} must not repeat an id`, `${field} не должен повторять id`);
    }
  });

/** Decision: 720p, the frame following aspect_ratio (1280×720, 720×1280, 720×720). */
const QUALITY = '720p';

export const videoOmni: ModelSpec = {
  key: 'video-omni',
  kind: 'video',
  name: 'Video with saved characters and voices',
  modeField: null,
  modes: [
    defineMode({
      name: 'default',
      schema: settings,
      references: (s): LibraryRef[] => [
        ...(s.character_ids ?? []).map((id, i) => ({
          library: 'characters' as const,
          model: 'video-omni',
          id,
          field: `character_ids.${i}`,
        })),
        ...(s.audio_ids ?? []).map((id, i) => ({
          library: 'voices' as const,
          model: 'video-omni',
          id,
          field: `audio_ids.${i}`,
        })),
      ],
      /** Per second of output; saved characters and voices are free (CONTRACT §7 creation is free). */
      price: perUnit({
        rate: fixedRate('second'),
        units: settingCount('duration'),
        notes: ['saved characters and voices are free'],
      }),
      example: exampleRun({ prompt: 'a dancer on a rooftop' }),
      plan: (s) =>
        mp4Plan({
          caption: `video-omni, ${s.aspect_ratio}, ${s.duration}s`,
          prompt: s.prompt,
          size: aspectFrameSize(QUALITY, s.aspect_ratio),
          seconds: s.duration,
        }),
    }),
  ],
};
