import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GenerationError, GeneratorTransientError } from '../generator.ts';
import { SYNC_KEEP_MS, SyncRuns } from './sync-runs.ts';
import { ChannelOutOfCredit, UpstreamRunLost } from './types.ts';

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('a call is running, then succeeded with its result; a repeated start joins the first call', async () => {
  const runs = new SyncRuns<string>('p');
  let release: (value: string) => void = () => {};
  let calls = 0;
  const call = () => {
    calls += 1;
    return new Promise<string>((resolve) => {
      release = resolve;
    });
  };
  runs.start('k', call);
  runs.start('k', call);
  assert.equal(calls, 1);
  assert.equal(runs.status('k').state, 'running');
  release('bytes');
  await settle();
  assert.deepEqual(runs.status('k'), { state: 'succeeded' });
  assert.equal(runs.result('k'), 'bytes');
  runs.drop('k');
  assert.equal(runs.has('k'), false);
});

test('a final refusal is failed with its code; it stays readable', async () => {
  const runs = new SyncRuns<string>('p');
  runs.start('k', async () => {
    throw new GenerationError('content_refused', 'no');
  });
  await settle();
  assert.deepEqual(runs.status('k'), { state: 'failed', code: 'content_refused', reason: 'no' });
  assert.equal(runs.status('k').state, 'failed');
});

test('a transient failure ends the record as a lost run, with the Retry-After kept', async () => {
  const runs = new SyncRuns<string>('p');
  runs.start('k', async () => {
    throw new GeneratorTransientError('429', { retryAfterMs: 1500 });
  });
  await settle();
  assert.throws(
    () => runs.status('k'),
    (e: unknown) => e instanceof UpstreamRunLost && e.retryAfterMs === 1500,
  );
  assert.throws(() => runs.status('k'), UpstreamRunLost, 'the record is gone');
});

test('no credit is thrown as it is; an unknown run (a restart) is lost; cancel aborts the call', async () => {
  const runs = new SyncRuns<string>('p');
  runs.start('credit', async () => {
    throw new ChannelOutOfCredit('quota');
  });
  await settle();
  assert.throws(() => runs.status('credit'), ChannelOutOfCredit);
  assert.throws(() => runs.status('never-started'), UpstreamRunLost);
  let aborted = false;
  runs.start('c', (signal) => {
    signal.addEventListener('abort', () => {
      aborted = true;
    });
    return new Promise<string>(() => {});
  });
  runs.cancel('c');
  assert.equal(aborted, true);
  assert.equal(runs.has('c'), false);
});

test('a taken result stays readable until dropped, so a resumed run finds it (our storage failed)', async () => {
  const runs = new SyncRuns<string>('p');
  runs.start('k', async () => 'bytes');
  await settle();
  assert.equal(runs.result('k'), 'bytes');
  assert.deepEqual(runs.status('k'), { state: 'succeeded' }, 'the resumed poll');
  assert.equal(runs.result('k'), 'bytes', 'the resumed outputs');
  runs.drop('k');
  assert.throws(() => runs.status('k'), UpstreamRunLost);
});

test('a finished record nobody releases is forgotten SYNC_KEEP_MS after it was last read', async () => {
  let now = 0;
  const runs = new SyncRuns<string>('p', { now: () => now });
  runs.start('k', async () => 'bytes');
  await settle();
  now += SYNC_KEEP_MS - 1;
  assert.equal(runs.result('k'), 'bytes', 'each read starts the expiry again');
  now += SYNC_KEEP_MS - 1;
  assert.equal(runs.has('k'), true);
  now += 2;
  assert.equal(runs.has('k'), false);
  assert.throws(() => runs.status('k'), UpstreamRunLost);
});
