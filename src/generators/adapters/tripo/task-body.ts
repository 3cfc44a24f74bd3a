/**
 * Our model-3d settings as the body of Tripo's `POST /task` (PROVIDERS.md §1). Pure apart from the uploads
 * it is handed: every picture goes up first and is named by its file token.
 */

import { withoutEmoji } from '../../../lib/index.ts';
import { GenerationError, type GenerationRequest } from '../../generator.ts';
import type { Channel } from '../types.ts';

/** A picture uploaded to Tripo, as `file` / `files[]` name it. */
export interface TripoFile {
  type: 'jpg' | 'png';
  file_token: string;
}

/** Uploads the picture behind one of our input links and answers its file reference. */
export type UploadPicture = (url: string) => Promise<TripoFile>;

/**
 * Fields sent only when a setting differs from the upstream default. Our catalog fills in defaults equal to
 * Tripo's, so a setting the caller left alone is never sent ("other fields only when set"); this also keeps
 * v3-only fields such as `geometry_quality` away from versions that do not know them.
 */
const UPSTREAM_DEFAULTS: Readonly<Record<string, unknown>> = {
  texture: true,
  pbr: true,
  texture_quality: 'standard',
  geometry_quality: 'standard',
  auto_size: false,
  quad: false,
  smart_low_poly: false,
};

/** Settings of the image modes only, with their upstream defaults. */
const IMAGE_DEFAULTS: Readonly<Record<string, unknown>> = {
  orientation: 'default',
  texture_alignment: 'original_image',
  enable_image_autofix: false,
};

/** Our default version; sent always, since Tripo's own default (v2.5) differs (PROVIDERS.md §1). */
export const DEFAULT_MODEL_VERSION = 'v3.1-20260211';

/** The multiview order Tripo expects, as our setting names. */
const VIEWS = ['front_url', 'left_url', 'back_url', 'right_url'] as const;

/** Tripo's model id for our version: the channel's `upstream_models` first; our ids are Tripo's otherwise. */
export function upstreamModelVersion(settings: Readonly<Record<string, unknown>>, channel: Channel): string {
  const ours =
    typeof settings['model_version'] === 'string' ? settings['model_version'] : DEFAULT_MODEL_VERSION;
  return channel.upstreamModels[ours] ?? ours;
}

/** The first link of a list setting, if any. */
function firstLink(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return null;
}

/** Copies the fields of `defaults` whose setting is present and differs from the upstream default. */
function copyChanged(
  body: Record<string, unknown>,
  settings: Readonly<Record<string, unknown>>,
  defaults: Readonly<Record<string, unknown>>,
): void {
  for (const [field, fallback] of Object.entries(defaults)) {
    const value = settings[field];
    if (value !== undefined && value !== fallback) body[field] = value;
  }
}

/** The upstream `type` and the picture fields of the mode; multiview with only a front is image_to_model. */
async function pictureFields(
  mode: string,
  settings: Readonly<Record<string, unknown>>,
  upload: UploadPicture,
): Promise<Record<string, unknown>> {
  if (mode === 'image_to_model') {
    const url = firstLink(settings['image_url']);
    if (url === null) throw new GenerationError('generation_failed', 'image_to_model without image_url');
    return { type: 'image_to_model', file: await upload(url) };
  }
  const links = VIEWS.map((view) => firstLink(settings[view]));
  const front = links[0];
  if (front === null || front === undefined)
    throw new GenerationError('generation_failed', 'multiview_to_model without front_url');
  // Tripo wants at least two pictures for multiview (PROVIDERS.md §1, decided there).
  if (links.filter((link) => link !== null).length < 2)
    return { type: 'image_to_model', file: await upload(front) };
  // One at a time: Tripo allows 10 uploads a second per account, shared with every other run.
  const files: (TripoFile | Record<string, never>)[] = [];
  for (const link of links) files.push(link === null ? {} : await upload(link));
  return { type: 'multiview_to_model', files };
}

/**
 * Tripo's own `face_limit` ranges (PROVIDERS.md §1): quad 500–10000, smart_low_poly 1000–20000, both at
 * once the two together (1000–10000). The reference accepts more (500–20000 for smart_low_poly,
 * 48–2000000 for quad), and Tripo refuses a task outside its range, so the value sent is the nearest one
 * Tripo takes.
 */
function withinTripoFaceRange(faceLimit: number, settings: Readonly<Record<string, unknown>>): number {
  let [min, max] = [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY];
  if (settings['quad'] === true) [min, max] = [Math.max(min, 500), Math.min(max, 10_000)];
  if (settings['smart_low_poly'] === true) [min, max] = [Math.max(min, 1_000), Math.min(max, 20_000)];
  return Math.min(max, Math.max(min, faceLimit));
}

/** The `POST /task` body for one run; uploads the pictures through `upload` first. */
export async function taskBody(
  request: Pick<GenerationRequest, 'mode' | 'settings'>,
  channel: Channel,
  upload: UploadPicture,
): Promise<Record<string, unknown>> {
  const { mode, settings } = request;
  const body: Record<string, unknown> = {};
  if (mode === 'text_to_model') {
    body['type'] = 'text_to_model';
    // Tripo takes text only (PROVIDERS.md §1): a prompt with an emoji would fail upstream after the hold.
    body['prompt'] = withoutEmoji(String(settings['prompt'] ?? ''));
    const negative = settings['negative_prompt'];
    if (typeof negative === 'string' && withoutEmoji(negative) !== '')
      body['negative_prompt'] = withoutEmoji(negative);
  } else if (mode === 'image_to_model' || mode === 'multiview_to_model') {
    Object.assign(body, await pictureFields(mode, settings, upload));
  } else {
    throw new GenerationError('generation_failed', `Tripo serves model-3d modes only, not ${mode}`);
  }
  body['model_version'] = upstreamModelVersion(settings, channel);
  copyChanged(body, settings, UPSTREAM_DEFAULTS);
  const faceLimit = settings['face_limit'];
  if (typeof faceLimit === 'number') body['face_limit'] = withinTripoFaceRange(faceLimit, settings);
  if (settings['generate_parts'] === true) {
    // Parts need an untextured, triangle mesh, said explicitly: texture and pbr default to true upstream.
    Object.assign(body, { generate_parts: true, texture: false, pbr: false, quad: false });
  }
  if (mode !== 'text_to_model') copyChanged(body, settings, IMAGE_DEFAULTS);
  return body;
}
