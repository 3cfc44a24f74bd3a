import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { oncePerTurn } from './once-per-turn.ts';

test('oncePerTurn reads once per turn of the event loop, and again when the read is too old', async () => {
  let reads = 0;
  let clock = 0;
  const value = oncePerTurn(() => ++reads, { now: () => clock });
  assert.deepEqual([value(), value(), value()], [1, 1, 1], 'one read serves the turn');
  await nextTurn();
  assert.equal(value(), 2, 'a new turn reads again');
  clock += 1;
  assert.equal(value(), 3, 'a read a millisecond old is made again within the turn');
  assert.equal(value(), 3);
});
