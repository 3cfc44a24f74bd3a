import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BoundedMap } from './bounded-map.ts';

test('a BoundedMap drops the oldest entry to take a new key when full, never for a known key', () => {
  const map = new BoundedMap<string, number>(2);
  map.set('a', 1).set('b', 2);
  map.set('a', 3);
  assert.deepEqual(
    [...map],
    [
      ['a', 3],
      ['b', 2],
    ],
    'replacing a kept key drops nothing',
  );
  map.set('c', 4);
  assert.deepEqual(
    [...map],
    [
      ['b', 2],
      ['c', 4],
    ],
    'the oldest added went out',
  );
  assert.throws(() => new BoundedMap(0), RangeError);
});
