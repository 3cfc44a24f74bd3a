import assert from 'node:assert/strict';
import { test } from 'node:test';
import { randomBase62 } from './random.ts';

test('randomBase62 gives the asked number of base62 characters', () => {
  for (const length of [0, 1, 32, 100])
    assert.match(randomBase62(length), new RegExp(`^[0-9A-Za-z]{${length}}$`));
});

test('randomBase62 gives every character the same chance (no modulo bias)', () => {
  const counts = new Map<string, number>();
  const text = randomBase62(62 * 4_000);
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  assert.equal(counts.size, 62);
  // Taking bytes modulo 62 gives '0'…'7' 5 chances in 256 against 4: about 4,840 each, not 4,000.
  // Uniform counts have a standard deviation of about 63, so 4,000 ± 400 is more than six of them.
  for (const [char, count] of counts) assert.ok(Math.abs(count - 4_000) < 400, `${char}: ${count}`);
});
