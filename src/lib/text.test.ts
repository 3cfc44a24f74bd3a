import assert from 'node:assert/strict';
import { test } from 'node:test';
import { characters, cutUnits, wordSet } from './text.ts';

test('characters counts code points: an emoji is one', () => {
  assert.equal(characters('a😀b'), 3);
});

test('cutUnits keeps at most max UTF-16 units and never splits a surrogate pair', () => {
  assert.equal(cutUnits('short', 20), 'short');
  assert.equal(cutUnits('abcdef', 3), 'abc');
  // The emoji's two units would straddle the cut: it goes whole, one unit under the bound.
  assert.equal(cutUnits('ab😀c', 3), 'ab');
  assert.equal(cutUnits('ab😀c', 4), 'ab😀');
});

test('wordSet: each word once, sorted', () => {
  assert.deepEqual(wordSet(['b', 'a', 'b']), ['a', 'b']);
});
