import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Alarm } from './alarm.ts';

test('a ring ends the sleep under way', async () => {
  const alarm = new Alarm();
  const slept = alarm.sleep(60_000);
  alarm.ring();
  await slept;
});

test('a ring while nobody sleeps ends the next sleep at once, and only that one', async () => {
  const alarm = new Alarm();
  alarm.ring();
  await alarm.sleep(60_000);
  let ended = false;
  const next = alarm.sleep(20).then(() => {
    ended = true;
  });
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(ended, false, 'the ring was used up');
  await next;
  assert.equal(ended, true);
});
