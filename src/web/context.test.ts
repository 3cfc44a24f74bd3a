import assert from 'node:assert/strict';
import { test } from 'node:test';
import { field, fields, safeNext } from './context.ts';
import { rublesToMinor } from './pages/keys.ts';

test('safeNext keeps paths of this site and turns anything else into /', () => {
  for (const ok of ['/', '/keys', '/keys?revoke=1', '/settings#x']) assert.equal(safeNext(ok), ok);
  for (const bad of [
    '//evil.example',
    '/\\evil.example',
    'https://evil.example/',
    'javascript:alert(1)',
    'keys',
    '/a\nb',
    '/a\u0000',
    '/a\\b',
    '',
    undefined,
    ['/keys'],
    `/${'a'.repeat(2001)}`,
  ]) {
    assert.equal(safeNext(bad), '/', String(bad));
  }
});

test('rublesToMinor reads rubles with a dot or a comma, at most two decimals', () => {
  assert.equal(rublesToMinor(''), null);
  assert.equal(rublesToMinor('  '), null);
  assert.equal(rublesToMinor('150'), 15_000);
  assert.equal(rublesToMinor('99.5'), 9_950);
  assert.equal(rublesToMinor('99,50'), 9_950);
  assert.equal(rublesToMinor('1 000'), 100_000);
  assert.equal(rublesToMinor('0.01'), 1);
  for (const bad of ['0', '0.00', '-5', '1.234', 'abc', '1e3', '1,2,3', '9999999999']) {
    assert.equal(rublesToMinor(bad), undefined, bad);
  }
});

test('form fields: strings only, checkboxes as a list', () => {
  assert.equal(field({ a: 'x' }, 'a'), 'x');
  assert.equal(field({ a: ['x', 'y'] }, 'a'), '');
  assert.equal(field(null, 'a'), '');
  assert.deepEqual(fields({ m: 'x' }, 'm'), ['x']);
  assert.deepEqual(fields({ m: ['x', 'y'] }, 'm'), ['x', 'y']);
  assert.deepEqual(fields({}, 'm'), []);
});
