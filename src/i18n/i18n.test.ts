import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ERROR_STATUS, TASK_FAILURE_CODES } from '../errors.ts';
import { en } from './en.ts';
import { negotiateLang, translate } from './index.ts';
import { ru } from './ru.ts';

test('every error and failure code has an English and a Russian text, and they differ', () => {
  for (const code of [...Object.keys(ERROR_STATUS), ...TASK_FAILURE_CODES] as Array<keyof typeof en>) {
    assert.ok(en[code]?.length, `en ${code}`);
    assert.ok(ru[code]?.length, `ru ${code}`);
    assert.notEqual(en[code], ru[code], code);
    assert.match(ru[code], /[а-яё]/i, `ru ${code} is Russian`);
  }
});

test('messages interpolate their parameters', () => {
  assert.equal(
    translate('model_not_found', 'en', { model: 'x' }),
    'There is no model "x". GET /v1/models lists the models.',
  );
  assert.match(translate('model_not_found', 'ru', { model: 'x' }), /«x»/);
});

test('a Russian message writes a fractional number with a decimal comma, an English one with a point', () => {
  const params = { used: 0.05, quota: 0.1 };
  assert.match(translate('storage_quota_exceeded', 'ru', params), /занято 0,05 МБ из 0,1 МБ/);
  assert.match(translate('storage_quota_exceeded', 'en', params), /0\.05 MB of 0\.1 MB in use/);
  assert.match(
    translate('insufficient_funds', 'ru', { amount: 2500, available: 101 }),
    /2500 коп\., доступно 101\./,
  );
});

test('negotiateLang: ?lang first, then Accept-Language by q-value, default English', () => {
  const cases: Array<[unknown, string | undefined, string]> = [
    [undefined, undefined, 'en'],
    ['ru', undefined, 'ru'],
    ['RU', 'en', 'ru'],
    ['en', 'ru', 'en'],
    ['de', 'ru', 'ru'],
    [undefined, 'ru-RU,ru;q=0.9,en;q=0.8', 'ru'],
    [undefined, 'en;q=0.5, ru;q=0.9', 'ru'],
    [undefined, 'de, ru;q=0.1', 'ru'],
    [undefined, 'ru;q=0, en', 'en'],
    [undefined, 'fr, de', 'en'],
    [undefined, '*', 'en'],
    [['ru', 'en'], undefined, 'en'],
  ];
  for (const [query, header, expected] of cases) {
    assert.equal(negotiateLang(query, header), expected, `${String(query)} / ${header}`);
  }
});

test('negotiateLang follows RFC 9110 on q spelling, `*` and more specific ranges', () => {
  const cases: Array<[string, string]> = [
    ['en;Q=0.2, ru', 'ru'],
    ['en-GB;Q=0.2, ru-RU ; q=0.3', 'ru'],
    ['en;q=0.5, *;q=0.9', 'ru'],
    ['ru;q=0.5, *;q=0.9', 'en'],
    ['*;q=0.5, ru', 'ru'],
    ['de, *;q=0', 'en'],
    ['ru;q=0.3, ru-RU;q=0.9', 'ru'],
    ['EN-us;q=0.4, RU;q=0.2', 'en'],
  ];
  for (const [header, expected] of cases) assert.equal(negotiateLang(undefined, header), expected, header);
});

test('English money refusals agree with their numbers: 1 kopeck is, 2 kopecks are', () => {
  assert.equal(
    translate('insufficient_funds', 'en', { amount: 2500, available: 1 }),
    'The balance is too low: the run costs 2500 kopecks, 1 is available. No task was created.',
  );
  assert.equal(
    translate('insufficient_funds', 'en', { amount: 1, available: 0 }),
    'The balance is too low: the run costs 1 kopeck, 0 are available. No task was created.',
  );
  assert.match(
    translate('key_daily_limit_exceeded', 'en', { limit: 1, spent: 1 }),
    /^The daily spending limit of this key \(1 kopeck, 1 spent today, Moscow time\)/,
  );
  assert.match(
    translate('key_daily_limit_exceeded', 'en', { limit: 500, spent: 0 }),
    /\(500 kopecks, 0 spent/,
  );
});
