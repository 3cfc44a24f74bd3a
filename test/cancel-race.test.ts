/**
 * A cancel that loses the race against the worker's finish (found by the soak on PostgreSQL): the cancel
 * read the task as running, then its conditional update found it succeeded and changed nothing, yet it
 * answered 200. CONTRACT §3: a final task answers 409 task_not_cancelable.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { markRunning, markSucceeded } from '../src/tasks/transitions.ts';
import { balances, expectError, startTestApp, type TestAccount, type TestApp } from './helpers.ts';

describe('cancel racing the finish of a task', () => {
  let t: TestApp;
  let acct: TestAccount;
  before(async () => {
    t = await startTestApp({ worker: false });
    acct = await t.account({ balanceMinor: 100_000 });
  });
  after(() => t.close());

  test('a cancel that waits on the finishing transaction answers 409 task_not_cancelable', async () => {
    const created = await t.call(acct.key, 'POST', '/v1/tasks', {
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt: 'a chair' },
    });
    assert.equal(created.statusCode, 202, created.body);
    const id = created.json().id as string;
    const { db, dialect } = t.container.db;
    await dialect.transaction(db, (tx) => markRunning(tx, id, new Date()));
    const success = { caption: '', texts: [], filesExpireAt: new Date(Date.now() + 60_000), artifacts: [] };
    let cancel: ReturnType<TestApp['call']> | undefined;
    await dialect.transaction(db, async (tx) => {
      assert.ok(await markSucceeded(tx, id, success, new Date()));
      // The cancel starts while the finish is not committed: it reads `running`, then waits for the row.
      cancel = t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`);
      if (dialect.name === 'postgres') await waitForLockWaiter(db);
    });
    const res = await cancel!;
    expectError(res, 409, 'task_not_cancelable');
    const task = (await t.call(acct.key, 'GET', `/v1/tasks/${id}`)).json();
    assert.equal(task.status, 'succeeded');
    assert.equal((await balances(t, acct.id)).held_minor, 0);
  });
});

/** Waits until another session of this database waits for a row lock (PostgreSQL). */
async function waitForLockWaiter(db: TestApp['container']['db']['db']): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(db);
    if ((rows[0]?.n ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.fail('the cancel never waited for the finishing transaction');
}
