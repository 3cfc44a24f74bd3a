import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChannelOutOfCredit } from '../adapters/types.ts';
import { GeneratorUnavailable } from '../generator.ts';
import { type LibraryGenerator, LibraryRejected } from '../library.ts';
import { channelLibrary } from './channel-library.ts';

const signal = AbortSignal.timeout(5_000);
const create = { model: 'image', library: 'styles', recordId: 'r1', fields: {} };

/** A library side whose every call throws `failure` (or answers when it is null). */
function library(failure: Error | null, withOptional = true): LibraryGenerator {
  const answer = async <T>(value: T): Promise<T> => {
    if (failure) throw failure;
    return value;
  };
  return {
    ensureAvailable: () => answer(undefined),
    createRecord: () => answer({ data: { cover_url: null } }),
    issuePhrase: () => answer('la la la'),
    checkRecording: () => answer({ afterMs: 1, pollMs: 1 }),
    runHelper: () => answer({ prompt: 'richer' }) as never,
    ...(withOptional
      ? { settle: () => answer({ state: 'done' as const }), deleteRecord: () => answer(undefined) }
      : {}),
  };
}

test('no credit disables the channel once per call and answers GeneratorUnavailable', async () => {
  const told: string[] = [];
  const guarded = channelLibrary(library(new ChannelOutOfCredit('code 429: no credits')), async (error) => {
    told.push(error.message);
  });
  const calls: Array<() => Promise<unknown>> = [
    () => guarded.createRecord(create, signal),
    () => guarded.runHelper('enhance', { prompt: 'a cat' }, signal),
    () => guarded.issuePhrase({ recordId: 'r1', attempt: 1, language: 'en', avoid: [] }, signal),
    () => guarded.settle?.({ ...create, step: 'create', upstreamId: 'u1' }, signal) ?? Promise.resolve(),
    () => guarded.deleteRecord?.({ ...create, upstreamId: 'u1' }, signal) ?? Promise.resolve(),
  ];
  for (const call of calls) {
    await assert.rejects(
      call(),
      (error: unknown) => error instanceof GeneratorUnavailable && error.cause instanceof ChannelOutOfCredit,
    );
  }
  assert.deepEqual(told, Array(calls.length).fill('code 429: no credits'));
});

test('no credit wrapped by the adapter is found among the causes', async () => {
  let told = 0;
  const wrapped = new GeneratorUnavailable('busy', { cause: new ChannelOutOfCredit('quota') });
  const guarded = channelLibrary(library(wrapped), async () => {
    told += 1;
  });
  await assert.rejects(guarded.createRecord(create, signal), GeneratorUnavailable);
  assert.equal(told, 1);
});

test('answers and other failures pass unchanged, and the channel is left alone', async () => {
  let told = 0;
  const outOfCredit = async (): Promise<void> => {
    told += 1;
  };
  assert.deepEqual(await channelLibrary(library(null), outOfCredit).createRecord(create, signal), {
    data: { cover_url: null },
  });
  const refused = new LibraryRejected('no');
  await assert.rejects(channelLibrary(library(refused), outOfCredit).createRecord(create, signal), refused);
  const busy = new GeneratorUnavailable('busy');
  await assert.rejects(
    channelLibrary(library(busy), outOfCredit).runHelper('enhance', { prompt: 'x' }, signal),
    busy,
  );
  assert.equal(told, 0);
});

test('settle and deleteRecord are there only when the library side has them', () => {
  const bare = channelLibrary(library(null, false), async () => {});
  assert.equal(bare.settle, undefined);
  assert.equal(bare.deleteRecord, undefined);
  const full = channelLibrary(library(null), async () => {});
  assert.equal(typeof full.settle, 'function');
  assert.equal(typeof full.deleteRecord, 'function');
});
