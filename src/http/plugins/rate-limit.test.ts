import assert from 'node:assert/strict';
import { test } from 'node:test';
import { integerText } from './rate-limit.ts';

test('integerText writes whole numbers exactly as String() does', () => {
  for (const n of [0, 1, 7, 119, 120, 999_999_999, 1e9, 2 ** 31, Number.MAX_SAFE_INTEGER, -1, -120]) {
    assert.equal(integerText(n), String(n));
  }
  for (const n of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60])
    assert.equal(integerText(n), String(n));
});
