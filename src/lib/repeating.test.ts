import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Repeating } from './repeating.ts';

test('a pass still running is not started again; a failed pass is told and the next one runs', async () => {
  let passes = 0;
  let release: () => void = () => {};
  const errors: unknown[] = [];
  const repeating = new Repeating(
    async () => {
      passes += 1;
      if (passes === 1) throw new Error('first pass failed');
      // The second pass hangs until released.
      await new Promise<void>((resolve) => {
        release = resolve;
      });
    },
    (error) => errors.push(error),
  );
  repeating.start(10);
  await sleep(150);
  assert.equal(passes, 2, 'the hanging pass is never overlapped');
  assert.equal(errors.length, 1);
  release();
  await sleep(50);
  repeating.stop();
  const after = passes;
  assert.ok(after >= 3, 'passes go on once the hanging one ends');
  await sleep(50);
  assert.equal(passes, after, 'no pass after stop');
});
