import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errors } from '../errors.ts';
import { refusalOf } from './respond.ts';

test('a rate limit tells a person the wait, in seconds under a minute and in whole minutes above', () => {
  assert.equal(refusalOf(errors.rateLimited(30), 'en').message, 'Too many attempts. Try again in 30 s.');
  assert.equal(refusalOf(errors.rateLimited(699), 'en').message, 'Too many attempts. Try again in 12 min.');
  assert.equal(
    refusalOf(errors.rateLimited(60), 'ru').message,
    'Слишком много попыток. Повторите через 1 мин.',
  );
  const refusal = refusalOf(errors.rateLimited(5), 'en');
  assert.equal(refusal.status, 429);
  assert.equal(refusal.headers['Retry-After'], '5');
});

test('other refusals keep the error table message; a fault that is not an ApiError is rethrown', () => {
  assert.match(refusalOf(errors.keyNotFound('k1'), 'en').message, /k1|key/i);
  assert.throws(() => refusalOf(new Error('boom'), 'en'), /boom/);
});

test("a field's refusal names it with the form's label; other fields and texts are left as they are", () => {
  const detail = errors.invalidRequest({ en: 'password: too short.', ru: 'password: короткий.' });
  assert.equal(refusalOf(detail, 'en', { password: 'New password' }).message, 'New password: too short.');
  assert.equal(refusalOf(detail, 'ru', { password: 'Новый пароль' }).message, 'Новый пароль: короткий.');
  assert.equal(refusalOf(detail, 'en', { email: 'E-mail' }).message, 'password: too short.');
  assert.equal(refusalOf(detail, 'en').message, 'password: too short.');
  // `toString` is no label of a plain object's.
  const odd = errors.invalidRequest({ en: 'toString: odd.', ru: 'toString: странно.' });
  assert.equal(refusalOf(odd, 'en', {}).message, 'toString: odd.');
  assert.equal(
    refusalOf(errors.fileEmpty('file'), 'en', { file: '“Files”' }).message,
    'The file in “Files” is empty.',
  );
  assert.equal(detail.detail?.en, 'password: too short.', 'the error itself is not changed');
});

test('a refusal tells the field of the form it is about, by the API name the page labels', () => {
  const detail = errors.invalidRequest({ en: 'password: too short.', ru: 'password: короткий.' });
  assert.equal(refusalOf(detail, 'ru', { password: 'Новый пароль' }).field, 'password');
  assert.equal(refusalOf(detail, 'en', { email: 'E-mail' }).field, null, 'a field the form does not have');
  assert.equal(refusalOf(detail, 'en').field, null);
  assert.equal(refusalOf(errors.fileEmpty('file'), 'en', { file: '“Files”' }).field, 'file');
  assert.equal(refusalOf(errors.fileEmpty('file'), 'en').field, null);
  assert.equal(refusalOf(errors.invalidCredentials(), 'en', { email: 'E-mail' }).field, null);
  assert.equal(refusalOf(errors.rateLimited(5), 'en', { email: 'E-mail' }).field, null);
});
