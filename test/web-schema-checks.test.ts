/**
 * The new-task form's client-side checks (src/web/client/schema-checks.ts) and field names as people read
 * them; the island runs the same code in the browser.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { MODELS, settingsJsonSchema } from '../src/catalog/index.ts';
import { twoDecimals } from '../src/catalog/model-spec.ts';
import { checkValue, fieldLabel, readable } from '../src/web/client/schema-checks.ts';
import { wordsOf } from '../src/web/words.ts';
import { settingWords } from '../src/web/words-settings.ts';

// The island's words: the page's own and the settings' (none on English pages).
const en = { ...wordsOf('en'), ...settingWords('en') };
const ru = { ...wordsOf('ru'), ...settingWords('ru') };

test('field names become readable labels', () => {
  assert.equal(readable('image_urls'), 'Image urls');
  assert.equal(readable('songDescription'), 'Song description');
  assert.equal(readable('voice_2'), 'Voice 2');
  assert.equal(readable('infillStartS'), 'Infill start s');
});

test('settings are labelled in the page language; numbered names take their base label', () => {
  assert.equal(fieldLabel('face_limit', {}, ru), 'Предел числа граней');
  assert.equal(fieldLabel('face_limit', {}, en), 'Face limit');
  assert.equal(fieldLabel('task_type', {}, en), 'Task type');
  assert.equal(fieldLabel('voice_7', {}, ru), 'Голос 7');
  assert.equal(fieldLabel('voice_7', {}, en), 'Voice 7');
  // A name without a word: the schema's title, else the name made readable.
  assert.equal(fieldLabel('brand_new', { title: 'Brand new' }, ru), 'Brand new');
  assert.equal(fieldLabel('brand_new', {}, ru), 'Brand new');
});

/**
 * Every property name of a JSON Schema, nested ones included; `described` gets the names the form shows
 * with a hint (a type and a description; a field without a type is the service's and is not shown).
 */
function propertyNames(
  schema: unknown,
  into = new Set<string>(),
  described = new Set<string>(),
): Set<string> {
  if (!schema || typeof schema !== 'object') return into;
  const s = schema as Record<string, unknown>;
  for (const [name, inner] of Object.entries((s.properties ?? {}) as Record<string, unknown>)) {
    into.add(name);
    const p = inner as Record<string, unknown>;
    if (typeof p.description === 'string' && p.type !== undefined) described.add(name);
    propertyNames(inner, into, described);
  }
  propertyNames(s.items, into, described);
  for (const key of ['anyOf', 'oneOf', 'allOf'])
    for (const branch of (s[key] ?? []) as unknown[]) propertyNames(branch, into, described);
  return into;
}

test('every setting of every model has Russian words; English pages show the schemas’ own', () => {
  const names = new Set<string>();
  const described = new Set<string>();
  // As the form gets them: the published schema, where a refused setting is `not: {}` (no hint shown).
  for (const model of MODELS)
    for (const mode of model.modes) propertyNames(settingsJsonSchema(mode.schema), names, described);
  assert.ok(names.size > 50, `${names.size} setting names`);
  assert.ok(described.size > 0);
  assert.deepEqual(settingWords('en'), {
    'setting:model': 'Provider model version',
    'setting:mode': 'Generation mode',
  });
  for (const name of described)
    assert.ok(`hint:${name}` in ru, `setting ${name} has no Russian hint (src/web/words-settings.ts)`);
  for (const name of names) {
    const base = /^(.+)_(\d+)$/.exec(name)?.[1];
    assert.ok(
      `setting:${name}` in ru || (base !== undefined && `setting:${base}` in ru),
      `setting ${name} has no Russian label (src/web/words-settings.ts)`,
    );
    if (!(`setting:${name}` in en)) assert.equal(fieldLabel(name, {}, en), readable(name));
  }
  // A control is found by its label: no setting may be labelled as one of the page's own controls, in
  // either language (music's `model` made readable would be a second `Model` beside the model chooser).
  for (const words of [ru, en]) {
    const page = new Set(
      Object.entries(words)
        .filter(([k]) => k.startsWith('new'))
        .map(([, v]) => v),
    );
    for (const name of names)
      assert.ok(
        !page.has(fieldLabel(name, {}, words)),
        `setting ${name} is labelled as a control of the page`,
      );
  }
});

test('each schema bound is checked, in the page language', () => {
  assert.deepEqual(checkValue('prompt', { type: 'string' }, undefined, true, en), ['Prompt: required.']);
  assert.deepEqual(checkValue('prompt', { type: 'string' }, undefined, false, en), []);
  assert.deepEqual(checkValue('prompt', { type: 'string' }, undefined, true, ru), [
    'Описание (промпт): обязательное поле.',
  ]);
  assert.deepEqual(checkValue('t', { type: 'string', maxLength: 3 }, 'abcd', true, en), [
    'T: at most 3 characters.',
  ]);
  assert.deepEqual(checkValue('t', { type: 'string', minLength: 2 }, 'a', true, en), [
    'T: at least 2 characters.',
  ]);
  // Characters are counted as the API counts them: an emoji is one (two UTF-16 units).
  assert.deepEqual(checkValue('t', { type: 'string', maxLength: 3 }, '😀😀😀', true, en), []);
  assert.deepEqual(checkValue('t', { type: 'string', maxLength: 3 }, '😀😀😀😀', true, en), [
    'T: at most 3 characters.',
  ]);
  assert.deepEqual(checkValue('t', { type: 'string', minLength: 2 }, '😀', true, en), [
    'T: at least 2 characters.',
  ]);
  assert.deepEqual(checkValue('face_limit', { type: 'integer', minimum: 48 }, 10, false, en), [
    'Face limit: at least 48.',
  ]);
  assert.deepEqual(checkValue('n', { type: 'integer', maximum: 4 }, 4.5, false, en), [
    'N: a whole number is needed.',
    'N: at most 4.',
  ]);
  assert.deepEqual(checkValue('n', { type: 'number' }, Number.NaN, false, en), ['N: a number is needed.']);
  assert.deepEqual(checkValue('u', { type: 'string', format: 'uri' }, 'ftp://x', true, en), [
    'U: a link (http or https) is needed.',
  ]);
  assert.deepEqual(
    checkValue('u', { type: 'string', format: 'uri' }, 'https://example.com/a.png', true, en),
    [],
  );
  assert.deepEqual(checkValue('l', { type: 'array', minItems: 2, maxItems: 3 }, ['a'], true, en), [
    'L: at least 2 items.',
  ]);
  assert.deepEqual(checkValue('l', { type: 'array', maxItems: 1 }, ['a', 'b'], true, en), [
    'L: at most 1 items.',
  ]);
  assert.deepEqual(checkValue('x', { type: 'string', title: 'Named' }, undefined, true, en), [
    'Named: required.',
  ]);
});

test('numbers in the messages are written as the page language writes them', () => {
  const faces = { type: 'integer', minimum: 48, maximum: 2_000_000 };
  assert.deepEqual(checkValue('face_limit', faces, 3_000_000, false, ru), [
    'Предел числа граней: не больше 2\u00a0000\u00a0000.',
  ]);
  assert.deepEqual(checkValue('face_limit', faces, 3_000_000, false, en), ['Face limit: at most 2,000,000.']);
  assert.deepEqual(
    checkValue('prompt', { type: 'string', maxLength: 10_000 }, 'я'.repeat(10_001), true, ru),
    ['Описание (промпт): не длиннее 10\u00a0000 символов.'],
  );
  assert.deepEqual(checkValue('w', { type: 'number', maximum: 0.5 }, 0.75, false, ru), ['W: не больше 0,5.']);
});

test('a link is checked as the API checks it', () => {
  const api = z.url({ protocol: /^https?$/ });
  const typed = [
    'https://example.com/a.png',
    'HTTP://EXAMPLE.COM/a.png',
    ' https://example.com/a.png ',
    'https:example.com/a.png',
    'https:/example.com/a.png',
    'http:\\\\example.com/a.png',
    'ftp://example.com/a.png',
    'example.com/a.png',
  ];
  for (const value of typed)
    assert.equal(
      checkValue('u', { type: 'string', format: 'uri' }, value, true, en).length === 0,
      api.safeParse(value).success,
      `client and API disagree about ${value}`,
    );
});

test('a step (multipleOf) is checked as the API checks it', () => {
  const weight = { type: 'number', minimum: 0, maximum: 1, multipleOf: 0.01 };
  assert.deepEqual(checkValue('audioWeight', weight, 0.655, false, en), [
    'Audio weight: a multiple of 0.01 is needed.',
  ]);
  assert.deepEqual(checkValue('audioWeight', weight, 0.655, false, ru), [
    `${fieldLabel('audioWeight', {}, ru)}: нужно число, кратное 0,01.`,
  ]);
  // The API's rule itself (src/catalog/model-spec.ts), asked about the values a person may type.
  const api = twoDecimals(z.number());
  const typed = [0.07, 0.29, 0.57, 0.58, 0.655, 0.001, 0.123, 1e-300, 5e-324, 12.34, 0.1 + 0.2];
  for (let i = 0; i <= 100; i++) typed.push(i / 100, i * 0.01);
  // The published schemas carry a decimal step as `x-multipleOf` (catalog DECIMAL_STEP); the same check.
  for (const value of typed)
    for (const schema of [
      { type: 'number', multipleOf: 0.01 },
      { type: 'number', 'x-multipleOf': 0.01 },
    ])
      assert.equal(
        checkValue('w', schema, value, false, en).length === 0,
        api.safeParse(value).success,
        `client and API disagree about ${value} (${JSON.stringify(schema)})`,
      );
  assert.deepEqual(checkValue('n', { type: 'integer', multipleOf: 5 }, 12, false, en), [
    'N: a multiple of 5 is needed.',
  ]);
  assert.deepEqual(checkValue('n', { type: 'integer', multipleOf: 5 }, 15, false, en), []);
});
