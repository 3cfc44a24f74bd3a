import assert from 'node:assert/strict';
import { test } from 'node:test';
import { characters, cutUnits, withoutEmoji, wordSet } from './text.ts';

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

test('withoutEmoji takes out pictographs with their modifiers and joins, and keeps every other character', () => {
  assert.equal(withoutEmoji('a red chair 🪑'), 'a red chair');
  assert.equal(
    withoutEmoji('a 👍🏽 family 👨‍👩‍👧 flag 🇷🇺 keycap 1️⃣ heart ❤️ end'),
    'a family flag keycap 1 heart end',
  );
  assert.equal(withoutEmoji('кресло, стиль ар-деко # 3 ©'), 'кресло, стиль ар-деко # 3');
  // Text without emoji is returned as it is, spaces and all; ZWJ in scripts that use it stays.
  assert.equal(withoutEmoji('  two  spaces\nline '), '  two  spaces\nline ');
  assert.equal(withoutEmoji('می\u200cخواهم'), 'می\u200cخواهم');
  assert.equal(withoutEmoji('🪑🪑'), '');
});
