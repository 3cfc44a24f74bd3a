import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GenerationPlan, LibraryRef } from './model-spec.ts';
import rates from './prices/video-elements.json' with { type: 'json' };
import { bad, type Case, ok, type Settings, settingsCases, unknown } from './settings-cases.ts';
import { elementIds, videoElements } from './video-elements.ts';

const ID = '3f2b8c1e-9a4d-4c6b-8e2f-1a2b3c4d5e6f';
const ID2 = '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9';
const base = { prompt: 'a cat in the rain' };
const shots = (...durations: number[]): { prompt: string; duration: number }[] =>
  durations.map((duration, i) => ({ prompt: `scene ${i + 1}`, duration }));
const scenes = { multi_shot: true, shots: shots(2, 3) };

const cases: Case[] = [
  ...['v3.0', 'v4.0', 'v4.0-omni'].map(
    (v): Case => [`model_version ${v}`, { ...base, model_version: v }, ok],
  ),
  ['model_version value', { ...base, model_version: 'v5' }, bad('model_version')],
  ['prompt 2500', { prompt: 'x'.repeat(2500) }, ok],
  ['prompt 2501', { prompt: 'x'.repeat(2501) }, bad('prompt')],
  ['prompt empty', { prompt: '' }, bad('prompt')],
  ['prompt required without multi_shot', {}, bad('prompt')],
  ['prompt not sent with multi_shot', { ...base, ...scenes }, bad('prompt')],
  ['length 3', { ...base, length: 3 }, ok],
  ['length 15', { ...base, length: 15 }, ok],
  ['length 2', { ...base, length: 2 }, bad('length')],
  ['length 16', { ...base, length: 16 }, bad('length')],
  ['length integer', { ...base, length: 5.5 }, bad('length')],
  ['multi_shot with shots summing to length', { ...scenes }, ok],
  ['multi_shot 6 shots', { multi_shot: true, length: 12, shots: shots(2, 2, 2, 2, 2, 2) }, ok],
  ['multi_shot needs shots', { multi_shot: true }, bad('shots')],
  ['shots at least 2', { multi_shot: true, shots: shots(5) }, bad('shots')],
  ['shots at most 6', { multi_shot: true, length: 14, shots: shots(2, 2, 2, 2, 2, 2, 2) }, bad('shots')],
  ['shots sum must equal length', { multi_shot: true, length: 6, shots: shots(2, 3) }, bad('shots')],
  [
    'shot duration integer',
    {
      multi_shot: true,
      shots: [
        { prompt: 'a', duration: 2.5 },
        { prompt: 'b', duration: 2.5 },
      ],
    },
    bad('shots.0.duration'),
  ],
  ['shot duration at least 1', { multi_shot: true, shots: shots(0, 5) }, bad('shots.0.duration')],
  [
    'shot prompt 512',
    {
      multi_shot: true,
      shots: [
        { prompt: 'x'.repeat(512), duration: 4 },
        { prompt: 'y', duration: 1 },
      ],
    },
    ok,
  ],
  [
    'shot prompt 513',
    {
      multi_shot: true,
      shots: [
        { prompt: 'x'.repeat(513), duration: 2 },
        { prompt: 'y', duration: 3 },
      ],
    },
    bad('shots.0.prompt'),
  ],
  [
    'shot prompt empty',
    {
      multi_shot: true,
      shots: [
        { prompt: '', duration: 2 },
        { prompt: 'y', duration: 3 },
      ],
    },
    bad('shots.0.prompt'),
  ],
  [
    'shot unknown key',
    {
      multi_shot: true,
      shots: [
        { prompt: 'a', duration: 2, camera: 'pan' },
        { prompt: 'b', duration: 3 },
      ],
    },
    unknown('shots.0.camera'),
  ],
  ['shots without multi_shot', { ...base, shots: shots(2, 3) }, bad('shots')],
  ['multi_shot on v4.0', { ...scenes, model_version: 'v4.0' }, bad('multi_shot')],
  ['multi_shot on v4.0-omni', { ...scenes, model_version: 'v4.0-omni' }, bad('multi_shot')],
  ['multi_shot false with prompt', { ...base, multi_shot: false }, ok],
  ['element on v3.0', { prompt: `Element_${ID} runs` }, ok],
  ['element on v4.0-omni', { prompt: `Element_${ID} runs`, model_version: 'v4.0-omni' }, ok],
  ['element on v4.0', { prompt: `Element_${ID} runs`, model_version: 'v4.0' }, bad('prompt')],
  [
    'element in a shot on v3.0',
    {
      multi_shot: true,
      shots: [
        { prompt: `Element_${ID}`, duration: 4 },
        { prompt: 'b', duration: 1 },
      ],
    },
    ok,
  ],
  [
    'element in a shot on v4.0',
    {
      model_version: 'v4.0',
      multi_shot: true,
      shots: [
        { prompt: 'a', duration: 4 },
        { prompt: `Element_${ID}`, duration: 1 },
      ],
    },
    bad('shots.1.prompt'),
  ],
  ['no element on v4.0', { prompt: 'Element_ alone; MyElement_x', model_version: 'v4.0' }, ok],
  ['unknown setting', { ...base, aspect_ratio: '16:9' }, unknown('aspect_ratio')],
];

const suite = settingsCases(videoElements);

suite.describe('video-elements settings', cases, () => {
  suite.itFillsInDefaults(base, { ...base, model_version: 'v3.0', length: 5, multi_shot: false });
  suite.itPublishesJsonSchemas();
});

describe('video-elements labels', () => {
  const found: [string, string[]][] = [
    [`Element_${ID}`, [ID]],
    [`(Element_${ID}), then Element_${ID2}.`, [ID, ID2]],
    [`Element_${ID} and Element_${ID} again`, [ID]],
    [`Element_${ID}-`, [ID]],
    ['Element_abc!', ['abc']],
    [`xElement_${ID}`, []],
    [`Element_${ID}x_`, []],
    [`Element_${ID}_`, []],
    ['element_abc', []],
    ['Element_ abc', []],
  ];
  for (const [text, ids] of found) {
    it(`finds ${JSON.stringify(ids)} in ${JSON.stringify(text)}`, () =>
      assert.deepEqual(elementIds(text), ids));
  }

  it('references every element of the prompt and of the shots', () => {
    const settings = {
      multi_shot: true,
      shots: [
        { prompt: `Element_${ID} walks`, duration: 2 },
        { prompt: `Element_${ID2} meets Element_${ID}`, duration: 3 },
      ],
    };
    const result = suite.accept(settings);
    const refs: LibraryRef[] = result.mode.references?.(result.settings) ?? [];
    const ref = (id: string, field: string): LibraryRef => ({
      library: 'elements',
      model: 'video-elements',
      id,
      field,
    });
    assert.deepEqual(refs, [
      ref(ID, 'shots.0.prompt'),
      ref(ID2, 'shots.1.prompt'),
      ref(ID, 'shots.1.prompt'),
    ]);
    const single = suite.accept({ prompt: `Element_${ID}` });
    assert.deepEqual(single.mode.references?.(single.settings), [ref(ID, 'prompt')]);
  });
});

function run(settings: Settings): { price: number; plan: GenerationPlan } {
  const result = suite.accept(settings);
  return {
    price: result.mode.price(result.settings, { files: [] }, rates),
    plan: result.mode.plan(result.settings, { files: [] }),
  };
}

describe('video-elements price and plan', () => {
  it('charges per second of length at the version rate; elements are free', () => {
    assert.equal(run(base).price, 5 * rates['second_v3.0']);
    assert.ok(run({ ...base, length: 6 }).price > run(base).price);
    assert.equal(run({ prompt: `Element_${ID}` }).price, run(base).price);
    assert.equal(run({ ...base, model_version: 'v4.0-omni' }).price, 5 * rates['second_v4.0-omni']);
  });

  it('makes one 1280×720 mp4 of the given length', () => {
    const { plan } = run({ multi_shot: true, length: 7, shots: shots(3, 4) });
    assert.equal(plan.outputs.length, 1);
    const [out] = plan.outputs;
    assert.ok(out?.kind === 'video');
    assert.deepEqual([out.format, out.width, out.height, out.durationSeconds], ['mp4', 1280, 720, 7]);
    assert.equal(plan.caption, 'video-elements v3.0, 7s, 2 shots');
    assert.ok(plan.workSeconds >= 300 && plan.workSeconds <= 600);
  });
});
