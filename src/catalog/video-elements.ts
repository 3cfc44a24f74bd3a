/**
 * Model `video-elements` (reference "Element library", CONTRACT §2): one mode; saved elements are
 * named in prompts by their label `Element_<id>`, own scenes (`multi_shot` + `shots`) on v3.0.
 */
import { z } from 'zod';
import { exampleRun } from './example.ts';
import { addRule, defineMode, type LibraryRef, type ModelSpec } from './model-spec.ts';
import { perUnit, rateBySetting, settingCount } from './price-rule.ts';
import { mp4Plan } from './video-common.ts';

const VERSIONS = ['v3.0', 'v4.0', 'v4.0-omni'] as const;

/**
 * `Element_<id>` label, separated from neighbours by a space or punctuation (reference). Decision: ids
 * are UUID-like, runs of ASCII letters and digits joined by single hyphens, so a trailing hyphen is
 * punctuation; a label glued to a letter, digit or underscore is not a label (not cut short either).
 */
const ELEMENT_LABEL =
  /(?<![\p{L}\p{N}_])Element_([A-Za-z0-9]+(?:-[A-Za-z0-9]+)*)(?![\p{L}\p{N}_]|-[A-Za-z0-9])/gu;

/** Ids of the element labels in a text, in order of appearance, without repeats. */
export function elementIds(text: string): string[] {
  return [...new Set(Array.from(text.matchAll(ELEMENT_LABEL), (m) => m[1] ?? ''))];
}

const shot = z.strictObject({
  prompt: z.string().min(1).max(512),
  duration: z.int().min(1),
});

const settings = z
  .strictObject({
    model_version: z.enum(VERSIONS).default('v3.0'),
    prompt: z.string().min(1).max(2500).optional(),
    length: z.int().min(3).max(15).default(5),
    multi_shot: z.boolean().default(false),
    shots: z.array(shot).min(2).max(6).optional(),
  })
  .superRefine((s, ctx) => {
    if (s.multi_shot) {
      // Reference: own scenes are for v3.0 and "the general prompt is not sent".
      if (s.model_version !== 'v3.0') {
        addRule(
          ctx,
          'multi_shot',
          `multi_shot (own scenes) works only with model_version v3.0, not ${s.model_version}`,
          `multi_shot (свои сцены) работает только с model_version v3.0, не ${s.model_version}`,
        );
      }
      if (s.prompt !== undefined) {
        addRule(
          ctx,
          'prompt',
          'prompt is not sent with multi_shot: write each scene in shots[].prompt',
          'prompt не передаётся при multi_shot: опишите каждую сцену в shots[].prompt',
        );
      }
      if (s.shots === undefined) {
        addRule(ctx, 'shots', 'shots is required with multi_shot', 'shots обязателен при multi_shot');
      } else {
        const sum = s.shots.reduce((total, item) => total + item.duration, 0);
        if (sum !== s.length) {
          addRule(
            ctx,
            'shots',
            `the durations of shots must sum to length ${s.length} (got ${sum})`,
            `сумма duration в shots должна равняться length ${s.length} (получено ${sum})`,
          );
        }
      }
    } else {
      if (s.prompt === undefined) {
        addRule(
          ctx,
          'prompt',
          'prompt is required unless multi_shot is true',
          'prompt обязателен, если multi_shot не true',
        );
      }
      if (s.shots !== undefined) {
        addRule(
          ctx,
          'shots',
          'shots works only with multi_shot true',
          'shots работает только при multi_shot true',
        );
      }
    }
    // Reference: elements work with v3.0 and v4.0-omni, "not with v4.0".
    if (s.model_version === 'v4.0') {
      for (const { field, text } of prompts(s)) {
        if (elementIds(text).length === 0) continue;
        addRule(
          ctx,
          field,
          `${field}: Element_<id> labels do not work with model_version v4.0 (use v3.0 or v4.0-omni)`,
          `${field}: метки Element_<id> не работают с model_version v4.0 (используйте v3.0 или v4.0-omni)`,
        );
      }
    }
  });

type Settings = z.output<typeof settings>;

/** Every prompt of the settings with its path: the general prompt and each scene's prompt. */
function prompts(s: Pick<Settings, 'prompt' | 'shots'>): { field: string; text: string }[] {
  const general = s.prompt === undefined ? [] : [{ field: 'prompt', text: s.prompt }];
  const scenes = (s.shots ?? []).map((item, i) => ({ field: `shots.${i}.prompt`, text: item.prompt }));
  return [...general, ...scenes];
}

/** Decision: a fixed 720p 16:9 frame; the reference shows no size or ratio setting for this model. */
const WIDTH = 1280;
const HEIGHT = 720;

export const videoElements: ModelSpec = {
  key: 'video-elements',
  kind: 'video',
  name: 'Video with saved elements',
  modeField: null,
  modes: [
    defineMode({
      name: 'default',
      schema: settings,
      references: (s): LibraryRef[] =>
        prompts(s).flatMap(({ field, text }) =>
          elementIds(text).map((id) => ({ library: 'elements', model: 'video-elements', id, field })),
        ),
      /** Per second of output at the version's rate (`second_v3.0` ...); elements are free (reference). */
      price: perUnit({
        rate: rateBySetting('second_', 'model_version', VERSIONS),
        units: settingCount('length'),
        notes: ['saved elements are free'],
      }),
      example: exampleRun({ prompt: 'a red kite over green hills' }),
      plan: (s) => {
        const scenes = s.multi_shot ? `, ${s.shots?.length ?? 0} shots` : '';
        const caption = `video-elements ${s.model_version}, ${s.length}s${scenes}`;
        const text = prompts(s)
          .map((p) => p.text)
          .join('\n');
        return mp4Plan({ caption, prompt: text, size: { width: WIDTH, height: HEIGHT }, seconds: s.length });
      },
    }),
  ],
};
