import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GenerationError, GeneratorTransientError } from '../../generator.ts';
import { ChannelOutOfCredit } from '../types.ts';
import { failureOf, isFinished } from './adapter.ts';
import { fileStem, sunoCreateCall } from './bodies.ts';
import { readSunoTask, type SunoTask } from './record.ts';
import { envelopeData } from './wire.ts';

const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
  status,
  headers: new Headers(headers),
  body,
});

const classOf = (fn: () => unknown): string => {
  try {
    fn();
    return 'ok';
  } catch (error) {
    if (error instanceof ChannelOutOfCredit) return 'no credit';
    if (error instanceof GeneratorTransientError) return 'transient';
    if (error instanceof GenerationError) return error.code;
    throw error;
  }
};

test('the body code decides, whatever the HTTP status (PROVIDERS.md §2)', () => {
  const cases: [number, unknown, string][] = [
    [200, { code: 200, msg: 'success', data: { taskId: 't' } }, 'ok'],
    [500, { code: 200, msg: 'success', data: { taskId: 't' } }, 'ok'],
    [200, { code: 401, msg: 'unauthorized' }, 'transient'],
    [200, { code: 405, msg: 'rate limited' }, 'transient'],
    [200, { code: 430, msg: 'too frequent' }, 'transient'],
    [200, { code: 455, msg: 'maintenance' }, 'transient'],
    [200, { code: 500, msg: 'server error' }, 'transient'],
    [200, { code: 429, msg: 'insufficient credits' }, 'no credit'],
    [400, { code: 400, msg: 'bad parameters' }, 'generation_failed'],
    [200, { code: 413, msg: 'text too long' }, 'generation_failed'],
    [200, { code: 404, msg: 'not found' }, 'generation_failed'],
    [503, null, 'transient'],
    [429, 'busy', 'transient'],
    [200, { data: {} }, 'transient'],
    [404, null, 'transient'],
  ];
  for (const [status, body, expected] of cases) {
    assert.equal(
      classOf(() => envelopeData(answer(status, body), 'x')),
      expected,
      JSON.stringify([status, body]),
    );
  }
});

test('a transient body code keeps the provider’s Retry-After', () => {
  try {
    envelopeData(answer(200, { code: 430 }, { 'retry-after': '4' }), 'x');
    assert.fail('no error');
  } catch (error) {
    assert.ok(error instanceof GeneratorTransientError);
    assert.equal(error.retryAfterMs, 4_000);
  }
});

test('task states: content refusals, failures with their codes, the rest not final', () => {
  const task = (status: string, errorCode: number | null = null): SunoTask =>
    readSunoTask({ status, errorCode, errorMessage: 'why', response: { sunoData: [] } });
  assert.equal(failureOf(task('SENSITIVE_WORD_ERROR'))?.state, 'failed');
  const code = (t: SunoTask) => {
    const failure = failureOf(t);
    return failure?.state === 'failed' ? failure.code : null;
  };
  assert.equal(code(task('SENSITIVE_WORD_ERROR')), 'content_refused');
  assert.equal(code(task('GENERATE_AUDIO_FAILED', 400)), 'content_refused');
  assert.equal(code(task('CREATE_TASK_FAILED', 413)), 'content_refused');
  assert.equal(code(task('GENERATE_AUDIO_FAILED', 501)), 'generation_failed');
  assert.equal(code(task('CREATE_TASK_FAILED')), 'generation_failed');
  for (const running of ['PENDING', 'TEXT_SUCCESS', 'FIRST_SUCCESS', 'SUCCESS', 'CALLBACK_EXCEPTION']) {
    assert.equal(failureOf(task(running)), null, running);
  }
  assert.equal(
    classOf(() => task('WHATEVER')),
    'transient',
  );
  assert.equal(
    classOf(() => readSunoTask(null)),
    'transient',
  );
});

test('extend’s default title is the link’s file name without extension', () => {
  assert.equal(fileStem('https://h/files/tok/my%20demo.mp3'), 'my demo');
  assert.equal(fileStem('https://h/files/tok/archive.tar.gz'), 'archive.tar');
  assert.equal(fileStem('https://h/'), 'Track');
  // Cut by characters: 80 whole emoji, never half of one.
  assert.equal(
    fileStem(`https://h/files/tok/a${encodeURIComponent('😀'.repeat(100))}.mp3`),
    `a${'😀'.repeat(79)}`,
  );
});

test('extend’s default title of a result file used as input is that file’s name, not the link’s index', () => {
  // An artifact link (/v1/tasks/{id}/artifacts/0) reaches Suno as the direct link lent for its file.
  const artifact = 'http://127.0.0.1:8080/v1/tasks/01a22a66-320d-70c1-be08-48de9998f1b0/artifacts/0';
  const lent = 'https://api.example.test/files/AbCdEfGhIjKlMnOpQrStUvWxYz012345/my-song-v1.mp3';
  const ctx = {
    model: 'V6',
    callBackUrl: 'https://cb',
    publicUrl: (u: string) => (u === artifact ? lent : u),
  };
  const settings = { mode: 'extend', audio: [artifact], continueAt: 10, style: 'folk', instrumental: true };
  const { body } = sunoCreateCall('extend', settings, ctx);
  assert.equal(body['uploadUrl'], lent);
  assert.equal(body['title'], 'my-song-v1');
});

test('a mode suno does not serve is a final failure before any call', () => {
  const ctx = { model: 'V6', callBackUrl: 'https://cb', publicUrl: (u: string) => u };
  assert.equal(
    classOf(() => sunoCreateCall('karaoke', {}, ctx)),
    'generation_failed',
  );
});

test('finished: SUCCESS with any audio, CALLBACK_EXCEPTION only with every track', () => {
  const task = (status: string, audio: number): SunoTask =>
    readSunoTask({
      status,
      response: {
        sunoData: [0, 1].map((i) => ({ id: `a${i}`, audioUrl: i < audio ? `https://x/${i}.mp3` : '' })),
      },
    });
  assert.equal(isFinished(task('SUCCESS', 2), 'generate'), true);
  assert.equal(isFinished(task('SUCCESS', 1), 'generate'), true);
  assert.equal(isFinished(task('SUCCESS', 0), 'generate'), false);
  assert.equal(isFinished(task('CALLBACK_EXCEPTION', 1), 'generate'), false);
  assert.equal(isFinished(task('CALLBACK_EXCEPTION', 2), 'generate'), true);
  assert.equal(isFinished(task('CALLBACK_EXCEPTION', 1), 'sounds'), true);
  assert.equal(isFinished(task('FIRST_SUCCESS', 1), 'generate'), false);
});
