import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { entriesOf } from '../src/ledger/index.ts';
import { markCanceled, markRunning, markSucceeded } from '../src/tasks/transitions.ts';
import { expectError, someoneWaitsForALock, startTestApp, type TestApp } from './helpers.ts';

describe('cancel racing a completion', () => {
  let t: TestApp;
  before(async () => {
    // No worker: the test moves the task itself, at the moment it chooses.
    t = await startTestApp({ worker: false });
  });
  after(() => t.close());

  test('[10.2] a cancel that loses the race to a completion answers 409 task_not_cancelable', async () => {
    const acct = await t.account({ balanceMinor: 10_000 });
    const created = await t.call(acct.key, 'POST', '/v1/tasks', {
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt: 'a chair', texture: false, pbr: false },
    });
    assert.equal(created.statusCode, 202, created.body);
    const taskId = created.json().id as string;
    const { db, dialect } = t.container.db;
    await dialect.transaction(db, (tx) => markRunning(tx, taskId, new Date(), `test-run:${taskId}`));
    // The worker's completion is committing (its row lock held) while the cancel arrives.
    let commit = (): void => {};
    const gate = new Promise<void>((resolve) => {
      commit = resolve;
    });
    const completion = dialect.transaction(db, async (tx) => {
      const moved = await markSucceeded(
        tx,
        taskId,
        { caption: '', texts: [], artifacts: [] },
        new Date(),
        60_000,
      );
      await gate;
      return moved;
    });
    const cancel = t.call(acct.key, 'POST', `/v1/tasks/${taskId}/cancel`);
    await someoneWaitsForALock(t);
    commit();
    assert.equal(await completion, true);
    const answer = await cancel;
    expectError(answer, 409, 'task_not_cancelable');
    const task = (await t.call(acct.key, 'GET', `/v1/tasks/${taskId}`)).json();
    assert.equal(task.status, 'succeeded');
    const ledger = (await t.admin('GET', `/admin/v1/accounts/${acct.id}/ledger`)).json().entries as Array<{
      type: string;
    }>;
    assert.deepEqual(ledger.map((e) => e.type).sort(), ['capture', 'credit', 'hold']);
  });

  test('ten cancels of one running task at once: one is 200, the others 409, the hold voided once', async () => {
    const acct = await t.account({ balanceMinor: 10_000, dailyLimitMinor: 1_500 });
    const body = {
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt: 'a chair', texture: false, pbr: false },
    };
    const created = await t.call(acct.key, 'POST', '/v1/tasks', body);
    assert.equal(created.statusCode, 202, created.body);
    const taskId = created.json().id as string;
    const { db, dialect } = t.container.db;
    await dialect.transaction(db, (tx) => markRunning(tx, taskId, new Date(), `test-run:${taskId}`));
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => t.call(acct.key, 'POST', `/v1/tasks/${taskId}/cancel`)),
    );
    const codes = answers.map((a) => a.statusCode).sort();
    assert.deepEqual(codes, [200, 409, 409, 409, 409, 409, 409, 409, 409, 409], answers[0]?.body);
    for (const answer of answers.filter((a) => a.statusCode === 409)) {
      expectError(answer, 409, 'task_not_cancelable');
    }
    const { entries } = await entriesOf(db, acct.id);
    assert.deepEqual(
      entries.map((e) => [e.type, e.amount_minor]),
      [
        ['void', 1_500],
        ['hold', 1_500],
        ['credit', 10_000],
      ],
    );
    // The key's day got the amount back once: the whole limit is there again, no more.
    const me = (await t.call(acct.key, 'GET', '/v1/me')).json();
    assert.equal(me.spent_today_minor, 0);
    assert.equal(me.available_minor, 10_000);
    const again = await t.call(acct.key, 'POST', '/v1/tasks', body);
    assert.equal(again.statusCode, 202, again.body);
  });

  test('a creation that waited for the money a cancel released is held after that release in the ledger', async () => {
    const acct = await t.account({ balanceMinor: 400 });
    const body = { model: 'image', settings: { prompt: 'a fox' } };
    const first = await t.call(acct.key, 'POST', '/v1/tasks', body);
    assert.equal(first.statusCode, 202, first.body);
    const { db, dialect } = t.container.db;
    // A cancel holds the account's row while a creation that arrived before it waits for that row; the
    // creation's hold then uses the money the cancel released.
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let second: Promise<{ statusCode: number; body: string }> | null = null;
    const cancel = dialect.transaction(db, async (tx) => {
      await dialect.lockAccount(tx, acct.id);
      second = t.call(acct.key, 'POST', '/v1/tasks', body);
      await gate;
      const now = t.container.clock.now();
      const canceled = await markCanceled(tx, first.json().id as string, now, 0);
      // Its commit a little after its time, so the two entries never share a millisecond.
      await new Promise((resolve) => setTimeout(resolve, 5));
      return canceled;
    });
    await someoneWaitsForALock(t);
    release();
    assert.equal(await cancel, true);
    assert.ok(second);
    const created = await (second as Promise<{ statusCode: number; body: string }>);
    assert.equal(created.statusCode, 202, created.body);
    // Newest first, each with the money available right after it: never below zero, as it never was.
    const { entries } = await entriesOf(db, acct.id);
    assert.deepEqual(
      entries.map((e) => [e.type, e.available_after_minor]),
      [
        ['hold', 0],
        ['void', 400],
        ['hold', 0],
        ['credit', 400],
      ],
    );
  });
});
