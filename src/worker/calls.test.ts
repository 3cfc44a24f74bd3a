import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, test } from 'node:test';
import { GenerationError, GeneratorTransientError } from '../generators/index.ts';
import { StorageError } from '../storage/index.ts';
import { bounded } from './calls.ts';
import {
  CallTimeout,
  DeadlineExceeded,
  isOwnTransient,
  isTransient,
  isUpstreamTransient,
  retryAfterOf,
  TransientFailure,
} from './failures.ts';

const never = (): Promise<never> => new Promise<never>(() => {});

describe('bounded calls', () => {
  test('answers with the call when it answers in time', async () => {
    assert.equal(await bounded('x', async () => 42, { timeoutMs: 1_000 }), 42);
  });

  test('a call that ignores its signal and never answers ends at its timeout with CallTimeout', async () => {
    await assert.rejects(bounded('status', never, { timeoutMs: 20 }), CallTimeout);
  });

  test('the run ending stops the wait with its reason, and the call sees the abort', async () => {
    const run = new AbortController();
    let seen: AbortSignal | null = null;
    const waiting = bounded(
      'put',
      (signal) => {
        seen = signal;
        return never();
      },
      { signal: run.signal, timeoutMs: 60_000 },
    );
    await new Promise((r) => setTimeout(r, 5));
    run.abort(new DeadlineExceeded('late'));
    await assert.rejects(waiting, DeadlineExceeded);
    assert.equal((seen as AbortSignal | null)?.aborted, true);
  });

  test('a call that throws at once rejects, and each way to settle leaves no listener on the run', async () => {
    const run = new AbortController();
    const options = { signal: run.signal, timeoutMs: 20 };
    await assert.rejects(
      bounded(
        'create',
        () => {
          throw new TypeError('bad request');
        },
        options,
      ),
      TypeError,
    );
    assert.equal(await bounded('status', async () => 'done', options), 'done');
    await assert.rejects(
      bounded('outputs', async () => Promise.reject(new GeneratorTransientError('503')), options),
      GeneratorTransientError,
    );
    await assert.rejects(bounded('release', never, options), CallTimeout);
    assert.equal(getEventListeners(run.signal, 'abort').length, 0);
  });

  test('an answer after the timeout is dropped: the wait ended with CallTimeout', async () => {
    let answer: (value: number) => void = () => {};
    let seen: AbortSignal | null = null;
    const waiting = bounded(
      'status',
      (signal) => {
        seen = signal;
        return new Promise<number>((resolve) => {
          answer = resolve;
        });
      },
      { timeoutMs: 10 },
    );
    await assert.rejects(waiting, CallTimeout);
    assert.equal((seen as AbortSignal | null)?.aborted, true);
    answer(7);
    await assert.rejects(waiting, CallTimeout);
  });

  test('a run that already ended never starts the call', async () => {
    let called = false;
    const ended = AbortSignal.abort(new DeadlineExceeded('late'));
    await assert.rejects(
      bounded(
        'create',
        async () => {
          called = true;
        },
        { signal: ended, timeoutMs: 1_000 },
      ),
      DeadlineExceeded,
    );
    assert.equal(called, false);
  });
});

test('only the allow-list is transient, also as a cause', () => {
  const coded = (code: string): Error => Object.assign(new Error(code), { code });
  const cases: Array<[unknown, boolean]> = [
    [new GeneratorTransientError('429'), true],
    [new CallTimeout('slow'), true],
    [new TransientFailure('storage'), true],
    [coded('ECONNRESET'), true],
    [coded('08006'), true],
    [coded('57P01'), true],
    [coded('SQLITE_BUSY'), true],
    [new Error('wrapped', { cause: coded('ETIMEDOUT') }), true],
    [new GenerationError('content_refused', 'no'), false],
    [new TypeError('x is undefined'), false],
    [coded('23505'), false],
    [coded('ENOENT'), false],
    ['a string', false],
    [null, false],
  ];
  for (const [error, expected] of cases) assert.equal(isTransient(error), expected, String(error));
  // Our storage failing is ours: retried, never counted against a channel.
  const storage = new Error('reading an input failed', { cause: new StorageError('S3 unreachable') });
  assert.deepEqual(
    [isTransient(storage), isOwnTransient(storage), isUpstreamTransient(storage)],
    [true, true, false],
  );
  assert.equal(retryAfterOf(new GeneratorTransientError('429', { retryAfterMs: 3_000 })), 3_000);
  assert.equal(retryAfterOf(new Error('x')), null);
});
