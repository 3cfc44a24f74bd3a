/**
 * `docs/models.md` is generated from the catalog and must stay so, prices included (each mode's price
 * rule describes itself); the reference's indicative minimum prices ("What the service does", item 7)
 * are reproduced by the price table with minimal settings.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { MODELS_DOC_PATH, REGENERATE_COMMAND, renderModelsDoc } from '../scripts/models-doc.ts';
import {
  findModel,
  type InputFile,
  loadPriceTable,
  type MediaFormat,
  MODELS,
  priceOf,
  settingsJsonSchema,
  validateSettings,
} from '../src/catalog/index.ts';

/** The first line where two texts differ, for the failure message. */
function firstDifference(actual: string, expected: string): string {
  const a = actual.split('\n');
  const b = expected.split('\n');
  const line = a.findIndex((text, i) => text !== b[i]);
  const at = line === -1 ? a.length : line;
  return `line ${at + 1}:\n  committed: ${a[at] ?? '(end of file)'}\n  generated: ${b[at] ?? '(end of file)'}`;
}

describe('docs/models.md', () => {
  test('equals renderModelsDoc() (generated from the catalog)', () => {
    const committed = fs.existsSync(MODELS_DOC_PATH) ? fs.readFileSync(MODELS_DOC_PATH, 'utf8') : '';
    const generated = renderModelsDoc();
    assert.ok(
      committed === generated,
      `docs/models.md is out of date with src/catalog/; regenerate it with \`${REGENERATE_COMMAND}\`\n` +
        `first difference at ${firstDifference(committed, generated)}`,
    );
  });

  test("every mode's price text is its price rule's own description, naming only rates of its table", () => {
    const doc = renderModelsDoc();
    const table = loadPriceTable(MODELS);
    for (const model of MODELS) {
      for (const mode of model.modes) {
        assert.ok(doc.includes(`#### Price\n\n${mode.priceDescription}\n`), `${model.key} / ${mode.name}`);
        for (const rate of mode.priceRates)
          assert.ok(rate in (table[model.key] ?? {}), `${model.key}: ${rate}`);
      }
    }
  });

  test('shows a setting the published schema refuses (`not: {}`) as refused, never with a range', () => {
    const doc = renderModelsDoc();
    for (const model of MODELS) {
      const modelPart = doc.split(`\n## \`${model.key}\`: `)[1]?.split('\n## ')[0] ?? '';
      for (const mode of model.modes) {
        const title = model.modeField === null ? '### Settings' : `### Mode \`${mode.name}\``;
        const section = modelPart.split(`${title}\n`)[1]?.split('\n### ')[0] ?? '';
        const schema = settingsJsonSchema(mode.schema) as {
          properties?: Record<string, { not?: unknown }>;
          oneOf?: Array<{ properties?: Record<string, { not?: unknown }> }>;
        };
        for (const variant of schema.oneOf ?? [schema]) {
          for (const [name, field] of Object.entries(variant.properties ?? {})) {
            if (field.not === undefined) continue;
            const rows = section.split('\n').filter((line) => line.startsWith(`| \`${name}\` |`));
            assert.ok(
              rows.some((row) => row.startsWith(`| \`${name}\` | — | never `)),
              `${model.key} / ${mode.name}: ${name} is refused by the API; the doc says ${rows.join(' / ')}`,
            );
          }
        }
      }
    }
  });

  test('documents every model and every mode', () => {
    const doc = renderModelsDoc();
    for (const model of MODELS) {
      assert.ok(doc.includes(`## \`${model.key}\`: ${model.name}`), model.key);
      for (const mode of model.modes) {
        if (model.modeField !== null) assert.ok(doc.includes(`### Mode \`${mode.name}\``), mode.name);
      }
    }
  });
});

/** A probed input file of `seconds` (audio and video) for the first URL of `field`. */
function file(field: string, format: MediaFormat, seconds?: number): InputFile {
  return {
    field,
    position: 0,
    url: `https://example.com/${field}.${format}`,
    format,
    sizeBytes: 1_000_000,
    ...(seconds === undefined ? {} : { durationSeconds: seconds }),
  };
}

interface Minimum {
  /** Name used in the reference (item 7). */
  name: string;
  model: string;
  settings: Record<string, unknown>;
  files?: InputFile[];
  /** Indicative minimum of the reference, whole RUB. */
  rub: number;
}

const PHOTO = ['https://example.com/photo.png'];
const SONG = ['https://example.com/song.mp3'];
/** CONTRACT §5: 3D minimum = texture and pbr false, standard qualities, no extras. */
const BARE_3D = { texture: false, pbr: false };
/** CONTRACT §5: video minimums are 2 s at 480p. */
const CHEAPEST_VIDEO = { quality: '480p', duration: '2s' };

const MINIMUMS_3D_VIDEO: readonly Minimum[] = [
  {
    name: '3D text',
    model: 'model-3d',
    settings: { task_type: 'text_to_model', prompt: 'a chair', ...BARE_3D },
    rub: 15,
  },
  {
    name: '3D photo',
    model: 'model-3d',
    settings: { task_type: 'image_to_model', image_url: PHOTO, ...BARE_3D },
    files: [file('image_url', 'png')],
    rub: 29,
  },
  {
    name: '3D views',
    model: 'model-3d',
    settings: { task_type: 'multiview_to_model', front_url: PHOTO, ...BARE_3D },
    files: [file('front_url', 'png')],
    rub: 29,
  },
  {
    name: 'video frames',
    model: 'video',
    settings: { mode: 'frames', prompt: 'a boat', image_urls: PHOTO, ...CHEAPEST_VIDEO },
    files: [file('image_urls', 'png')],
    rub: 16,
  },
  {
    name: 'video reference',
    model: 'video',
    settings: { mode: 'reference', prompt: 'the cat of @Image1', ref_image_urls: PHOTO, ...CHEAPEST_VIDEO },
    files: [file('ref_image_urls', 'png')],
    rub: 16,
  },
  {
    name: 'video omni (with a 1 s file)',
    model: 'video',
    settings: {
      mode: 'omni',
      prompt: 'continue @Video1',
      ref_video_urls: ['https://example.com/clip.mp4'],
      ...CHEAPEST_VIDEO,
    },
    files: [file('ref_video_urls', 'mp4', 1)],
    rub: 24,
  },
];

const LYRICS = '[Verse]\nMorning light';

/** A music minimum on one music model value (V6, V6_MINI, V6_WILD). */
function music(
  model: string,
  name: string,
  settings: Record<string, unknown>,
  rub: number,
  files?: InputFile[],
): Minimum {
  return {
    name: `music ${name} on ${model}`,
    model: 'music',
    settings: { ...settings, model },
    rub,
    ...(files === undefined ? {} : { files }),
  };
}

/** Music minimums (reference item 7), for one music model value. */
function musicMinimums(model: string): Minimum[] {
  return [
    music(model, 'generate', { mode: 'generate', songDescription: 'a song about a cat' }, 12),
    music(model, 'sounds', { mode: 'sounds', soundDescription: 'rain' }, 3),
    music(
      model,
      'add_vocals',
      { mode: 'add_vocals', audio: SONG, title: 'T', style: 'folk', prompt: LYRICS, negativeTags: 'metal' },
      12,
      [file('audio', 'mp3', 90)],
    ),
    music(
      model,
      'add_instrumental',
      { mode: 'add_instrumental', audio: SONG, title: 'T', tags: 'folk', negativeTags: 'metal' },
      12,
      [file('audio', 'mp3', 90)],
    ),
    music(model, 'cover_upload', { mode: 'cover_upload', audio: SONG, songDescription: 'a jazz cover' }, 12, [
      file('audio', 'mp3', 90),
    ]),
    music(
      model,
      'extend (with a 90 s file)',
      { mode: 'extend', audio: SONG, continueAt: 60, prompt: LYRICS },
      12,
      [file('audio', 'mp3', 90)],
    ),
    music(
      model,
      'replace_upload (with a 60 s file)',
      {
        mode: 'replace_upload',
        audio: SONG,
        infillStartS: 10,
        infillEndS: 25,
        prompt: LYRICS,
        fullLyrics: LYRICS,
        tags: 'folk',
        title: 'T',
      },
      5,
      [file('audio', 'mp3', 60)],
    ),
    music(
      model,
      'mashup',
      { mode: 'mashup', audio: SONG, audio2: ['https://example.com/other.mp3'], songDescription: 'both' },
      12,
      [file('audio', 'mp3', 45), file('audio2', 'mp3', 45)],
    ),
  ];
}

const MINIMUMS: readonly Minimum[] = [
  ...MINIMUMS_3D_VIDEO,
  ...['V6', 'V6_MINI', 'V6_WILD'].flatMap((model) => musicMinimums(model)),
];

/** Price in kopecks of valid settings, as POST /v1/price computes it. */
function priceOfSettings(model: string, settings: Record<string, unknown>, files: InputFile[] = []): number {
  const spec = findModel(model);
  assert.ok(spec, model);
  const checked = validateSettings(spec, settings);
  assert.ok(checked.ok, `${model} settings are valid: ${JSON.stringify(checked)}`);
  return priceOf(spec, checked.mode, checked.settings, { files }, loadPriceTable(MODELS));
}

describe('reference minimum prices (item 7) with the default price table', () => {
  for (const minimum of MINIMUMS) {
    test(`${minimum.name}: ${minimum.rub} RUB`, () => {
      assert.equal(priceOfSettings(minimum.model, minimum.settings, minimum.files), minimum.rub * 100);
    });
  }

  test('music input beyond the included seconds costs more (extend 91 s, replace_upload 61 s)', () => {
    const extend = { mode: 'extend', audio: SONG, continueAt: 60, prompt: LYRICS };
    assert.ok(priceOfSettings('music', extend, [file('audio', 'mp3', 91)]) > 1200);
    const replace = {
      mode: 'replace_upload',
      audio: SONG,
      infillStartS: 10,
      infillEndS: 25,
      prompt: LYRICS,
      fullLyrics: LYRICS,
      tags: 'folk',
      title: 'T',
    };
    assert.ok(priceOfSettings('music', replace, [file('audio', 'mp3', 61)]) > 500);
  });
});
