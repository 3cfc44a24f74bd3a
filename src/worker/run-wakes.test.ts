import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RunWakes } from './run-wakes.ts';

/** Whether `promise` has settled after pending callbacks ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

test('a wake ends the sleep of its run only', async () => {
  const wakes = new RunWakes();
  const signal = new AbortController().signal;
  const a = wakes.watch('task-a/1');
  const b = wakes.watch('task-b/1');
  const sleepA = a.sleep(60_000, signal);
  const sleepB = b.sleep(60_000, signal);
  wakes.wake('task-a/1');
  assert.equal(await settled(sleepA), true);
  assert.equal(await settled(sleepB), false);
  wakes.wake('task-b/1');
  await sleepB;
  a.close();
  b.close();
  assert.equal(wakes.size, 0);
});

test('a wake while the run reads its task ends its next sleep at once, only that one', async () => {
  const wakes = new RunWakes();
  const signal = new AbortController().signal;
  const watch = wakes.watch('task-a/1');
  wakes.wake('task-a/1');
  assert.equal(await settled(watch.sleep(60_000, signal)), true);
  const next = watch.sleep(60_000, signal);
  assert.equal(await settled(next), false);
  wakes.wakeAll();
  await next;
  watch.close();
});

test('an abort rejects the sleep with its reason; an unwatched run is not woken later', async () => {
  const wakes = new RunWakes();
  const abort = new AbortController();
  const watch = wakes.watch('task-a/1');
  const sleeping = watch.sleep(60_000, abort.signal);
  abort.abort(new Error('stopping'));
  await assert.rejects(sleeping, /stopping/);
  watch.close();
  wakes.wake('task-a/1');
  assert.equal(wakes.size, 0);
  const again = wakes.watch('task-a/1');
  const fresh = again.sleep(60_000, new AbortController().signal);
  assert.equal(await settled(fresh), false);
  wakes.wake('task-a/1');
  await fresh;
  again.close();
});
