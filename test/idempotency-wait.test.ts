/**
 * A request that waits for the original under its Idempotency-Key (`IdempotencyStore.run`'s `waitMs`, the
 * dashboard's top-up form): it lands on the original's resource, or creates when the original was refused,
 * and gives up with 409 request_in_progress after its bound. Without `waitMs` (the API, CONTRACT §4) the
 * 409 comes at once. On SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { errors, isApiError } from '../src/errors.ts';
import { IdempotencyStore } from '../src/tasks/idempotency.ts';
import { startTestApp, type TestApp } from './helpers.ts';

describe('Idempotency-Key: waiting for the original', () => {
  let t: TestApp;
  let store: IdempotencyStore;
  before(async () => {
    t = await startTestApp({ worker: false });
    store = new IdempotencyStore({ db: t.container.db, clock: t.container.clock });
  });
  after(() => t.close());

  /** A creation under `key` that holds it until `finish` is called with its outcome. */
  function held(accountId: string, key: string, waitMs = 0) {
    let finish: (outcome: 'create' | 'refuse') => void = () => {};
    const outcome = new Promise<'create' | 'refuse'>((resolve) => (finish = resolve));
    let created = 0;
    const run = (wait: number) =>
      store.run(
        { accountId, key, scope: 'POST /test', body: { n: 1 }, waitMs: wait },
        {
          replay: async (id, status) => ({ id, status, replayed: true }),
          create: async (complete) => {
            created++;
            const id = `r_${created}`;
            if ((await outcome) === 'refuse') throw errors.invalidRequest({ en: 'no', ru: 'нет' });
            await t.container.db.dialect.transaction(t.container.db.db, (tx) => complete!(tx, 201, id));
            return { id, status: 201, replayed: false };
          },
        },
      );
    return { first: run(waitMs), run, finish, created: () => created };
  }

  const inProgress = (error: unknown) => isApiError(error) && error.code === 'request_in_progress';

  test('a waiting second request lands on the original; one without waitMs is 409 at once', async () => {
    const acct = await t.account();
    const h = held(acct.id, 'wait-1');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = performance.now();
    await assert.rejects(h.run(0), inProgress);
    assert.ok(performance.now() - started < 1_000, 'the API does not wait');
    const second = h.run(15_000);
    setTimeout(() => h.finish('create'), 400);
    const [a, b] = await Promise.all([h.first, second]);
    assert.deepEqual(a, { id: 'r_1', status: 201, replayed: false });
    assert.deepEqual(b, { id: 'r_1', status: 201, replayed: true });
    assert.equal(h.created(), 1, 'one creation');
  });

  test('two concurrent waiting requests make one resource and both land on it', async () => {
    const acct = await t.account();
    const h = held(acct.id, 'wait-2', 15_000);
    const second = h.run(15_000);
    setTimeout(() => h.finish('create'), 300);
    const answers = await Promise.all([h.first, second]);
    assert.equal(h.created(), 1, 'one creation');
    assert.deepEqual(
      answers.map((a) => a.id),
      ['r_1', 'r_1'],
    );
    assert.deepEqual(answers.map((a) => a.replayed).sort(), [false, true]);
  });

  test('the original refused: the waiting request takes the key and creates', async () => {
    const acct = await t.account();
    const h = held(acct.id, 'wait-3');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = h.run(15_000);
    setTimeout(() => h.finish('refuse'), 300);
    await assert.rejects(h.first, (error) => isApiError(error) && error.code === 'invalid_request');
    // The second creation reads the same outcome, which is now "refuse": it ran, under its own claim.
    await assert.rejects(second, (error) => isApiError(error) && error.code === 'invalid_request');
    assert.equal(h.created(), 2, 'the waiting request created in its turn');
  });

  test('the wait is bounded: 409 request_in_progress after waitMs', async () => {
    const acct = await t.account();
    const h = held(acct.id, 'wait-4');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = performance.now();
    await assert.rejects(h.run(500), inProgress);
    const waited = performance.now() - started;
    assert.ok(waited >= 450 && waited < 3_000, `waited ${waited} ms`);
    h.finish('create');
    await h.first;
  });
});
