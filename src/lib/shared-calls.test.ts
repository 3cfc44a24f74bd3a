import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SharedCalls } from './shared-calls.ts';

/** A call that waits until released, counting how many started. */
function gate() {
  let started = 0;
  const releases: Array<(value: number) => void> = [];
  return {
    call: () =>
      new Promise<number>((resolve) => {
        started += 1;
        releases.push(resolve);
      }),
    started: () => started,
    release: (value: number) => releases.shift()?.(value),
  };
}

test('callers arriving during a call share the one call after it; a burst costs two calls', async () => {
  const calls = new SharedCalls<number>();
  const g = gate();
  const first = calls.run('p', g.call);
  const later = Array.from({ length: 50 }, () => calls.run('p', g.call));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(g.started(), 1, 'the late callers wait for the running call');
  g.release(1);
  assert.equal(await first, 1);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(g.started(), 2, 'then one call serves them all');
  g.release(2);
  assert.deepEqual(new Set(await Promise.all(later)), new Set([2]), 'an answer that began after they came');
  assert.equal(calls.size, 0);
});

test('keys are apart, and a failed call neither sticks nor stops the next', async () => {
  const calls = new SharedCalls<string>();
  let n = 0;
  const failing = calls.run('a', async () => {
    n += 1;
    throw new Error('provider down');
  });
  const after = calls.run('a', async () => {
    n += 1;
    return `ok ${n}`;
  });
  const other = calls.run('b', async () => 'b');
  await assert.rejects(failing, /provider down/);
  assert.equal(await after, 'ok 2');
  assert.equal(await other, 'b');
  assert.equal(await calls.run('a', async () => 'fresh'), 'fresh');
  assert.equal(calls.size, 0);
});

test('a call that throws synchronously rejects its callers instead of throwing', async () => {
  const calls = new SharedCalls<number>();
  await assert.rejects(
    calls.run('k', () => {
      throw new Error('sync');
    }),
    /sync/,
  );
});
