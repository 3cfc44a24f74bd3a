import assert from 'node:assert/strict';
import { test } from 'node:test';
import { field, fields, safeNext } from './context.ts';
import { rublesToMinor } from './pages/keys.ts';

test('safeNext keeps paths of this site and turns anything else into /', () => {
  for (const ok of ['/', '/keys', '/keys?revoke=1', '/settings#x', '/%D0%BA']) assert.equal(safeNext(ok), ok);
  // A Location header is ASCII: other text goes percent-encoded, as the browser sent it.
  assert.equal(safeNext('/ключи?q=а б'), '/%D0%BA%D0%BB%D1%8E%D1%87%D0%B8?q=%D0%B0%20%D0%B1');
  assert.equal(safeNext('/\u3000/x'), '/%E3%80%80/x');
  assert.equal(safeNext('/a\ud800b'), '/', 'a lone surrogate is not text');
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
