/**
 * The other libraries (reference "Other libraries", CONTRACT §7): cloned voices of `voice`, image styles
 * of `image`, music styles of `music-styles`, characters and voices of `video-omni`. All but music styles
 * are saved while the request waits and answer 201 `ready`; a music style answers 201 `training` and is
 * `ready` (or `failed`) after the generator's training time (reference: 5 to 10 minutes). Decisions are
 * in each declaration's `notes`.
 */

import { z } from 'zod';
import { timestamp } from '../lib/index.ts';
import { defineLibrary } from './define.ts';
import { AUDIO_FILES, IMAGE_FILES, urlField, urlList, visibleText } from './fields.ts';
import { boundsOf } from './limits.ts';

const name = visibleText(1, 100);
/** Records saved while the request waits: `ready` from the start (the reference shows "id and status"). */
const SAVED_STATES = ['ready'] as const;
const readyStatus = z.enum(SAVED_STATES);
const description = z.string().max(500).optional();
/** Shared by the kinds saved while the request waits. */
const SAVED_NOTE = 'Every record carries `status` (the reference shows "id and status").';

const clonedVoiceBody = z.strictObject({
  name,
  sample_urls: urlList(1, 10).describe('1 to 10 recordings of the voice'),
  remove_background_noise: z.boolean().default(false),
});
export const clonedVoices = defineLibrary({
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
    created_at: timestamp(),
  }),
  limits: boundsOf(clonedVoiceBody, ['name', 'sample_urls']),
  files: { sample_urls: AUDIO_FILES },
  states: SAVED_STATES,
  failCode: 'library_create_failed',
  refusals: { missing: 'voice_not_found', notReady: 'voice_not_ready' },
  notes: { decisions: SAVED_NOTE },
  async prepare(b) {
    return {
      name: b.name,
      data: { remove_background_noise: b.remove_background_noise, sample_count: b.sample_urls.length },
    };
  },
});

const IMAGE_STYLE_TYPES = ['raster', 'vector'] as const;
const imageStyleBody = z.strictObject({
  name,
  image_urls: urlList(1, 10).describe('1 to 10 pictures in the style'),
  type: z.enum(IMAGE_STYLE_TYPES).default('raster').describe('vector styles give SVG pictures'),
});
export const imageStyles = defineLibrary({
  model: 'image',
  segment: 'styles',
  title: 'image style',
  body: imageStyleBody,
  record: z.object({
    id: z.string(),
    name: z.string(),
    status: readyStatus,
    type: z.enum(IMAGE_STYLE_TYPES),
    created_at: timestamp(),
  }),
  limits: { ...boundsOf(imageStyleBody, ['name', 'image_urls']), types: IMAGE_STYLE_TYPES },
  files: { image_urls: IMAGE_FILES },
  states: SAVED_STATES,
  failCode: 'library_create_failed',
  refusals: { missing: 'style_not_found', notReady: 'style_not_ready' },
  notes: {
    decisions: `A style's \`type\` decides whether tasks using it make SVG or PNG pictures. ${SAVED_NOTE}`,
  },
  async prepare(b) {
    return { name: b.name, data: { type: b.type } };
  },
});

/** Reference: a music style trains for 5 to 10 minutes; the simulator takes 7. */
const TRAINING_MINUTES = { min: 5, max: 10 } as const;
const MUSIC_STYLE_STATES = ['training', 'ready', 'failed'] as const;

const musicStyleBody = z.strictObject({
  name,
  track_urls: urlList(1, 10).describe("1 to 10 of the caller's own tracks"),
  description,
});
export const musicStyles = defineLibrary({
  model: 'music-styles',
  segment: 'styles',
  title: 'music style',
  body: musicStyleBody,
  record: z.object({
    id: z.string(),
    name: z.string(),
    status: z.enum(MUSIC_STYLE_STATES),
    description: z.string().nullable(),
    error: z.string().optional().describe('present when status is failed'),
    created_at: timestamp(),
  }),
  limits: {
    ...boundsOf(musicStyleBody, ['name', 'description', 'track_urls']),
    training_minutes: TRAINING_MINUTES,
  },
  files: { track_urls: AUDIO_FILES },
  states: MUSIC_STYLE_STATES,
  failCode: 'library_create_failed',
  refusals: { missing: 'style_not_found', notReady: 'style_not_ready' },
  learns: { initial: 'training', typicalMs: 7 * 60_000, succeeds: 'ready' },
  notes: {
    decisions:
      `Answers \`201\` with \`training\` at once (the reference trains for ${TRAINING_MINUTES.min} to ` +
      `${TRAINING_MINUTES.max} minutes); \`failed\` with \`error\` when the generator could not learn ` +
      '(the simulator: `[sim:fail]` in any field).',
  },
  async prepare(b) {
    return { name: b.name, data: { description: b.description ?? null } };
  },
});

const characterBody = z.strictObject({
  name,
  portrait_url: urlField.describe('a portrait of the character'),
  full_body_url: urlField.describe('a full-length shot of the character'),
  description,
});
export const omniCharacters = defineLibrary({
  model: 'video-omni',
  segment: 'characters',
  title: 'character',
  body: characterBody,
  record: z.object({
    id: z.string(),
    name: z.string(),
    status: readyStatus,
    description: z.string().nullable(),
    created_at: timestamp(),
  }),
  limits: boundsOf(characterBody, ['name', 'description']),
  files: { portrait_url: IMAGE_FILES, full_body_url: IMAGE_FILES },
  states: SAVED_STATES,
  failCode: 'library_create_failed',
  refusals: { missing: 'character_not_found' },
  notes: { decisions: SAVED_NOTE },
  async prepare(b) {
    return { name: b.name, data: { description: b.description ?? null } };
  },
});

/** Ready voices an omni voice is based on; also usable directly in `audio_ids` (reference). */
export const OMNI_PRESETS = [
  { id: 'preset-warm-narrator', name: 'Warm narrator', status: 'ready', language: 'en' },
  { id: 'preset-bright-host', name: 'Bright host', status: 'ready', language: 'en' },
  { id: 'preset-deep-baritone', name: 'Deep baritone', status: 'ready', language: 'en' },
  { id: 'preset-soft-alto', name: 'Soft alto', status: 'ready', language: 'ru' },
] as const;
const PRESET_IDS = OMNI_PRESETS.map((p) => p.id) as [string, ...string[]];

// The presets as the schema's `enum`: the OpenAPI document lists them, and the dashboard's creation form,
// drawn from the same schema, offers them as a choice rather than a text to guess.
const omniVoiceBody = z.strictObject({
  name,
  base_voice_id: z.enum(PRESET_IDS).describe('id of a ready voice from the list response presets'),
  sample_urls: urlList(1, 3).describe('1 to 3 recordings of the voice'),
});
export const omniVoices = defineLibrary({
  model: 'video-omni',
  segment: 'voices',
  title: 'omni voice',
  body: omniVoiceBody,
  record: z.object({
    id: z.string(),
    name: z.string(),
    status: readyStatus,
    base_voice_id: z.string(),
    created_at: timestamp(),
  }),
  limits: boundsOf(omniVoiceBody, ['name', 'sample_urls']),
  files: { sample_urls: AUDIO_FILES },
  presets: OMNI_PRESETS,
  states: SAVED_STATES,
  failCode: 'library_create_failed',
  refusals: { missing: 'voice_not_found', notReady: 'voice_not_ready' },
  notes: {
    decisions:
      `\`presets\` is a fixed list of ready base voices (${OMNI_PRESETS.map((p) => `\`${p.id}\``).join(', ')}); ` +
      "their ids are also accepted directly in a task's `audio_ids`, and each has a stored sample at " +
      '`/samples/<id>.mp3` that providers taking a voice as a recording are sent.',
  },
  async prepare(b) {
    return { name: b.name, data: { base_voice_id: b.base_voice_id } };
  },
});
