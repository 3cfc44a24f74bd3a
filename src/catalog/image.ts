/**
 * `image` (reference: <key_image_style>, image generator with saved styles; settings decided in
 * CONTRACT §2): pictures from a prompt, optionally in one of the caller's own styles.
 *
 * Decisions where the documents are silent:
 * - CONTRACT §2: "A vector style gives SVG files (kind image), a raster style PNG". Whether a style is
 *   vector is known from its record, which the core resolves before planning (`inputs.records`).
 * - Price: per picture, times `n`; the size and the style do not change it (a saved style is not part
 *   of the price, like personas in the reference). The rate is in `prices/image.json`.
 * - About 20 s of work per picture.
 */
import { z } from 'zod';
import { exampleRun } from './example.ts';
import type { GenerationPlan, ImageOutput, LibraryRef, ModelSpec } from './model-spec.ts';
import { defineMode } from './model-spec.ts';
import { fixedRate, perUnit, settingCount } from './price-rule.ts';

/** CONTRACT §2: picture sizes, width x height; the first is the default. */
export const IMAGE_SIZES = ['1024x1024', '1365x1024', '1024x1365', '1536x1024', '1024x1536'] as const;

/** Width and height of a size such as `1365x1024`. */
export function sizeOf(size: string): { width: number; height: number } {
  const [width = 1024, height = 1024] = size.split('x').map(Number);
  return { width, height };
}

const WORK_SECONDS_PER_PICTURE = 20;

const generate = defineMode({
  name: 'default',
  schema: z.strictObject({
    prompt: z.string().min(1).max(10000),
    style_id: z.string().min(1).optional(),
    size: z.enum(IMAGE_SIZES).default('1024x1024'),
    n: z.int().min(1).max(4).default(1),
  }),
  references: (s): LibraryRef[] =>
    s.style_id === undefined
      ? []
      : [{ library: 'styles', model: 'image', id: s.style_id, field: 'style_id' }],
  price: perUnit({
    rate: fixedRate('picture'),
    units: settingCount('n'),
    notes: ['size and style do not change the price'],
  }),
  example: exampleRun({ prompt: 'a fox in the snow' }),
  plan: (s, inputs): GenerationPlan => {
    const vector = s.style_id !== undefined && inputs.records?.[s.style_id]?.type === 'vector';
    const format = vector ? 'svg' : 'png';
    const outputs = Array.from(
      { length: s.n },
      (_, i): ImageOutput => ({
        kind: 'image',
        format,
        filename: `image-${i + 1}.${format}`,
        caption: '',
        seed: `${i + 1} ${JSON.stringify(s)}`,
        ...sizeOf(s.size),
      }),
    );
    return {
      outputs,
      caption: `image · ${s.size}${s.style_id === undefined ? '' : vector ? ' · own vector style' : ' · own style'}`,
      texts: [],
      workSeconds: WORK_SECONDS_PER_PICTURE * s.n,
    };
  },
});

export const image: ModelSpec = {
  key: 'image',
  kind: 'image',
  name: 'Images in own styles',
  modeField: null,
  modes: [generate],
};
