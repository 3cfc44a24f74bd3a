/**
 * Provider copies of deleted library records (src/libraries/upstream-deletes.ts): a record made at a
 * provider owes a deletion there from the DELETE on; one pass asks the channel that made it; a provider
 * that cannot be asked is asked again later, for a week at most; a refusal for good ends the attempts;
 * two passes at once ask once; records the simulator keeps owe nothing.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import {
  GenerationError,
  GeneratorUnavailable,
  type LibraryGenerator,
  type RecordDeletion,
} from '../src/generators/index.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { uuidv7 } from '../src/lib/index.ts';
import { toRow } from '../src/libraries/records.ts';
import {
  deleteUpstreamCopies,
  UPSTREAM_DELETE_GIVE_UP_MS,
  UPSTREAM_DELETE_RETRY_MS,
} from '../src/libraries/upstream-deletes.ts';
import { startTestApp, type TestAccount, type TestApp } from './helpers.ts';
import { uploadMp3 } from './providers-kit.ts';

let t: TestApp;
let account: TestAccount;
const clock = new ManualClock('2026-06-01T12:00:00.000Z');

/** A deleting generator whose next answers the test chooses; it records what it was asked. */
class DeletingGenerator {
  asked: RecordDeletion[] = [];
  failWith: Error | null = null;
  readonly asLibrary = {
    deleteRecord: async (request: RecordDeletion): Promise<void> => {
      this.asked.push(request);
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (this.failWith) throw this.failWith;
    },
  } as unknown as LibraryGenerator;
}

let generator: DeletingGenerator;
const asked: string[] = [];

function deps(onGiveUp?: (id: string, error: unknown) => void) {
  return {
    db: t.container.db,
    clock,
    generatorAt: async (channel: string) => {
      asked.push(channel);
      return generator.asLibrary;
    },
    ...(onGiveUp ? { onGiveUp } : {}),
  };
}

/** A deleted record made at channel `eleven` with upstream id `up-<n>`, due for its provider deletion. */
async function deletedRecord(deletedAt: Date, upstream = true): Promise<string> {
  const id = uuidv7();
  const at = deletedAt.toISOString();
  await t.container.db.db
    .insertInto('library_records')
    .values({
      ...toRow({
        id,
        accountId: account.id,
        model: 'voice',
        library: 'voices',
        name: 'Gone',
        status: 'ready',
        data: {},
        private: upstream ? { channel: 'eleven', upstream_id: `up-${id}` } : {},
        uniqueKey: null,
        error: null,
        createdAt: at,
        updatedAt: at,
        readyAt: null,
        deletedAt: at,
      }),
      upstream_delete_at: upstream ? at : null,
    })
    .execute();
  return id;
}

async function dueAt(id: string): Promise<string | null> {
  const row = await t.container.db.db
    .selectFrom('library_records')
    .select('upstream_delete_at')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return row.upstream_delete_at;
}

before(async () => {
  t = await startTestApp({ worker: false });
  account = await t.account();
});

after(async () => {
  await t.close();
});

beforeEach(async () => {
  generator = new DeletingGenerator();
  asked.length = 0;
  // Every test starts with no record owed a deletion.
  await t.container.db.db.updateTable('library_records').set({ upstream_delete_at: null }).execute();
});

describe('provider copies of deleted records', () => {
  test('one pass asks the channel that made the record, then nothing is owed', async () => {
    const id = await deletedRecord(clock.now());
    assert.equal(await deleteUpstreamCopies(deps()), 1);
    assert.deepEqual(asked, ['eleven']);
    assert.deepEqual(generator.asked, [
      { model: 'voice', library: 'voices', recordId: id, upstreamId: `up-${id}` },
    ]);
    assert.equal(await dueAt(id), null);
    assert.equal(await deleteUpstreamCopies(deps()), 0);
    assert.equal(generator.asked.length, 1);
  });

  test('a provider that cannot be asked is asked again after the retry time, not before', async () => {
    const id = await deletedRecord(clock.now());
    generator.failWith = new GeneratorUnavailable('busy');
    assert.equal(await deleteUpstreamCopies(deps()), 0);
    assert.equal(await dueAt(id), new Date(clock.now().getTime() + UPSTREAM_DELETE_RETRY_MS).toISOString());
    assert.equal(await deleteUpstreamCopies(deps()), 0);
    assert.equal(generator.asked.length, 1, 'not asked again before the retry time');
    generator.failWith = null;
    clock.advance(UPSTREAM_DELETE_RETRY_MS);
    assert.equal(await deleteUpstreamCopies(deps()), 1);
    assert.equal(generator.asked.length, 2);
    assert.equal(await dueAt(id), null);
  });

  test('after a week of failures the attempts end with a warning', async () => {
    const id = await deletedRecord(new Date(clock.now().getTime() - UPSTREAM_DELETE_GIVE_UP_MS));
    generator.failWith = new GeneratorUnavailable('gone for good');
    const given: string[] = [];
    assert.equal(await deleteUpstreamCopies(deps((recordId) => given.push(recordId))), 1);
    assert.deepEqual(given, [id]);
    assert.equal(await dueAt(id), null);
  });

  test('a refusal for good ends the attempts at once', async () => {
    const id = await deletedRecord(clock.now());
    generator.failWith = new GenerationError('generation_failed', 'the voice is in use');
    const given: string[] = [];
    assert.equal(await deleteUpstreamCopies(deps((recordId) => given.push(recordId))), 1);
    assert.deepEqual(given, [id]);
    assert.equal(await dueAt(id), null);
  });

  test('two passes at once ask the provider once', async () => {
    await deletedRecord(clock.now());
    const passes = await Promise.all([deleteUpstreamCopies(deps()), deleteUpstreamCopies(deps())]);
    assert.equal(passes[0] + passes[1], 1);
    assert.equal(generator.asked.length, 1);
  });

  test('a record due later is left alone until then', async () => {
    const id = await deletedRecord(new Date(clock.now().getTime() + 60_000));
    assert.equal(await deleteUpstreamCopies(deps()), 0);
    assert.equal(generator.asked.length, 0);
    assert.notEqual(await dueAt(id), null);
  });
});

test('deleting a record the simulator keeps owes no provider deletion', async () => {
  const created = await t.call(account.key, 'POST', '/v1/models/voice/voices', {
    name: 'Sim voice',
    sample_urls: [await uploadMp3(t, account.key, 'sim-voice')],
  });
  if (created.statusCode !== 201) return assert.fail(created.body);
  const id = created.json().id as string;
  const deleted = await t.call(account.key, 'DELETE', `/v1/models/voice/voices/${id}`);
  assert.equal(deleted.statusCode, 204);
  assert.equal(await dueAt(id), null);
});
