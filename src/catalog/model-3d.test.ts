import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { model3d } from './model-3d.ts';
import type { GenerationPlan, MeshOutput, ModeInputs } from './model-spec.ts';
import rates from './prices/model-3d.json' with { type: 'json' };
import { bad, type Case, ok, type Settings, settingsCases, unknown } from './settings-cases.ts';

const URL = 'https://example.com/chair.png';
const text = { task_type: 'text_to_model', prompt: 'a red chair' };
const image = { task_type: 'image_to_model', image_url: [URL] };
const views = { task_type: 'multiview_to_model', front_url: [URL] };
const bare = { texture: false, pbr: false };
const P1 = { model_version: 'P1-20260311' };
const V25 = { model_version: 'v2.5-20250123' };
const V30 = { model_version: 'v3.0-20250812' };
const NO_INPUTS: ModeInputs = { files: [] };

const cases: Case[] = [
  ['task_type required', { prompt: 'x' }, bad('task_type')],
  ['task_type must be a mode', { ...text, task_type: 'sketch' }, bad('task_type')],
  ...['v3.1-20260211', 'v3.0-20250812', 'v2.5-20250123', 'P1-20260311'].map(
    (v): Case => [`model_version ${v}`, { ...text, model_version: v }, ok],
  ),
  ['model_version unknown', { ...text, model_version: 'v4' }, bad('model_version')],
  ['prompt 1 char', { ...text, prompt: 'x' }, ok],
  ['prompt 1024 chars', { ...text, prompt: 'x'.repeat(1024) }, ok],
  ['prompt empty', { ...text, prompt: '' }, bad('prompt')],
  ['prompt 1025 chars', { ...text, prompt: 'x'.repeat(1025) }, bad('prompt')],
  ['prompt required', { task_type: 'text_to_model' }, bad('prompt')],
  ['prompt not in image_to_model', { ...image, prompt: 'x' }, unknown('prompt')],
  ['negative_prompt 255', { ...text, negative_prompt: 'x'.repeat(255) }, ok],
  ['negative_prompt 256', { ...text, negative_prompt: 'x'.repeat(256) }, bad('negative_prompt')],
  ['texture boolean', { ...text, texture: 'yes' }, bad('texture')],
  ['pbr boolean', { ...text, pbr: 1 }, bad('pbr')],
  ['texture_quality detailed v3.1', { ...text, texture_quality: 'detailed' }, ok],
  ['texture_quality detailed v3.0', { ...text, ...V30, texture_quality: 'detailed' }, ok],
  ['texture_quality detailed P1', { ...text, ...P1, texture_quality: 'detailed' }, ok],
  ['texture_quality detailed v2.5', { ...text, ...V25, texture_quality: 'detailed' }, bad('texture_quality')],
  ['texture_quality standard v2.5', { ...text, ...V25, texture_quality: 'standard' }, ok],
  ['texture_quality value', { ...text, texture_quality: 'ultra' }, bad('texture_quality')],
  ['geometry_quality detailed v3.0', { ...text, ...V30, geometry_quality: 'detailed' }, ok],
  ['geometry_quality detailed P1', { ...text, ...P1, geometry_quality: 'detailed' }, bad('geometry_quality')],
  [
    'geometry_quality detailed v2.5',
    { ...text, ...V25, geometry_quality: 'detailed' },
    bad('geometry_quality'),
  ],
  ['face_limit 48', { ...text, face_limit: 48 }, ok],
  ['face_limit 2000000', { ...text, face_limit: 2_000_000 }, ok],
  ['face_limit 47', { ...text, face_limit: 47 }, bad('face_limit')],
  ['face_limit 2000001', { ...text, face_limit: 2_000_001 }, bad('face_limit')],
  ['face_limit integer', { ...text, face_limit: 100.5 }, bad('face_limit')],
  ['face_limit P1 50', { ...text, ...P1, face_limit: 50 }, ok],
  ['face_limit P1 20000', { ...text, ...P1, face_limit: 20000 }, ok],
  ['face_limit P1 49', { ...text, ...P1, face_limit: 49 }, bad('face_limit')],
  ['face_limit P1 20001', { ...text, ...P1, face_limit: 20001 }, bad('face_limit')],
  ['face_limit smart_low_poly 500', { ...text, smart_low_poly: true, face_limit: 500 }, ok],
  ['face_limit smart_low_poly 20000', { ...text, smart_low_poly: true, face_limit: 20000 }, ok],
  ['face_limit smart_low_poly 499', { ...text, smart_low_poly: true, face_limit: 499 }, bad('face_limit')],
  [
    'face_limit smart_low_poly 20001',
    { ...text, smart_low_poly: true, face_limit: 20001 },
    bad('face_limit'),
  ],
  ['auto_size v3.0', { ...text, ...V30, auto_size: true }, ok],
  ['auto_size P1', { ...text, ...P1, auto_size: true }, ok],
  ['auto_size v2.5', { ...text, ...V25, auto_size: true }, bad('auto_size')],
  ['orientation not in text_to_model', { ...text, orientation: 'default' }, unknown('orientation')],
  ['orientation align_image (image)', { ...image, orientation: 'align_image' }, ok],
  ['orientation align_image (views)', { ...views, orientation: 'align_image' }, ok],
  ['orientation align_image, pbr only', { ...image, texture: false, orientation: 'align_image' }, ok],
  [
    'orientation align_image untextured',
    { ...image, ...bare, orientation: 'align_image' },
    bad('orientation'),
  ],
  ['orientation default untextured', { ...image, ...bare, orientation: 'default' }, ok],
  ['orientation value', { ...image, orientation: 'up' }, bad('orientation')],
  ['quad v3.0', { ...text, ...V30, quad: true }, ok],
  ['quad P1', { ...text, ...P1, quad: true }, bad('quad')],
  ['quad v2.5', { ...text, ...V25, quad: true }, bad('quad')],
  ['smart_low_poly v3.1', { ...text, smart_low_poly: true }, ok],
  ['smart_low_poly P1', { ...text, ...P1, smart_low_poly: true }, bad('smart_low_poly')],
  ['generate_parts untextured v3.1', { ...text, ...bare, generate_parts: true }, ok],
  ['generate_parts untextured v3.0', { ...text, ...bare, ...V30, generate_parts: true }, ok],
  ['generate_parts with default texture', { ...text, generate_parts: true }, bad('generate_parts')],
  ['generate_parts with pbr', { ...text, texture: false, generate_parts: true }, bad('generate_parts')],
  ['generate_parts with quad', { ...text, ...bare, quad: true, generate_parts: true }, bad('generate_parts')],
  [
    'generate_parts with smart_low_poly',
    { ...text, ...bare, smart_low_poly: true, generate_parts: true },
    bad('generate_parts'),
  ],
  ['generate_parts P1', { ...text, ...bare, ...P1, generate_parts: true }, bad('generate_parts')],
  ['texture_alignment geometry', { ...views, texture_alignment: 'geometry' }, ok],
  ['texture_alignment value', { ...image, texture_alignment: 'mesh' }, bad('texture_alignment')],
  ['texture_alignment not in text', { ...text, texture_alignment: 'geometry' }, unknown('texture_alignment')],
  ['enable_image_autofix image', { ...image, enable_image_autofix: true }, ok],
  [
    'enable_image_autofix not in text',
    { ...text, enable_image_autofix: true },
    unknown('enable_image_autofix'),
  ],
  ['image_url required', { task_type: 'image_to_model' }, bad('image_url')],
  ['image_url empty list', { ...image, image_url: [] }, bad('image_url')],
  ['image_url max 1', { ...image, image_url: [URL, URL] }, bad('image_url')],
  ['image_url is a list', { ...image, image_url: URL }, bad('image_url')],
  ['image_url uri form', { ...image, image_url: ['chair.png'] }, bad('image_url.0')],
  ['image_url http(s) only', { ...image, image_url: ['ftp://example.com/a.png'] }, bad('image_url.0')],
  ['image_url own upload link', { ...image, image_url: ['http://127.0.0.1:8080/f/x'] }, ok],
  ['front_url required', { task_type: 'multiview_to_model' }, bad('front_url')],
  ['all four views', { ...views, left_url: [URL], back_url: [URL], right_url: [URL] }, ok],
  ['back_url max 1', { ...views, back_url: [URL, URL] }, bad('back_url')],
  ['image_url not in multiview', { ...views, image_url: [URL] }, unknown('image_url')],
  ['unknown setting', { ...text, style: 'cartoon' }, unknown('style')],
];

const suite = settingsCases(model3d);

suite.describe('model-3d settings', cases, () => {
  suite.itFillsInDefaults(image, {
    ...image,
    model_version: 'v3.1-20260211',
    texture: true,
    pbr: true,
    texture_quality: 'standard',
    geometry_quality: 'standard',
    auto_size: false,
    quad: false,
    smart_low_poly: false,
    generate_parts: false,
    orientation: 'default',
    texture_alignment: 'original_image',
    enable_image_autofix: false,
  });
  suite.itPublishesJsonSchemas();

  it('checks every URL field as a JPEG or PNG up to 20 MB', () => {
    const fields = model3d.modes.flatMap((m) => Object.entries(m.inputRules ?? {}));
    assert.deepEqual(fields.map(([field]) => field).sort(), [
      'back_url',
      'front_url',
      'image_url',
      'left_url',
      'right_url',
    ]);
    for (const [, rule] of fields)
      assert.deepEqual(rule, { formats: ['jpeg', 'png'], maxBytes: 20 * 1024 * 1024 });
  });
});

/** Validates settings that must be accepted and returns their price, plan and mesh output. */
function accepted(settings: Settings): {
  price: number;
  plan: GenerationPlan;
  mesh: MeshOutput;
} {
  const result = suite.accept(settings);
  const plan = result.mode.plan(result.settings, NO_INPUTS);
  const mesh = plan.outputs.find((o) => o.kind === 'document');
  assert.ok(mesh);
  return { price: result.mode.price(result.settings, NO_INPUTS, rates), mesh, plan };
}

describe('model-3d price', () => {
  it('reproduces the reference minimums (texture and pbr off, standard, no extras)', () => {
    assert.equal(accepted({ ...text, ...bare }).price, 1500);
    assert.equal(accepted({ ...image, ...bare }).price, 2900);
    assert.equal(accepted({ ...views, ...bare }).price, 2900);
  });

  const extras: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ['texture', { ...text, ...bare }, { ...text, pbr: false }],
    ['pbr', { ...text, pbr: false }, { ...text }],
    ['pbr alone turns texture on', { ...text, ...bare }, { ...text, texture: false }],
    ['detailed texture', { ...text }, { ...text, texture_quality: 'detailed' }],
    ['detailed geometry', { ...text, ...bare }, { ...text, ...bare, geometry_quality: 'detailed' }],
    ['quad', { ...text, ...bare }, { ...text, ...bare, quad: true }],
    ['smart_low_poly', { ...text, ...bare }, { ...text, ...bare, smart_low_poly: true }],
    ['generate_parts', { ...text, ...bare }, { ...text, ...bare, generate_parts: true }],
    ['auto_size', { ...text, ...bare }, { ...text, ...bare, auto_size: true }],
    ['image autofix', { ...image, ...bare }, { ...image, ...bare, enable_image_autofix: true }],
  ];
  for (const [name, base, more] of extras) {
    it(`${name} costs more`, () => assert.ok(accepted(more).price > accepted(base).price));
  }

  it('all price rates are whole kopecks', () => {
    for (const value of Object.values(rates)) assert.ok(Number.isInteger(value) && value > 0);
  });
});

describe('model-3d plan', () => {
  it('makes one GLB and one PNG preview by default', () => {
    const { plan, mesh } = accepted(text);
    assert.deepEqual(
      plan.outputs.map((o) => [o.kind, o.format, o.filename]),
      [
        ['document', 'glb', 'model.glb'],
        ['image', 'png', 'preview.png'],
      ],
    );
    assert.equal(mesh.textured, true);
    assert.equal(mesh.pbr, true);
    assert.equal(mesh.parts, false);
    assert.equal(mesh.faceLimit, 10000);
    assert.equal(plan.caption, 'model-3d v3.1-20260211 text_to_model, texture+pbr, face_limit auto');
    assert.deepEqual(plan.texts, []);
    assert.ok(plan.workSeconds >= 120 && plan.workSeconds <= 600);
  });

  it('makes an FBX with quad', () => {
    const { mesh } = accepted({ ...text, quad: true });
    assert.equal(mesh.format, 'fbx');
    assert.equal(mesh.filename, 'model.fbx');
  });

  it('follows face_limit, textures and parts', () => {
    assert.equal(accepted({ ...text, face_limit: 3000 }).mesh.faceLimit, 3000);
    assert.ok(accepted({ ...text, smart_low_poly: true }).mesh.faceLimit <= 20000);
    const parts = accepted({ ...text, ...bare, generate_parts: true }).mesh;
    assert.deepEqual([parts.textured, parts.pbr, parts.parts], [false, false, true]);
    assert.equal(accepted({ ...text, texture: false }).mesh.textured, true);
  });

  it('preview is a PNG image with a size', () => {
    const preview = accepted(views).plan.outputs.find((o) => o.kind === 'image');
    assert.ok(preview?.kind === 'image' && preview.width > 0 && preview.height > 0);
    assert.equal(preview.subject, 'mesh', 'the preview shows the planned mesh');
  });

  it('different settings give different seeds', () => {
    assert.notEqual(accepted(text).mesh.seed, accepted({ ...text, prompt: 'a blue chair' }).mesh.seed);
  });
});
