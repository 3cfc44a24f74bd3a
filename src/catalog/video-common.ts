/**
 * Helpers shared by the catalog modules of the video models (`video`, `video-elements`, `video-omni`):
 * attachment labels, frame sizes, input seconds, the per-second price and generation time.
 */
import type { z } from 'zod';
import { echoed } from '../lib/index.ts';
import { MB } from './fields.ts';
import { addRule, type GenerationPlan, type InputFile, type InputRule } from './model-spec.ts';
import type { Quantity } from './price-rule.ts';

/** Input rules of pictures for the video models (reference: jpeg, jpg, png, webp up to 10 MB). */
export const PICTURE_RULE: InputRule = { formats: ['jpeg', 'png', 'webp'], maxBytes: 10 * MB };

export const QUALITIES = ['480p', '720p', '1080p'] as const;
export type Quality = (typeof QUALITIES)[number];

export const ASPECT_RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4'] as const;
export type AspectRatio = (typeof ASPECT_RATIOS)[number];

/** Short side of the frame at each quality (pixels). */
const SHORT_SIDE: Readonly<Record<Quality, number>> = { '480p': 480, '720p': 720, '1080p': 1080 };

/** Rounds to the nearest even number (H.264 needs even frame sizes). */
function even(value: number): number {
  return Math.max(2, 2 * Math.round(value / 2));
}

export interface FrameSize {
  width: number;
  height: number;
}

/** The widest proportions of a frame, 16:9 (and 9:16 standing): the widest `aspect_ratio` offers. */
const MAX_RATIO = 16 / 9;

/**
 * Frame of the given proportions whose short side is the quality's: 720p 16:9 = 1280×720,
 * 9:16 = 720×1280, 4:3 = 960×720; 480p 16:9 = 854×480. Both sides even. Proportions beyond 16:9 or
 * 9:16 (a first frame of 4000×16 pixels) give the nearest of the two, as a provider's adaptive ratio
 * picks a supported one: followed as they are, they asked for frames no encoder takes (120000×480).
 */
export function frameSize(quality: Quality, ratioWidth: number, ratioHeight: number): FrameSize {
  const short = SHORT_SIDE[quality];
  const ratio = Math.min(MAX_RATIO, Math.max(1 / MAX_RATIO, ratioWidth / ratioHeight));
  if (ratio >= 1) return { width: even(short * ratio), height: short };
  return { width: short, height: even(short / ratio) };
}

/** Frame size for a quality and an `aspect_ratio` setting. */
export function aspectFrameSize(quality: Quality, aspect: AspectRatio): FrameSize {
  const [w, h] = aspect.split(':').map(Number);
  return frameSize(quality, w ?? 16, h ?? 9);
}

/** An attachment list whose items the prompt must name: `@Image1`, `@Video2`, `@Audio1` ... */
export interface LabelledList {
  label: 'Image' | 'Video' | 'Audio';
  field: string;
  urls: readonly string[] | undefined;
}

/** Labels of the attachments in order: the number is the position of the URL in its list (reference). */
export function attachmentLabels(lists: readonly LabelledList[]): { label: string; field: string }[] {
  return lists.flatMap((list) =>
    (list.urls ?? []).map((_, i) => ({ label: `@${list.label}${i + 1}`, field: `${list.field}.${i}` })),
  );
}

/**
 * Reference: "every attachment must be mentioned by its label", written exactly (capital letter, no
 * space). `@Image1` is not mentioned by `@Image10`. Adds one `prompt` violation per missing label, and
 * one per label that names no attachment (`@Image2` with one picture, `@Audio1` where no sound is sent):
 * the number is the position of a URL in its list, so such a label points at nothing, and the run would
 * be paid for a reference the generator never gets.
 */
export function requireMentions(ctx: z.RefinementCtx, prompt: string, lists: readonly LabelledList[]): void {
  // One scan of the prompt; the greedy number keeps `@Image10` from counting as `@Image1`.
  const mentioned = new Set(Array.from(prompt.matchAll(/@(?:Image|Video|Audio)\d+/g), (m) => m[0]));
  const labels = attachmentLabels(lists);
  for (const { label, field } of labels) {
    if (mentioned.has(label)) continue;
    addRule(
      ctx,
      'prompt',
      `prompt must mention every attachment by its label: ${label} (${field}) is not mentioned`,
      `prompt должен упоминать каждое вложение по его метке: нет упоминания ${label} (${field})`,
    );
  }
  const known = new Set(labels.map(({ label }) => label));
  const stray = [...mentioned].filter((label) => !known.has(label));
  if (stray.length === 0) return;
  // One rule for them all, naming the first few: a long prompt may hold any number of them.
  const named = stray.slice(0, 3).map(echoed).join(', ') + (stray.length > 3 ? ', …' : '');
  addRule(
    ctx,
    'prompt',
    `prompt names ${named}, but no attachment has such a label (the number is the position of the URL in its list)`,
    `prompt называет ${named}, но вложения с такой меткой нет (номер — место URL в своём списке)`,
  );
}

/**
 * Input seconds charged for the files of the given fields: each file rounded up to a whole second
 * (CONTRACT §5). A file without a probed length counts 0 (its input rule refuses it anyway).
 */
export function inputSeconds(files: readonly InputFile[], fields: readonly string[]): number {
  return files
    .filter((file) => fields.includes(file.field))
    .reduce((sum, file) => sum + Math.ceil(file.durationSeconds ?? 0), 0);
}

/** Whole seconds of a `"5s"` duration setting. */
export function secondsOf(duration: string): number {
  return Number.parseInt(duration, 10);
}

/** The output seconds of a `duration` setting (`"5s"`). */
export const OUTPUT_SECONDS: Quantity<{ duration: string }> = {
  text: 'output seconds (duration)',
  count: (s) => secondsOf(s.duration),
};

/**
 * Output seconds plus the input seconds of the files of `fields` (CONTRACT §5), at least
 * `minInputSeconds` of input.
 */
export function outputAndInputSeconds(
  fields: readonly string[],
  minInputSeconds = 0,
): Quantity<{ duration: string }> {
  const files = fields.length === 1 ? `each ${fields[0]} file` : `the ${fields.join(' and ')} files`;
  const least = minInputSeconds > 0 ? `, at least ${minInputSeconds} input second` : '';
  return {
    text: `(output seconds + seconds of ${files}, each rounded up to a whole second${least})`,
    count: (s, inputs) =>
      secondsOf(s.duration) + Math.max(minInputSeconds, inputSeconds(inputs.files, fields)),
  };
}

/**
 * Typical generation time of a video: reference "usually 5 to 10 minutes", 300 s for 2 s of video
 * growing linearly to 600 s for 30 s.
 */
export function videoWorkSeconds(seconds: number): number {
  const share = Math.min(Math.max((seconds - 2) / 28, 0), 1);
  return Math.round(300 + share * 300);
}

/** The plan of every video model: one H.264 MP4 of the given frame and length, seeded by caption and prompt. */
export function mp4Plan(input: {
  caption: string;
  prompt: string;
  size: FrameSize;
  seconds: number;
}): GenerationPlan {
  return {
    outputs: [
      {
        kind: 'video',
        format: 'mp4',
        filename: 'video.mp4',
        caption: '',
        seed: `${input.caption}\n${input.prompt}`,
        width: input.size.width,
        height: input.size.height,
        durationSeconds: input.seconds,
      },
    ],
    caption: input.caption,
    texts: [],
    workSeconds: videoWorkSeconds(input.seconds),
  };
}
