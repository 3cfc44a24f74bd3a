import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { balances, expectError, startTestApp, type TestApp } from './helpers.ts';

/**
 * A request that needs a row another transaction holds (a worker frozen mid-transaction, a slow one) gives
 * up after a few seconds with a retryable answer instead of waiting for the 30 s statement timeout, and
 * changes nothing; the worker's own transactions still wait for the row.
 */
describe('a request behind a held row lock', () => {
  let t: TestApp;
  before(async () => {
    // No worker: the task stays queued until the test cancels it.
    t = await startTestApp({ worker: false });
  });
  after(() => t.close());

  /**
   * Holds the task's row from a connection of its own, as a stuck transaction would: PostgreSQL `SELECT …
   * FOR UPDATE` in an open transaction; SQLite, which locks the whole database, `BEGIN IMMEDIATE`.
   */
  async function holdTaskRow(taskId: string): Promise<() => Promise<void>> {
    const url = t.container.config.databaseUrl;
    if (url.startsWith('sqlite:')) {
      const other = new SqliteDatabase(url.slice('sqlite:'.length));
      other.exec('begin immediate');
      return async () => {
        other.exec('rollback');
        other.close();
      };
    }
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    await other.query('begin');
    await other.query('select id from tasks where id = $1 for update', [taskId]);
    return async () => {
      await other.query('rollback');
      await other.end();
    };
  }

  async function queuedTask(): Promise<{ key: string; accountId: string; taskId: string }> {
    const acct = await t.account({ balanceMinor: 10_000 });
    const created = await t.call(acct.key, 'POST', '/v1/tasks', {
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt: 'a chair', texture: false, pbr: false },
    });
    assert.equal(created.statusCode, 202, created.body);
    return { key: acct.key, accountId: acct.id, taskId: created.json().id as string };
  }

  test('a cancel answers 500 internal_error with Retry-After within seconds, and succeeds once the row is free', async () => {
    const { key, accountId, taskId } = await queuedTask();
    const taskBefore = (await t.call(key, 'GET', `/v1/tasks/${taskId}`)).json();
    const walletBefore = await balances(t, accountId);
    assert.ok(walletBefore.held_minor > 0);

    const release = await holdTaskRow(taskId);
    let answer: Awaited<ReturnType<TestApp['call']>>;
    const started = performance.now();
    try {
      answer = await t.call(key, 'POST', `/v1/tasks/${taskId}/cancel`);
    } finally {
      // Answered before the row is given back: the request did not wait for it.
      await release();
    }
    const waitedMs = performance.now() - started;
    expectError(answer, 500, 'internal_error');
    assert.equal(answer.headers['retry-after'], '5');
    assert.match(answer.json().error.message, /retry in a few seconds/i);
    // The request lock timeout (3 s; SQLite's busy_timeout, 5 s), far below the 30 s statement timeout.
    assert.ok(waitedMs < 10_000, `answered after ${Math.round(waitedMs)} ms`);

    // The transaction rolled back whole: the task and the wallet are as they were.
    const taskAfter = (await t.call(key, 'GET', `/v1/tasks/${taskId}`)).json();
    assert.deepEqual(taskAfter, taskBefore);
    assert.deepEqual(await balances(t, accountId), walletBefore);

    const again = await t.call(key, 'POST', `/v1/tasks/${taskId}/cancel`);
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().status, 'canceled');
    const walletAfter = await balances(t, accountId);
    assert.equal(walletAfter.held_minor, 0);
    assert.equal(walletAfter.balance_minor, walletBefore.balance_minor);
  });

  test("a transaction outside requests (the worker's) waits for the row past the request's bound", {
    skip: !process.env.TEST_DATABASE_URL && 'PostgreSQL only: SQLite has one bound for all, busy_timeout',
  }, async () => {
    const { taskId } = await queuedTask();
    const { db, dialect } = t.container.db;
    const release = await holdTaskRow(taskId);
    let settled = false;
    const update = dialect
      .transaction(db, (tx) =>
        tx.updateTable('tasks').set({ progress: 1 }).where('id', '=', taskId).executeTakeFirst(),
      )
      .finally(() => {
        settled = true;
      });
    try {
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      assert.equal(settled, false, 'the transaction gave up waiting');
    } finally {
      await release();
    }
    assert.equal((await update).numUpdatedRows, 1n);
    const { rows } = await sql<{ progress: number }>`select progress from tasks where id = ${taskId}`.execute(
      db,
    );
    assert.equal(Number(rows[0]?.progress), 1);
  });
});
