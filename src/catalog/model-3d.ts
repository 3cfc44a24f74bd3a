/**
 * Model `model-3d` (reference "3D generation", CONTRACT §2): modes text_to_model, image_to_model and
 * multiview_to_model chosen by `settings.task_type`.
 */
import { z } from 'zod';
import { exampleRun } from './example.ts';
import { MB, urlList } from './fields.ts';
import { addRule, defineMode, type GenerationPlan, type InputRule, type ModelSpec } from './model-spec.ts';
import {
  baseWithSurcharges,
  fixedRate,
  flagSurcharge,
  type PriceRule,
  type Surcharge,
} from './price-rule.ts';

/** CONTRACT §2: identifiers of the versions; the first is the default (reference "Versioning"). */
const VERSIONS = ['v3.1-20260211', 'v3.0-20250812', 'v2.5-20250123', 'P1-20260311'] as const;
type Version = (typeof VERSIONS)[number];
const V3: readonly Version[] = ['v3.1-20260211', 'v3.0-20250812'];
const V3_P1: readonly Version[] = [...V3, 'P1-20260311'];

/** Reference: JPEG or PNG, up to 20 MB each, one file per field. */
const PHOTO_RULE: InputRule = { formats: ['jpeg', 'png'], maxBytes: 20 * MB };

/** Parameters common to all three modes (reference table). `face_limit` unset means automatic. */
const common = {
  model_version: z.enum(VERSIONS).default('v3.1-20260211'),
  texture: z.boolean().default(true),
  pbr: z.boolean().default(true),
  texture_quality: z.enum(['standard', 'detailed']).default('standard'),
  geometry_quality: z.enum(['standard', 'detailed']).default('standard'),
  face_limit: z.int().min(48).max(2_000_000).optional(),
  auto_size: z.boolean().default(false),
  quad: z.boolean().default(false),
  smart_low_poly: z.boolean().default(false),
  generate_parts: z.boolean().default(false),
};

/** Settings of the image modes only (not settings of text_to_model: unknown_setting there). */
const imageOptions = {
  orientation: z.enum(['default', 'align_image']).default('default'),
  texture_alignment: z.enum(['original_image', 'geometry']).default('original_image'),
  enable_image_autofix: z.boolean().default(false),
};

type Settings3d = z.output<z.ZodObject<typeof common>> &
  Partial<z.output<z.ZodObject<typeof imageOptions>>> & { task_type: string };

/** "pbr: realistic materials; turns texture on too" (reference): the mesh is textured with either. */
function textured(s: Settings3d): boolean {
  return s.texture || s.pbr;
}

/** A setting value (`what`) that only some versions accept. */
interface VersionRule {
  field: string;
  what: string;
  on: (s: Settings3d) => boolean;
  versions: readonly Version[];
}

/** Options that exist only on some versions (reference table, CONTRACT §2). */
const VERSION_RULES: readonly VersionRule[] = [
  {
    field: 'texture_quality',
    what: 'texture_quality detailed',
    on: (s) => s.texture_quality === 'detailed',
    versions: V3_P1,
  },
  {
    field: 'geometry_quality',
    what: 'geometry_quality detailed',
    on: (s) => s.geometry_quality === 'detailed',
    versions: V3,
  },
  { field: 'auto_size', what: 'auto_size', on: (s) => s.auto_size, versions: V3_P1 },
  { field: 'quad', what: 'quad', on: (s) => s.quad, versions: V3 },
  { field: 'smart_low_poly', what: 'smart_low_poly', on: (s) => s.smart_low_poly, versions: V3 },
  { field: 'generate_parts', what: 'generate_parts', on: (s) => s.generate_parts, versions: V3 },
];

/** A narrower face_limit range that applies when `on` holds. */
interface FaceLimitRule {
  when: string;
  whenRu: string;
  on: (s: Settings3d) => boolean;
  min: number;
  max: number;
}

/** Narrower face_limit ranges (reference: "50 to 20000 for P1, 500 to 20000 for smart_low_poly"). */
const FACE_LIMIT_RULES: readonly FaceLimitRule[] = [
  {
    when: 'on model_version P1-20260311',
    whenRu: 'для model_version P1-20260311',
    on: (s) => s.model_version === 'P1-20260311',
    min: 50,
    max: 20000,
  },
  {
    when: 'with smart_low_poly',
    whenRu: 'со smart_low_poly',
    on: (s) => s.smart_low_poly,
    min: 500,
    max: 20000,
  },
];

/** Cross-field rules of every mode. */
function check3d(s: Settings3d, ctx: z.RefinementCtx): void {
  for (const rule of VERSION_RULES) {
    if (!rule.on(s) || rule.versions.includes(s.model_version)) continue;
    const list = rule.versions.join(', ');
    addRule(
      ctx,
      rule.field,
      `${rule.what} is available only on model_version ${list}, not on ${s.model_version}`,
      `${rule.what} доступен только для model_version ${list}, не для ${s.model_version}`,
    );
  }
  const faces = s.face_limit;
  for (const rule of FACE_LIMIT_RULES) {
    if (faces === undefined || !rule.on(s) || (faces >= rule.min && faces <= rule.max)) continue;
    addRule(
      ctx,
      'face_limit',
      `face_limit must be ${rule.min} to ${rule.max} ${rule.when}`,
      `face_limit должен быть от ${rule.min} до ${rule.max} ${rule.whenRu}`,
    );
  }
  // texture and pbr default to true, so generate_parts needs both set to false explicitly (reference).
  const clashes = (['texture', 'pbr', 'quad', 'smart_low_poly'] as const).filter((field) => s[field]);
  if (s.generate_parts && clashes.length > 0) {
    addRule(
      ctx,
      'generate_parts',
      `generate_parts cannot be combined with ${clashes.join(', ')} (texture and pbr default to true: set them to false)`,
      `generate_parts нельзя сочетать с ${clashes.join(', ')} (texture и pbr по умолчанию true: задайте false)`,
    );
  }
  // Decision: "only with texture" means the mesh is textured, i.e. texture or pbr is true.
  if (s.orientation === 'align_image' && !textured(s)) {
    addRule(
      ctx,
      'orientation',
      'orientation align_image works only with texture (texture or pbr true)',
      'orientation align_image работает только с текстурой (texture или pbr true)',
    );
  }
}

/**
 * Surcharges on the mode's base rate. The base (texture and pbr false, standard qualities, no extras)
 * is the reference minimum (CONTRACT §5); every option the reference says "costs more" adds a rate.
 * Detailed texture is charged only when the mesh is textured, since it changes nothing otherwise.
 */
const SURCHARGES: readonly Surcharge<Settings3d>[] = [
  { rate: 'texture', when: 'when texture or pbr is true', times: (s) => Number(textured(s)) },
  { rate: 'pbr', when: 'when pbr is true', times: (s) => Number(s.pbr) },
  {
    rate: 'texture_detailed',
    when: 'when the mesh is textured and texture_quality is detailed',
    times: (s) => Number(textured(s) && s.texture_quality === 'detailed'),
  },
  {
    rate: 'geometry_detailed',
    when: 'when geometry_quality is detailed',
    times: (s) => Number(s.geometry_quality === 'detailed'),
  },
  flagSurcharge('quad'),
  flagSurcharge('smart_low_poly'),
  flagSurcharge('generate_parts'),
  flagSurcharge('auto_size'),
];

/** Image modes only: the picture is fixed before modelling. */
const IMAGE_SURCHARGES: readonly Surcharge<Settings3d>[] = [
  ...SURCHARGES,
  {
    rate: 'image_autofix',
    when: 'when enable_image_autofix is true',
    times: (s) => Number(s.enable_image_autofix === true),
  },
];

/** Base rate named after the mode (`text_to_model` ...) plus the surcharges that apply. */
function price3d(
  mode: Settings3d['task_type'],
  surcharges: readonly Surcharge<Settings3d>[],
): PriceRule<Settings3d> {
  return baseWithSurcharges({ base: fixedRate(mode), surcharges });
}

/** Automatic face counts when face_limit is unset (the simulator's mesh budget). */
const AUTO_FACES = 10000;
const AUTO_FACES_LOW_POLY = 4000;
const PREVIEW_SIZE = 512;

/** Caption naming the model and its main settings. */
function caption3d(s: Settings3d): string {
  const surface = s.pbr ? 'texture+pbr' : s.texture ? 'texture' : 'shape only';
  const extras = [
    s.texture_quality === 'detailed' && textured(s) ? 'detailed texture' : '',
    s.geometry_quality === 'detailed' ? 'detailed geometry' : '',
    s.quad ? 'quad' : '',
    s.smart_low_poly ? 'smart low poly' : '',
    s.generate_parts ? 'parts' : '',
    s.auto_size ? 'auto size' : '',
  ].filter(Boolean);
  const faces = `face_limit ${s.face_limit ?? 'auto'}`;
  return `model-3d ${s.model_version} ${s.task_type}, ${[surface, ...extras, faces].join(', ')}`;
}

/**
 * Reference output: exactly one document (glb, or fbx when quad) and a png preview. "Several
 * minutes": 180 s, detailed geometry ("slower") 300 s.
 */
function plan3d(s: Settings3d, subject: string): GenerationPlan {
  const caption = caption3d(s);
  const format = s.quad ? 'fbx' : 'glb';
  const seed = `${caption}\n${subject}`;
  return {
    outputs: [
      {
        kind: 'document',
        format,
        filename: `model.${format}`,
        caption: '',
        seed,
        faceLimit: s.face_limit ?? (s.smart_low_poly ? AUTO_FACES_LOW_POLY : AUTO_FACES),
        textured: textured(s),
        pbr: s.pbr,
        parts: s.generate_parts,
      },
      {
        kind: 'image',
        format: 'png',
        filename: 'preview.png',
        // The reference's "0 or 1" preview: a run without one still delivers its mesh.
        optional: true,
        caption: '',
        seed,
        subject: 'mesh',
        width: PREVIEW_SIZE,
        height: PREVIEW_SIZE,
      },
    ],
    caption,
    texts: [],
    workSeconds: s.geometry_quality === 'detailed' ? 300 : 180,
  };
}

const textToModel = defineMode({
  name: 'text_to_model',
  schema: z
    .strictObject({
      task_type: z.literal('text_to_model'),
      ...common,
      prompt: z.string().min(1).max(1024),
      negative_prompt: z.string().max(255).optional(),
    })
    .superRefine(check3d),
  price: price3d('text_to_model', SURCHARGES),
  plan: (s) => plan3d(s, s.prompt),
  example: exampleRun({ task_type: 'text_to_model', prompt: 'a small wooden chair' }),
});

const imageToModel = defineMode({
  name: 'image_to_model',
  schema: z
    .strictObject({
      task_type: z.literal('image_to_model'),
      ...common,
      ...imageOptions,
      image_url: urlList(1).min(1),
    })
    .superRefine(check3d),
  inputRules: { image_url: PHOTO_RULE },
  price: price3d('image_to_model', IMAGE_SURCHARGES),
  plan: (s) => plan3d(s, s.image_url.join(' ')),
  example: exampleRun({ task_type: 'image_to_model' }, { image_url: ['png'] }),
});

const multiviewToModel = defineMode({
  name: 'multiview_to_model',
  schema: z
    .strictObject({
      task_type: z.literal('multiview_to_model'),
      ...common,
      ...imageOptions,
      front_url: urlList(1).min(1),
      left_url: urlList(1).optional(),
      back_url: urlList(1).optional(),
      right_url: urlList(1).optional(),
    })
    .superRefine(check3d),
  inputRules: { front_url: PHOTO_RULE, left_url: PHOTO_RULE, back_url: PHOTO_RULE, right_url: PHOTO_RULE },
  price: price3d('multiview_to_model', IMAGE_SURCHARGES),
  plan: (s) => plan3d(s, [s.front_url, s.left_url, s.back_url, s.right_url].flat().join(' ')),
  example: exampleRun({ task_type: 'multiview_to_model' }, { front_url: ['png'] }),
});

export const model3d: ModelSpec = {
  key: 'model-3d',
  kind: '3d',
  name: '3D model generator',
  modeField: 'task_type',
  modes: [textToModel, imageToModel, multiviewToModel],
};
