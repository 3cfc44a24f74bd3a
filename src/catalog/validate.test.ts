import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { model3d } from './model-3d.ts';
import { music } from './music.ts';
import { validateSettings, violationsOf } from './validate.ts';

test('a value of the wrong type is told once: no length rule of the type it is not', () => {
  const result = validateSettings(model3d, {
    task_type: 'image_to_model',
    image_url: 'https://93.184.216.34/a.png',
  });
  assert.equal(result.ok, false);
  if (result.ok) return;
  assert.deepEqual(
    result.violations.map((v) => [v.field, v.en]),
    [['settings.image_url', 'Invalid input: expected array, received string']],
  );
});

test('other fields keep every rule they break; a root refusal names the prefix alone', () => {
  const schema = z.object({ a: z.array(z.string()).max(1), b: z.string().max(2) });
  const parsed = schema.safeParse({ a: 'x', b: 'long' }, { reportInput: true });
  assert.ok(!parsed.success);
  assert.deepEqual(
    violationsOf(parsed.error.issues, 'body.').map((v) => v.field),
    ['body.a', 'body.b'],
  );
  const root = z.object({}).safeParse([], { reportInput: true });
  assert.ok(!root.success);
  assert.deepEqual(
    violationsOf(root.error.issues, 'body.').map((v) => [v.field, v.en]),
    [['body', 'Invalid input: expected object, received array']],
  );
});

test('a discriminator value no branch takes names the values in both languages, never "undefined"', () => {
  const result = validateSettings(music, { mode: 'generate', songDescription: 'a', customMode: 'yes' });
  assert.equal(result.ok, false);
  if (result.ok) return;
  assert.deepEqual(
    result.violations.map((v) => [v.field, v.en, v.ru]),
    [
      [
        'settings.customMode',
        'expected one of false, true, or left out',
        'ожидается одно из значений: false, true или поле не задаётся',
      ],
    ],
  );
});

test('Russian refusals name types in Russian and count with the right word form', () => {
  const schema = z.object({
    a: z.string().min(1).max(3),
    n: z.number().min(1).max(100),
    p: z.number().positive(),
    l: z.array(z.string()).min(2).max(21),
    b: z.boolean(),
    r: z.record(z.string(), z.unknown()),
  });
  const ruOf = (input: unknown): string[][] => {
    const parsed = schema.safeParse(input, { reportInput: true });
    assert.ok(!parsed.success);
    return violationsOf(parsed.error.issues).map((v) => [v.field, v.ru]);
  };
  assert.deepEqual(ruOf({ a: '', n: 0, p: 0, l: ['x'], b: 'yes', r: 5 }), [
    ['a', 'нужно не меньше 1 символа'],
    ['n', 'должно быть не меньше 1'],
    ['p', 'должно быть больше 0'],
    ['l', 'нужно не меньше 2 элементов'],
    ['b', 'ожидается true или false, получена строка'],
    ['r', 'ожидается объект, получено число'],
  ]);
  assert.deepEqual(ruOf({ a: 'abcd', n: 101, p: 1, l: Array(22).fill('x'), b: true, r: {} }), [
    ['a', 'допустимо не больше 3 символов'],
    ['n', 'должно быть не больше 100'],
    ['l', 'допустимо не больше 21 элемента'],
  ]);
  assert.deepEqual(ruOf({ n: 1, p: 1, l: ['x', 'y'], b: false, r: [] }), [
    ['a', 'обязательное поле: ожидается строка'],
    ['r', 'ожидается объект, получен список'],
  ]);
});

test('a Russian wrong-type refusal agrees "получен" with the noun of what was received', () => {
  const schema = z.object({ n: z.number() });
  const ruOf = (value: unknown): string | undefined => {
    const parsed = schema.safeParse({ n: value }, { reportInput: true });
    assert.ok(!parsed.success);
    return violationsOf(parsed.error.issues)[0]?.ru;
  };
  assert.equal(ruOf('5'), 'ожидается число, получена строка');
  assert.equal(ruOf([5]), 'ожидается число, получен список');
  assert.equal(ruOf({ n: 5 }), 'ожидается число, получен объект');
  assert.equal(ruOf(true), 'ожидается число, получено логическое значение');
  assert.equal(ruOf(null), 'ожидается число, получено null');
});

test('a number read from text that is none is received as NaN in both languages, not as a number', () => {
  const parsed = z
    .object({ limit: z.coerce.number().int() })
    .safeParse({ limit: 'abc' }, { reportInput: true });
  assert.ok(!parsed.success);
  assert.deepEqual(
    violationsOf(parsed.error.issues, 'querystring.').map((v) => [v.field, v.en, v.ru]),
    [['querystring.limit', 'Invalid input: expected number, received NaN', 'ожидается число, получено NaN']],
  );
});

test('a union whose every branch refuses the type names all its types, in both languages', () => {
  const schema = z.object({ link: z.union([z.string(), z.array(z.string())]) });
  const of = (input: unknown): string[][] => {
    const parsed = schema.safeParse(input, { reportInput: true });
    assert.ok(!parsed.success);
    return violationsOf(parsed.error.issues).map((v) => [v.field, v.en, v.ru]);
  };
  assert.deepEqual(of({ link: 5 }), [
    [
      'link',
      'Invalid input: expected string or array, received number',
      'ожидается строка или список, получено число',
    ],
  ]);
  assert.deepEqual(of({}), [
    ['link', 'Required field: expected a string or a list', 'обязательное поле: ожидается строка или список'],
  ]);
});

test('a number with more than two decimals is told once, in both languages', () => {
  for (const [settings, field] of [
    [{ mode: 'generate', songDescription: 'a', audioWeight: 0.655 }, 'settings.audioWeight'],
    [
      {
        mode: 'replace_upload',
        audio: ['https://example.com/a.mp3'],
        infillStartS: 10.125,
        infillEndS: 25,
        prompt: 'p',
        fullLyrics: 'f',
        tags: 't',
        title: 'T',
      },
      'settings.infillStartS',
    ],
  ] as const) {
    const result = validateSettings(music, settings);
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.deepEqual(
      result.violations.map((v) => [v.field, v.en, v.ru]),
      [[field, 'Invalid number: must be a multiple of 0.01', 'Неверное число: должно быть кратным 0,01']],
    );
  }
});

test('Russian refusals write fractional bounds and steps with a decimal comma, English ones with a point', () => {
  const schema = z.object({
    step: z.number().multipleOf(0.25),
    low: z.number().min(0.5),
    high: z.number().lt(2.5),
  });
  const parsed = schema.safeParse({ step: 0.3, low: 0.2, high: 3 }, { reportInput: true });
  assert.ok(!parsed.success);
  assert.deepEqual(
    violationsOf(parsed.error.issues).map((v) => [v.field, v.en, v.ru]),
    [
      ['step', 'Invalid number: must be a multiple of 0.25', 'Неверное число: должно быть кратным 0,25'],
      ['low', 'Too small: expected number to be >=0.5', 'должно быть не меньше 0,5'],
      ['high', 'Too big: expected number to be <2.5', 'должно быть меньше 2,5'],
    ],
  );
});

test('a fraction where a whole number is expected is said as such, not as "expected int, received number"', () => {
  const schema = z.object({ n: z.number().int() });
  const parsed = schema.safeParse({ n: 10.5 }, { reportInput: true });
  assert.ok(!parsed.success);
  const [violation] = violationsOf(parsed.error.issues);
  assert.equal(violation?.en, 'Invalid input: expected a whole number, received 10.5');
  assert.equal(violation?.ru, 'ожидается целое число, получено 10,5');
});
