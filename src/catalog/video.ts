/**
 * Model `video` (reference "Video generation", CONTRACT §2): modes frames, reference and omni chosen
 * by `settings.mode`; `settings.model` is the version of the video model, `3_0` only.
 */
import { z } from 'zod';
import { exampleRun } from './example.ts';
import { MB, refusedSetting, urlList } from './fields.ts';
import { addRule, defineMode, type GenerationPlan, type InputRule, type ModelSpec } from './model-spec.ts';
import { perUnit, rateBySetting } from './price-rule.ts';
import {
  ASPECT_RATIOS,
  type AspectRatio,
  aspectFrameSize,
  type FrameSize,
  frameSize,
  mp4Plan,
  OUTPUT_SECONDS,
  outputAndInputSeconds,
  PICTURE_RULE,
  QUALITIES,
  type Quality,
  requireMentions,
  secondsOf,
} from './video-common.ts';

/** Version 3.0 takes 2 to 30 whole seconds (reference). */
const DURATIONS = Array.from({ length: 29 }, (_, i) => `${i + 2}s`) as [string, ...string[]];

/** CONTRACT §2: 480p and 720p allow all five ratios; 1080p only these. */
const RATIOS_1080P: readonly AspectRatio[] = ['16:9', '9:16', '1:1'];

const VIDEO_RULE: InputRule = { formats: ['mp4', 'mov'], maxBytes: 100 * MB };
const AUDIO_RULE: InputRule = { formats: ['mp3', 'wav'], maxBytes: 10 * MB };

/** Fields common to the three modes. */
const common = {
  model: z.enum(['3_0']).default('3_0'),
  quality: z.enum(QUALITIES).default('720p'),
  aspect_ratio: z.enum(ASPECT_RATIOS).default('16:9'),
  duration: z.enum(DURATIONS).default('5s'),
  prompt: z.string().min(1).max(20000),
};

interface Common {
  model: string;
  quality: Quality;
  aspect_ratio: AspectRatio;
  duration: string;
  prompt: string;
}

function checkCommon(s: Common, ctx: z.RefinementCtx): void {
  if (s.quality === '1080p' && !RATIOS_1080P.includes(s.aspect_ratio)) {
    addRule(
      ctx,
      'aspect_ratio',
      `aspect_ratio ${s.aspect_ratio} is not available at quality 1080p; allowed: ${RATIOS_1080P.join(', ')}`,
      `aspect_ratio ${s.aspect_ratio} недоступен при quality 1080p; допустимо: ${RATIOS_1080P.join(', ')}`,
    );
  }
}

/**
 * CONTRACT §2: settings the reference reserves for the older versions 2.6 and 2.7 are refused on 3_0
 * (they stay known settings, so the answer is invalid_settings, not unknown_setting).
 */
function olderVersionsOnly(ctx: z.RefinementCtx, field: string, what: string): void {
  addRule(
    ctx,
    field,
    `${what} works only on older model versions (2.6, 2.7); model 3_0 does not accept it`,
    `${what} работает только в старых версиях модели (2.6, 2.7); model 3_0 его не принимает`,
  );
}

/**
 * CONTRACT §2: `multi_shots` is accepted only as false on 3_0. The published schema says so (`const:
 * false`), while validation still takes any boolean so that true gets the clear message above.
 */
const multiShots = z
  .boolean()
  .default(false)
  .meta({ const: false, description: 'true only on older model versions, not on 3_0' });

/** Price per second of the chosen quality (`second_480p` ...), CONTRACT §5. */
const PER_SECOND = rateBySetting('second_', 'quality', QUALITIES);

function videoPlan(mode: string, s: Common, size: FrameSize, shape: string): GenerationPlan {
  const caption = `video ${s.model} ${mode}, ${s.quality} ${shape}, ${s.duration}`;
  return mp4Plan({ caption, prompt: s.prompt, size, seconds: secondsOf(s.duration) });
}

/** Plan whose frame follows quality × aspect_ratio. */
function aspectPlan(mode: string, s: Common): GenerationPlan {
  return videoPlan(mode, s, aspectFrameSize(s.quality, s.aspect_ratio), s.aspect_ratio);
}

const frames = defineMode({
  name: 'frames',
  schema: z
    .strictObject({
      mode: z.literal('frames'),
      ...common,
      /** Reference: one URL is the first frame, two are first and last; 3_0 needs at least one. */
      image_urls: urlList(2).min(1),
      multi_shots: multiShots,
      /** Older versions only: refused on 3_0, published as never valid (`not: {}`). */
      audio: refusedSetting(
        urlList(1).optional().describe('only on older model versions (2.6, 2.7), not on 3_0'),
      ),
    })
    .superRefine((s, ctx) => {
      checkCommon(s, ctx);
      if (s.multi_shots) olderVersionsOnly(ctx, 'multi_shots', 'multi_shots true');
      if (s.audio !== undefined) olderVersionsOnly(ctx, 'audio', 'audio');
    }),
  // `audio` is always refused on 3_0, so it needs no file rule.
  inputRules: { image_urls: PICTURE_RULE },
  price: perUnit({ rate: PER_SECOND, units: OUTPUT_SECONDS }),
  plan: (s) => aspectPlan('frames', s),
  example: exampleRun({ mode: 'frames', prompt: 'a paper boat on a stream' }, { image_urls: ['png'] }),
});

const reference = defineMode({
  name: 'reference',
  schema: z
    .strictObject({
      mode: z.literal('reference'),
      ...common,
      ref_image_urls: urlList(5).optional(),
      ref_video_urls: urlList(5).optional(),
      first_frame_url: urlList(1).optional(),
      multi_shots: multiShots,
    })
    .superRefine((s, ctx) => {
      // Reference: with first_frame_url "aspect_ratio has no effect", so no ratio is refused for it. An
      // empty list gives no frame: the ratio then shapes the video and is checked as without the field.
      if (!s.first_frame_url?.length) checkCommon(s, ctx);
      if (s.multi_shots) olderVersionsOnly(ctx, 'multi_shots', 'multi_shots true');
      const pictures = s.ref_image_urls?.length ?? 0;
      const videos = s.ref_video_urls?.length ?? 0;
      if (pictures + videos === 0) {
        addRule(
          ctx,
          'ref_image_urls',
          'ref_image_urls or ref_video_urls: at least one picture or video is needed',
          'ref_image_urls или ref_video_urls: нужна хотя бы одна картинка или видео',
        );
      }
      if (pictures + videos > 5) {
        addRule(
          ctx,
          'ref_video_urls',
          `ref_image_urls and ref_video_urls together take at most 5 files (got ${pictures + videos})`,
          `ref_image_urls и ref_video_urls вместе — не больше 5 файлов (получено ${pictures + videos})`,
        );
      }
      // first_frame_url has no label in the reference, so only pictures and videos must be mentioned.
      requireMentions(ctx, s.prompt, [
        { label: 'Image', field: 'ref_image_urls', urls: s.ref_image_urls },
        { label: 'Video', field: 'ref_video_urls', urls: s.ref_video_urls },
      ]);
    }),
  inputRules: {
    ref_image_urls: PICTURE_RULE,
    ref_video_urls: { ...VIDEO_RULE, minSeconds: 1, maxSeconds: 5 },
    first_frame_url: PICTURE_RULE,
  },
  price: perUnit({ rate: PER_SECOND, units: outputAndInputSeconds(['ref_video_urls']) }),
  /** Reference: with first_frame_url "the video takes its shape and aspect_ratio has no effect". */
  plan: (s, inputs) => {
    const first = inputs.files.find((f) => f.field === 'first_frame_url');
    if (s.first_frame_url === undefined || !first?.width || !first.height) return aspectPlan('reference', s);
    return videoPlan('reference', s, frameSize(s.quality, first.width, first.height), 'first frame shape');
  },
  example: exampleRun({ mode: 'reference', prompt: 'the cat of @Image1 jumps' }, { ref_image_urls: ['png'] }),
});

const omni = defineMode({
  name: 'omni',
  schema: z
    .strictObject({
      mode: z.literal('omni'),
      ...common,
      ref_image_urls: urlList(10).optional(),
      ref_video_urls: urlList(5).optional(),
      ref_audio_urls: urlList(5).optional(),
    })
    .superRefine((s, ctx) => {
      checkCommon(s, ctx);
      const lists = [
        { label: 'Image', field: 'ref_image_urls', urls: s.ref_image_urls },
        { label: 'Video', field: 'ref_video_urls', urls: s.ref_video_urls },
        { label: 'Audio', field: 'ref_audio_urls', urls: s.ref_audio_urls },
      ] as const;
      if (lists.every((list) => (list.urls?.length ?? 0) === 0)) {
        addRule(
          ctx,
          'ref_image_urls',
          'ref_image_urls, ref_video_urls or ref_audio_urls: at least one attachment is needed',
          'ref_image_urls, ref_video_urls или ref_audio_urls: нужно хотя бы одно вложение',
        );
      }
      requireMentions(ctx, s.prompt, lists);
    }),
  inputRules: {
    ref_image_urls: PICTURE_RULE,
    ref_video_urls: { ...VIDEO_RULE, minSeconds: 1, maxSeconds: 15, maxTotalSeconds: 15 },
    ref_audio_urls: { ...AUDIO_RULE, minSeconds: 1, maxSeconds: 15, maxTotalSeconds: 15 },
  },
  price: perUnit({ rate: PER_SECOND, units: outputAndInputSeconds(['ref_video_urls', 'ref_audio_urls'], 1) }),
  plan: (s) => aspectPlan('omni', s),
  example: exampleRun({ mode: 'omni', prompt: 'continue @Video1 at night' }, { ref_video_urls: ['mp4', 1] }),
});

export const video: ModelSpec = {
  key: 'video',
  kind: 'video',
  name: 'Video 3.0 (frames, reference, omni)',
  modeField: 'mode',
  modes: [frames, reference, omni],
};
