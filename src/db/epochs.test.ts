import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KeptUntilEpoch } from './epochs.ts';

test('a value is kept while its epoch stays, forgotten when it moves, never kept under a newer one', () => {
  const kept = new KeptUntilEpoch<string, number>(10);
  assert.equal(kept.get(1, 'a'), undefined);
  kept.set(1, 'a', 10);
  assert.equal(kept.get(1, 'a'), 10);
  assert.equal(kept.get(2, 'a'), undefined, 'the epoch moved: everything kept before is forgotten');
  kept.set(1, 'a', 11);
  assert.equal(kept.get(2, 'a'), undefined, 'a value read at an older epoch is not kept under the newer one');
  kept.set(2, 'a', 12);
  assert.equal(kept.get(2, 'a'), 12);
  assert.equal(kept.get(1, 'a'), undefined, 'an epoch moving back forgets too (a rolled-back change)');
});
