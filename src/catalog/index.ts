import { image } from './image.ts';
import { model3d } from './model-3d.ts';
import type { ModelSpec } from './model-spec.ts';
import { music } from './music.ts';
import { musicStyles } from './music-styles.ts';
import { video } from './video.ts';
import { videoElements } from './video-elements.ts';
import { videoOmni } from './video-omni.ts';
import { voice } from './voice.ts';

export type { ExampleFile, ModeExample } from './example.ts';
export { DECIMAL_STEP, portableSteps, settingsJsonSchema, stepOf } from './fields.ts';
export * from './model-spec.ts';
export type { PriceRule } from './price-rule.ts';
export { loadPriceTable, type PriceTable, priceOf } from './prices.ts';
export { type SettingsResult, validateSettings, violationsOf } from './validate.ts';
export { elementIds } from './video-elements.ts';

/** Every model the service offers, in the order GET /v1/models lists them (CONTRACT §2). */
export const MODELS: readonly ModelSpec[] = [
  model3d,
  video,
  music,
  videoElements,
  voice,
  image,
  musicStyles,
  videoOmni,
];

const byKey = new Map(MODELS.map((m) => [m.key, m]));

export function findModel(key: string): ModelSpec | undefined {
  return byKey.get(key);
}
export {
  type AudioOutput,
  addRule,
  type ImageOutput,
  type LibraryRef,
  type MediaFormat,
  type MeshOutput,
  type OutputPlan,
  type VideoOutput,
} from './model-spec.ts';
export { firstChars, slug } from './music-common.ts';
