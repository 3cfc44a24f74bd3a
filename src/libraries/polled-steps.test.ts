import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GeneratorUnavailable, type LibraryGenerator, LibrarySimulator } from '../generators/index.ts';
import { applyAnswer, POLLED_STEP_LIMIT_MS, stepAsker } from './polled-steps.ts';
import { settled } from './records.ts';
import type { StoredRecord } from './types.ts';

const NOW = new Date('2026-01-01T00:00:10.000Z');

function verifying(): StoredRecord {
  return {
    id: 'v1',
    accountId: 'a1',
    model: 'music',
    library: 'voices',
    name: null,
    status: 'verifying',
    data: { language: 'en', phrase: 'la la' },
    private: {
      upstream_id: 'validate-1',
      next: { status: 'ready', name: 'Anna' },
      poll: { step: 'verify', upstreamId: 'verify-1', pollMs: 5_000 },
    },
    uniqueKey: null,
    error: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    readyAt: '2026-01-01T00:00:03.000Z',
    deletedAt: null,
  };
}

test('a polled step is not ended by the clock', () => {
  const r = verifying();
  assert.equal(settled(r, NOW), r);
});

test('answers: running asks again later, done applies the step and the new upstream id, failed keeps the reason', () => {
  const running = applyAnswer(verifying(), { state: 'running' }, NOW);
  assert.equal(running.status, 'verifying');
  assert.equal(running.readyAt, '2026-01-01T00:00:15.000Z');
  assert.ok(running.private.poll);

  const done = applyAnswer(verifying(), { state: 'done', upstreamId: 'voice-9' }, NOW);
  assert.equal(done.status, 'ready');
  assert.equal(done.name, 'Anna');
  assert.equal(done.readyAt, null);
  assert.equal(done.private.upstream_id, 'voice-9');
  assert.equal(done.private.poll, undefined);
  assert.equal(done.private.next, undefined);

  const failed = applyAnswer(verifying(), { state: 'failed', reason: 'no match' }, NOW);
  assert.equal(failed.status, 'failed');
  assert.equal(failed.error, 'no match');
  assert.equal(failed.name, null);
  assert.equal(failed.private.upstream_id, 'validate-1');
});

test('the asker asks only due steps, with the step and upstream id, and keeps the record when the generator is busy', async () => {
  const asked: unknown[] = [];
  const generator: LibraryGenerator = Object.assign(new LibrarySimulator({ simSpeed: 1 }), {
    settle: async (request: unknown) => {
      asked.push(request);
      return { state: 'done' as const, upstreamId: 'voice-1' };
    },
  });
  const ask = stepAsker(async () => generator);
  const early = verifying();
  assert.equal(await ask(early, new Date('2026-01-01T00:00:01.000Z')), early);
  assert.equal(asked.length, 0);
  assert.equal((await ask(verifying(), NOW)).status, 'ready');
  assert.deepEqual(asked, [
    { model: 'music', library: 'voices', recordId: 'v1', step: 'verify', upstreamId: 'verify-1' },
  ]);
  const busy = stepAsker(async () => {
    throw new GeneratorUnavailable('busy');
  });
  const r = verifying();
  assert.equal(await busy(r, NOW), r);
});

test('a step the generator still runs an hour after it began fails the record; before that it is asked again', async () => {
  const running = stepAsker(
    async () => ({ settle: async () => ({ state: 'running' }) }) as unknown as LibraryGenerator,
  );
  const began = Date.parse(verifying().updatedAt);
  const early = await running(verifying(), new Date(began + POLLED_STEP_LIMIT_MS - 1));
  assert.equal(early.status, 'verifying');
  assert.ok(early.private.poll);
  const late = await running(verifying(), new Date(began + POLLED_STEP_LIMIT_MS));
  assert.equal(late.status, 'failed');
  assert.match(String(late.error), /did not end the step within an hour/);
  assert.equal(late.readyAt, null, 'not asked again');
  assert.equal(late.private.poll, undefined);
  assert.equal(late.name, null, 'the step did not give its name');
});
