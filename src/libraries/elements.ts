/**
 * Element library of `video-elements` (reference "Element library"): a character or object shown from
 * several sides, named in prompts by its label `Element_<id>`. Decisions: `notes` below.
 */

import { z } from 'zod';
import { addRule } from '../catalog/index.ts';
import { errors } from '../errors.ts';
import { timestamp } from '../lib/index.ts';
import { defineLibrary } from './define.ts';
import { IMAGE_FILES, urlField, urlList, VIDEO_FILES, visibleText } from './fields.ts';
import { boundsOf } from './limits.ts';

export const ELEMENT_TAGS = [
  { key: 'character', name: 'Character', views: ['front', 'left side', 'right side', 'back'] },
  { key: 'object', name: 'Object', views: ['front', 'side', 'back', 'top'] },
  { key: 'animal', name: 'Animal', views: ['front', 'side', 'back'] },
  { key: 'vehicle', name: 'Vehicle', views: ['front', 'side', 'back', 'three-quarter'] },
  { key: 'scene', name: 'Scene', views: ['wide shot', 'medium shot', 'close-up'] },
] as const;
const TAG_KEYS = ELEMENT_TAGS.map((t) => t.key) as [string, ...string[]];

/**
 * The form in which element names are compared: names that look alike are one name. Unicode
 * compatibility forms (NFKC: `Café` typed composed or decomposed, full-width letters), case, invisible
 * format characters (zero-width spaces and joiners, soft hyphens, bidi marks: `Red Car` with a
 * zero-width space is still `Red Car`) and runs of spaces (a list shows `Red  Car` as `Red Car`).
 */
function elementNameKey(name: string): string {
  return name
    .normalize('NFKC')
    .replace(/\p{Cf}/gu, '')
    .replace(/\p{White_Space}+/gu, ' ')
    .trim()
    .toLowerCase();
}

const body = z
  .strictObject({
    name: visibleText(1, 100),
    description: z.string().max(500).default(''),
    tag: z.enum(TAG_KEYS).describe('kind of element; GET lists the tags'),
    image_urls: urlList(1, 4)
      .optional()
      .describe('up to 4 pictures; the first is the cover, others show the element from other sides'),
    video_url: urlField.optional().describe('one short video; only with tag character'),
  })
  .superRefine((b, ctx) => {
    if ((b.image_urls === undefined) === (b.video_url === undefined)) {
      addRule(
        ctx,
        'image_urls',
        'send either image_urls or video_url',
        'передайте либо image_urls, либо video_url',
      );
    } else if (b.video_url !== undefined && b.tag !== 'character') {
      addRule(ctx, 'video_url', 'video_url only with tag character', 'video_url только с tag character');
    }
  });

export const elements = defineLibrary({
  model: 'video-elements',
  segment: 'elements',
  title: 'element',
  body,
  record: z.object({
    id: z.string(),
    label: z.string().describe('Element_<id>, written in prompts'),
    name: z.string(),
    description: z.string(),
    tag: z.string(),
    type: z.enum(['image', 'video']),
    cover_url: z.string().nullable(),
    created_at: timestamp(),
  }),
  limits: boundsOf(body, ['name', 'description', 'image_urls', 'video_url']),
  files: { image_urls: IMAGE_FILES, video_url: { ...VIDEO_FILES, maxSeconds: 8 } },
  listExtras: { tags: ELEMENT_TAGS },
  failCode: 'element_create_failed',
  refusals: { missing: 'element_not_found' },
  notes: {
    rules:
      'Send either `image_urls` (the first is the cover) or `video_url`; `video_url` only with tag `character`.',
    decisions:
      'Tags are ' +
      `${ELEMENT_TAGS.map((t) => `\`${t.key}\``).join(', ')}, each with the \`views\` to shoot it from. ` +
      'Names are unique per person among live elements, compared trimmed, case-insensitively, in ' +
      "Unicode's compatibility form NFKC, without invisible format characters (zero-width spaces, soft " +
      'hyphens, bidi marks) and with runs of spaces as one (`Red Car`, `red car`, `Red  Car` and `Red Car` ' +
      'with a zero-width space collide, and so do `Café` typed composed or decomposed). The ' +
      "record's `label` is `Element_<id>`; `type` is `image` or " +
      "`video`; a video element's `cover_url` is what the generator returns (the simulator returns the " +
      'video link).',
  },
  async prepare(b, ctx) {
    return {
      name: b.name,
      uniqueKey: elementNameKey(b.name),
      data: {
        label: `Element_${ctx.recordId}`,
        description: b.description,
        tag: b.tag,
        type: b.video_url === undefined ? 'image' : 'video',
      },
      private: { sources: b.image_urls ?? [b.video_url] },
    };
  },
  taken: (plan) => errors.elementNameTaken(plan.name ?? ''),
  view: (r) => ({
    label: r.data['label'],
    description: r.data['description'],
    tag: r.data['tag'],
    type: r.data['type'],
    cover_url: r.data['cover_url'] ?? null,
  }),
});
