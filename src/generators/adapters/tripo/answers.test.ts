import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GenerationError, GeneratorTransientError } from '../../generator.ts';
import { ChannelOutOfCredit, UpstreamRunLost } from '../types.ts';
import { dataOf, statusOf, taskOf } from './answers.ts';

const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
  status,
  headers: new Headers(headers),
  body,
});

/** What `dataOf` throws for an answer, by class. */
function classOf(status: number, body: unknown): string {
  try {
    dataOf(answer(status, body), 'create');
    return 'ok';
  } catch (error) {
    if (error instanceof GeneratorTransientError) return 'transient';
    if (error instanceof ChannelOutOfCredit) return 'no_credit';
    if (error instanceof GenerationError) return error.code;
    throw error;
  }
}

test('Tripo’s error table sorts into the classes of the normalised mapping', () => {
  const cases: [number, unknown, string][] = [
    [200, { code: 0, data: { task_id: 't' } }, 'ok'],
    [500, { code: 1000, message: 'server' }, 'transient'],
    [500, { code: 1001 }, 'transient'],
    [401, { code: 1002 }, 'transient'],
    [429, { code: 2000 }, 'transient'],
    [404, { code: 2001 }, 'transient'],
    [500, { code: 2014 }, 'transient'],
    [502, { code: 9999 }, 'transient'],
    [403, { code: 2010 }, 'no_credit'],
    [400, { code: 2008 }, 'content_refused'],
    [400, { code: 1003 }, 'generation_failed'],
    [400, { code: 1004 }, 'generation_failed'],
    [403, { code: 1005 }, 'generation_failed'],
    [400, { code: 2002 }, 'generation_failed'],
    [400, { code: 2015 }, 'generation_failed'],
    [400, { code: 2017 }, 'generation_failed'],
    [400, { code: 2018 }, 'generation_failed'],
    [404, { code: 2019 }, 'generation_failed'],
    [200, { code: 0 }, 'transient'],
    [200, { code: 0, data: 'x' }, 'transient'],
    [200, null, 'transient'],
    [503, null, 'transient'],
    [429, { error: 'slow down' }, 'transient'],
    [400, null, 'generation_failed'],
  ];
  for (const [status, body, expected] of cases)
    assert.equal(classOf(status, body), expected, `${status} ${JSON.stringify(body)}`);
});

test('a refusal carries Tripo’s message and suggestion; a transient one its Retry-After', () => {
  assert.throws(
    () => dataOf(answer(400, { code: 2018, message: 'too complex', suggestion: 'simplify' }), 'create'),
    { message: 'Tripo create: code 2018: too complex; simplify' },
  );
  assert.throws(
    () => dataOf(answer(429, { code: 2000 }, { 'retry-after': '7' }), 'status'),
    (error: unknown) => error instanceof GeneratorTransientError && error.retryAfterMs === 7_000,
  );
});

test('task states map onto run states; gone tasks are lost, strange ones transient', () => {
  const task = (status: string, extra: Record<string, unknown> = {}) =>
    taskOf({ task_id: 't1', status, progress: 42, ...extra }, 'status');
  assert.deepEqual(statusOf(task('queued', { progress: 0 })), {
    state: 'running',
    progress: 0,
    pollAfterMs: 5_000,
  });
  assert.deepEqual(statusOf(task('running')), { state: 'running', progress: 42, pollAfterMs: 5_000 });
  assert.deepEqual(statusOf(task('running', { progress: 100 })), {
    state: 'running',
    progress: 99,
    pollAfterMs: 5_000,
  });
  assert.deepEqual(statusOf(task('success')), { state: 'succeeded' });
  assert.deepEqual(statusOf(task('failed', { error_code: 2002, error_msg: 'bad picture' })), {
    state: 'failed',
    code: 'generation_failed',
    reason: 'Tripo task failed (error_code 2002): bad picture',
  });
  assert.equal((statusOf(task('banned')) as { code: string }).code, 'content_refused');
  for (const gone of ['expired', 'unknown', 'cancelled'])
    assert.throws(() => statusOf(task(gone)), UpstreamRunLost, gone);
  assert.throws(
    () => statusOf(task('paused')),
    (error: unknown) => error instanceof GeneratorTransientError && !(error instanceof UpstreamRunLost),
  );
  assert.throws(() => taskOf({ status: 'running' }, 'status'), GeneratorTransientError);
});
