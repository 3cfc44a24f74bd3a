import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { oncePerTurn, oncePerTurnAsync } from './once-per-turn.ts';

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

test('oncePerTurnAsync shares one read per turn, reads again in the next turn, and drops a failed read', async () => {
  let reads = 0;
  let clock = 0;
  let fail = false;
  const value = oncePerTurnAsync(
    async () => {
      reads += 1;
      if (fail) throw new Error('down');
      return reads;
    },
    { now: () => clock },
  );
  const first = value();
  assert.equal(value(), first, 'the same turn shares the read');
  assert.deepEqual(await Promise.all([first, value()]), [1, 1]);
  await nextTurn();
  assert.equal(await value(), 2, 'a new turn reads again');
  clock += 1;
  assert.equal(await value(), 3, 'a read a millisecond old is started again within the turn');
  await nextTurn();
  fail = true;
  await assert.rejects(value(), /down/);
  fail = false;
  assert.equal(await value(), 5, 'a failed read is not given out again');
});
