/**
 * The other libraries (reference "Other libraries", CONTRACT §7): cloned voices of `voice`, image styles
 * of `image`, music styles of `music-styles`, characters and voices of `video-omni`. All but music styles
 * are saved while the request waits and answer 201 `ready`; a music style answers 201 `training` and is
 * `ready` (or `failed`) after the generator's training time (reference: 5 to 10 minutes).
 *
 * Decisions: a cloned voice takes 1–10 samples; a character's description is at most 500 characters;
 * every record of these libraries carries `status` (the reference shows "id and status").
 */
import { z } from 'zod';
import { addRule } from '../catalog/model-spec.ts';
import { AUDIO_FILES, IMAGE_FILES, listLimit, nameField, textLimit, urlField, urlList } from './fields.ts';
import type { LibraryDecl } from './types.ts';

const NAME = textLimit(1, 100);
const name = nameField(NAME.min_length, NAME.max_length);
const readyStatus = z.enum(['ready']);

const clonedVoiceBody = z.strictObject({
  name,
  sample_urls: urlList(1, 10).describe('1 to 10 recordings of the voice'),
  remove_background_noise: z.boolean().default(false),
});
export const clonedVoices: LibraryDecl<z.output<typeof clonedVoiceBody>> = {
  model: 'voice',
  segment: 'voices',
  title: 'cloned voice',
  body: clonedVoiceBody,
  record: z.object({
    id: z.string(),
    name: z.string(),
    status: readyStatus,
    remove_background_noise: z.boolean(),
    sample_count: z.int(),
    created_at: z.string(),
  }),
  limits: { name: NAME, sample_urls: listLimit(1, 10), accepted_files: { sample_urls: AUDIO_FILES } },
  files: { sample_urls: AUDIO_FILES },
  hasStatus: true,
  failCode: 'library_create_failed',
  async prepare(b) {
    return {
      name: b.name,
      data: { remove_background_noise: b.remove_background_noise, sample_count: b.sample_urls.length },
    };
  },
};

const imageStyleBody = z.strictObject({
  name,
  image_urls: urlList(1, 10).describe('1 to 10 pictures in the style'),
  type: z.enum(['raster', 'vector']).default('raster').describe('vector styles give SVG pictures'),
});
export const imageStyles: LibraryDecl<z.output<typeof imageStyleBody>> = {
  model: 'image',
  segment: 'styles',
  title: 'image style',
  body: imageStyleBody,
  record: z.object({
    id: z.string(),
    name: z.string(),
    status: readyStatus,
    type: z.enum(['raster', 'vector']),
    created_at: z.string(),
  }),
  limits: {
    name: NAME,
    image_urls: listLimit(1, 10),
    types: ['raster', 'vector'],
    accepted_files: { image_urls: IMAGE_FILES },
  },
  files: { image_urls: IMAGE_FILES },
  hasStatus: true,
  failCode: 'library_create_failed',
  async prepare(b) {
    return { name: b.name, data: { type: b.type } };
  },
};

const DESCRIPTION = textLimit(0, 500);

const musicStyleBody = z.strictObject({
  name,
  track_urls: urlList(1, 10).describe("1 to 10 of the caller's own tracks"),
  description: z.string().max(DESCRIPTION.max_length).optional(),
});
export const musicStyles: LibraryDecl<z.output<typeof musicStyleBody>> = {
  model: 'music-styles',
  segment: 'styles',
  title: 'music style',
  body: musicStyleBody,
  record: z.object({
    id: z.string(),
    name: z.string(),
    status: z.enum(['training', 'ready', 'failed']),
    description: z.string().nullable(),
    error: z.string().optional().describe('present when status is failed'),
    created_at: z.string(),
  }),
  limits: {
    name: NAME,
    description: DESCRIPTION,
    track_urls: listLimit(1, 10),
    training_minutes: { min: 5, max: 10 },
    accepted_files: { track_urls: AUDIO_FILES },
  },
  files: { track_urls: AUDIO_FILES },
  hasStatus: true,
  failCode: 'library_create_failed',
  learns: { initial: 'training', succeeded: async () => ({ status: 'ready' }) },
  async prepare(b) {
    return { name: b.name, data: { description: b.description ?? null } };
  },
};

const characterBody = z.strictObject({
  name,
  portrait_url: urlField.describe('a portrait of the character'),
  full_body_url: urlField.describe('a full-length shot of the character'),
  description: z.string().max(DESCRIPTION.max_length).optional(),
});
export const omniCharacters: LibraryDecl<z.output<typeof characterBody>> = {
  model: 'video-omni',
  segment: 'characters',
  title: 'character',
  body: characterBody,
  record: z.object({
    id: z.string(),
    name: z.string(),
    status: readyStatus,
    description: z.string().nullable(),
    created_at: z.string(),
  }),
  limits: {
    name: NAME,
    description: DESCRIPTION,
    accepted_files: { portrait_url: IMAGE_FILES, full_body_url: IMAGE_FILES },
  },
  files: { portrait_url: IMAGE_FILES, full_body_url: IMAGE_FILES },
  hasStatus: true,
  failCode: 'library_create_failed',
  async prepare(b) {
    return { name: b.name, data: { description: b.description ?? null } };
  },
};

/** Ready voices an omni voice is based on; also usable directly in `audio_ids` (reference). */
export const OMNI_PRESETS = [
  { id: 'preset-warm-narrator', name: 'Warm narrator', status: 'ready', language: 'en' },
  { id: 'preset-bright-host', name: 'Bright host', status: 'ready', language: 'en' },
  { id: 'preset-deep-baritone', name: 'Deep baritone', status: 'ready', language: 'en' },
  { id: 'preset-soft-alto', name: 'Soft alto', status: 'ready', language: 'ru' },
] as const;
const PRESET_IDS = OMNI_PRESETS.map((p) => p.id) as string[];

const omniVoiceBody = z
  .strictObject({
    name,
    base_voice_id: z.string().min(1).max(100).describe('id of a ready voice from the list response presets'),
    sample_urls: urlList(1, 3).describe('1 to 3 recordings of the voice'),
  })
  .superRefine((b, ctx) => {
    if (!PRESET_IDS.includes(b.base_voice_id)) {
      const known = PRESET_IDS.join(', ');
      addRule(ctx, 'base_voice_id', `must be one of: ${known}`, `должен быть одним из: ${known}`);
    }
  });
export const omniVoices: LibraryDecl<z.output<typeof omniVoiceBody>> = {
  model: 'video-omni',
  segment: 'voices',
  title: 'omni voice',
  body: omniVoiceBody,
  record: z.object({
    id: z.string(),
    name: z.string(),
    status: readyStatus,
    base_voice_id: z.string(),
    created_at: z.string(),
  }),
  limits: { name: NAME, sample_urls: listLimit(1, 3), accepted_files: { sample_urls: AUDIO_FILES } },
  files: { sample_urls: AUDIO_FILES },
  listExtras: { presets: OMNI_PRESETS },
  hasStatus: true,
  failCode: 'library_create_failed',
  async prepare(b) {
    return { name: b.name, data: { base_voice_id: b.base_voice_id } };
  },
};
