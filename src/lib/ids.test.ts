import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validate, version } from 'uuid';
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

test('uuidv7 carries the given time and keeps increasing when the time goes back', () => {
  const at = Date.UTC(2030, 0, 2, 3, 4, 5, 678);
  const first = uuidv7(at);
  assert.equal(validate(first) && version(first), 7);
  assert.equal(Number.parseInt(first.replaceAll('-', '').slice(0, 12), 16), at);
  const earlier = uuidv7(at - 60_000);
  assert.ok(earlier > first, 'an earlier time after a later one still sorts after it');
  assert.equal(Number.parseInt(earlier.replaceAll('-', '').slice(0, 12), 16), at);
  const later = uuidv7(at + 1);
  assert.ok(later > earlier);
  assert.equal(Number.parseInt(later.replaceAll('-', '').slice(0, 12), 16), at + 1);
});
