import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { hasNul } from './nul.ts';

test('finds a NUL in a string, an array, a nested value or a property name', () => {
  assert.equal(hasNul('a\u0000b'), true);
  assert.equal(hasNul(['x', ['y', 'z\u0000']]), true);
  assert.equal(hasNul({ settings: { shots: [{ prompt: 'ok' }, { prompt: '\u0000' }] } }), true);
  assert.equal(hasNul({ 'na\u0000me': 1 }), true);
  assert.equal(hasNul(JSON.parse('{"a":"\\u0000"}')), true);
});

test('everything else has none', () => {
  for (const value of [
    undefined,
    null,
    0,
    true,
    '',
    'plain',
    '\\u0000',
    ['a', 1, null],
    { a: { b: ['c'] } },
  ]) {
    assert.equal(hasNul(value), false, JSON.stringify(value));
  }
});

test("prototype-less objects and the router's parameters are walked; a Buffer or a stream body is not", () => {
  const query = Object.assign(Object.create(null) as Record<string, unknown>, { q: 'a\u0000' });
  assert.equal(hasNul(query), true);
  const params = Object.assign(Object.create(Object.create(null)) as Record<string, unknown>, {
    id: '\u0000',
  });
  assert.equal(hasNul(params), true);
  assert.equal(hasNul(Readable.from(['\u0000'])), false);
  assert.equal(hasNul({ raw: Buffer.from('\u0000') }), false);
});
