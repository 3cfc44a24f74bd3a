/**
 * Counted words in error messages take the form their number needs in both languages (1 задача,
 * 2 задачи, 5 задач; 1 task, 2 tasks).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { errors } from '../src/errors.ts';
import { translate } from '../src/i18n/index.ts';
import { ADMIN_TOKEN, errorOf, expectError, startTestApp, type TestApp } from './helpers.ts';

describe('plural forms in error messages', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ worker: false });
  });
  after(() => t.close());

  test('too_many_active counts its limit with the right word form', () => {
    const ru = (limit: number): string => translate('too_many_active', 'ru', { model: 'm', limit });
    const en = (limit: number): string => translate('too_many_active', 'en', { model: 'm', limit });
    assert.match(ru(1), /не больше 1 незавершённой задачи одного/);
    assert.match(ru(21), /не больше 21 незавершённой задачи одного/);
    assert.match(ru(2), /не больше 2 незавершённых задач одного/);
    assert.match(ru(11), /не больше 11 незавершённых задач одного/);
    assert.match(en(1), /at most 1 unfinished task of/);
    assert.match(en(10), /at most 10 unfinished tasks of/);
  });

  test('a conflicting credit names its amount in kopecks with the right word form', async () => {
    const { id } = (await t.admin('POST', '/admin/v1/accounts', { name: 'Plurals' })).json();
    for (const [amount, ru, en] of [
      [1, '1 копейка', '1 kopeck;'],
      [3, '3 копейки', '3 kopecks'],
      [25, '25 копеек', '25 kopecks'],
    ] as const) {
      const reference = `ref-${amount}`;
      await t.admin('POST', `/admin/v1/accounts/${id}/credits`, { amount_minor: amount, reference });
      for (const [lang, words] of [
        ['ru', ru],
        ['en', en],
      ] as const) {
        const res = await t.app.inject({
          method: 'POST',
          url: `/admin/v1/accounts/${id}/credits?lang=${lang}`,
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
          payload: { amount_minor: amount + 100, reference },
        });
        expectError(res, 409, 'credit_reference_conflict');
        assert.ok(errorOf(res).message.includes(words), errorOf(res).message);
      }
    }
  });

  test('the event stream limit counts its streams with the right word form', () => {
    const ru = (limit: number): string => errors.tooManyStreams(limit).detail?.ru ?? '';
    const en = (limit: number): string => errors.tooManyStreams(limit).detail?.en ?? '';
    assert.match(ru(1), /уже открыт 1 поток событий или ожидающий запрос;/);
    assert.match(ru(3), /уже открыто 3 потока событий и ожидающих запроса;/);
    assert.match(ru(20), /уже открыто 20 потоков событий и ожидающих запросов;/);
    assert.match(en(1), /holds 1 event stream or waiting call open/);
    assert.match(en(20), /holds 20 event streams and waiting calls open/);
  });
});
