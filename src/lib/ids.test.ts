import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UUID_PATTERN, uuidv7 } from './ids.ts';

test('uuidv7 ids are UUIDs of version 7 and sort in creation order, also within one millisecond', () => {
  const ids = Array.from({ length: 5000 }, () => uuidv7(1_700_000_000_000));
  for (const id of ids.slice(0, 10)) {
    assert.match(id, UUID_PATTERN);
    assert.equal(id[14], '7');
  }
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, ids.length);
});
