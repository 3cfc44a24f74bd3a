import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Tx } from '../src/db/index.ts';
import {
  jobIdOf,
  markCanceled,
  markRunningTogether,
  markSucceededTogether,
  runsStarting,
  runsSucceeding,
  type Success,
  saveHandleTogether,
} from '../src/tasks/transitions.ts';
import {
  expectError,
  someoneWaitsForALock,
  startTestApp,
  type TestAccount,
  type TestApp,
} from './helpers.ts';

// The worker's runs start, save their handles and end in batches (src/db/batches.ts): one set-based
// transaction for the runs that move at the same moment. A batch must do what one call after another
// would: each task moved once, its event queued, its hold captured once in the transaction of its move,
// its job removed and its place under the active-task limit given back; a task canceled meanwhile is left
// as the cancel left it. The ledger's invariants are checked after every test (TestApp.close).

describe('transitions of runs that move together', () => {
  let t: TestApp;
  before(async () => {
    // No worker: the test moves the tasks itself. Loopback webhook addresses are allowed (never called:
    // no sender runs, deliveries stay queued).
    t = await startTestApp({ worker: false, env: { FETCH_ALLOW_ADDRESSES: '127.0.0.1' } });
  });
  after(() => t.close());

  const body = {
    model: 'model-3d',
    settings: { task_type: 'text_to_model', prompt: 'a chair', texture: false, pbr: false },
  };

  /** `count` queued tasks of each account, with their prices. */
  async function queued(accounts: TestAccount[], count: number) {
    const tasks: Array<{ id: string; account: TestAccount; price: number }> = [];
    for (const account of accounts) {
      for (let i = 0; i < count; i += 1) {
        const res = await t.call(account.key, 'POST', '/v1/tasks', body);
        assert.equal(res.statusCode, 202, res.body);
        tasks.push({ id: res.json().id, account, price: Number(res.json().price.amount_minor) });
      }
    }
    return tasks;
  }

  function success(taskId: string, files = 0): Success {
    return {
      caption: `made ${taskId}`,
      texts: ['a', 'b'],
      artifacts: Array.from({ length: files }, (_, idx) => ({
        kind: 'document',
        filename: `m${idx}.glb`,
        contentType: 'model/gltf-binary',
        sizeBytes: 10 + idx,
        caption: '',
        storageKey: `results/${taskId}/x/${idx}`,
      })),
    };
  }

  /** The ledger entries of a task, by type. */
  async function entriesOf(taskId: string) {
    const rows = await t.container.db.db
      .selectFrom('ledger_entries')
      .selectAll()
      .where('task_id', '=', taskId)
      .orderBy('type')
      .execute();
    return rows.map((e) => ({ ...e, amount_minor: Number(e.amount_minor) }));
  }

  async function row(taskId: string) {
    return t.container.db.db
      .selectFrom('tasks')
      .selectAll()
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
  }

  test('runs that start, save their handles and end together: each moved once and captured once', async () => {
    const accounts = [await t.account({ balanceMinor: 100_000 }), await t.account({ balanceMinor: 100_000 })];
    const tasks = await queued(accounts, 3);
    const handle = t.container.db;
    const before = new Map(
      await Promise.all(tasks.map(async (task) => [task.id, await row(task.id)] as const)),
    );
    const at = new Date(Date.now() + 1_000);
    const started = await Promise.all(
      tasks.map((task, i) =>
        markRunningTogether(handle, {
          taskId: task.id,
          at: new Date(at.getTime() + i),
          runKey: `${task.id}/1`,
        }),
      ),
    );
    assert.deepEqual(
      started,
      tasks.map(() => true),
    );
    // A second start of a running task changes nothing.
    assert.equal(await markRunningTogether(handle, { taskId: tasks[0]?.id ?? '', at, runKey: 'x' }), false);
    for (const [i, task] of tasks.entries()) {
      const moved = await row(task.id);
      assert.equal(moved.status, 'running');
      assert.equal(moved.run_key, `${task.id}/1`);
      assert.equal(moved.started_at, new Date(at.getTime() + i).toISOString());
      assert.equal(Number(moved.revision), Number(before.get(task.id)?.revision) + 1);
    }
    // One task is canceled by its caller between the start and the end.
    const [canceled, ...others] = tasks;
    assert.ok(canceled);
    const cancel = await t.call(canceled.account.key, 'POST', `/v1/tasks/${canceled.id}/cancel`);
    assert.equal(cancel.statusCode, 200, cancel.body);
    const saved = await Promise.all(
      tasks.map((task) => saveHandleTogether(handle, { taskId: task.id, handle: `h-${task.id}` })),
    );
    assert.deepEqual(saved, [false, ...others.map(() => true)]);
    const end = new Date(Date.now() + 5_000);
    const ended = await Promise.all(
      tasks.map((task, i) =>
        markSucceededTogether(handle, {
          taskId: task.id,
          success: success(task.id, i % 3),
          at: new Date(end.getTime() + i),
          retentionMs: 60_000,
        }),
      ),
    );
    assert.deepEqual(ended, [false, ...others.map(() => true)]);
    for (const [i, task] of tasks.entries()) {
      const final = await row(task.id);
      const entries = await entriesOf(task.id);
      const jobs = await handle.db
        .selectFrom('jobs')
        .select('id')
        .where('id', '=', jobIdOf(task.id))
        .execute();
      assert.deepEqual(jobs, [], 'the job is gone');
      if (task === canceled) {
        assert.equal(final.status, 'canceled');
        assert.equal(final.provider_ref, null);
        assert.deepEqual(
          entries.map((e) => e.type),
          ['hold', 'void'],
        );
        continue;
      }
      const at = new Date(end.getTime() + i).toISOString();
      assert.equal(final.status, 'succeeded');
      assert.equal(final.provider_ref, `h-${task.id}`);
      assert.equal(final.finished_at, at);
      assert.equal(final.caption, `made ${task.id}`);
      assert.deepEqual(JSON.parse(final.texts ?? ''), ['a', 'b']);
      assert.equal(final.files_expire_at, new Date(Date.parse(at) + 60_000).toISOString());
      assert.equal(Number(final.revision), Number(before.get(task.id)?.revision) + 2);
      const files = await handle.db
        .selectFrom('artifacts')
        .select('idx')
        .where('task_id', '=', task.id)
        .execute();
      assert.equal(files.length, i % 3);
      const view: { status: string; result?: { artifacts?: unknown[] } } = (
        await t.call(task.account.key, 'GET', `/v1/tasks/${task.id}`)
      ).json();
      assert.equal(view.status, 'succeeded');
      assert.equal(view.result?.artifacts?.length ?? 0, i % 3);
      assert.deepEqual(
        entries.map((e) => [e.type, e.amount_minor, e.created_at]),
        [
          ['capture', task.price, at],
          ['hold', task.price, entries[1]?.created_at],
        ],
      );
    }
    // Each account: every success captured, nothing held, no place taken.
    for (const account of accounts) {
      const counters = await handle.db
        .selectFrom('accounts')
        .select(['captured_minor', 'held_minor'])
        .where('id', '=', account.id)
        .executeTakeFirstOrThrow();
      const spent = others
        .filter((task) => task.account === account)
        .reduce((sum, task) => sum + task.price, 0);
      assert.equal(Number(counters.captured_minor), spent);
      assert.equal(Number(counters.held_minor), 0);
    }
    // A second end of a succeeded task changes nothing.
    const [first] = others;
    assert.ok(first);
    assert.equal(
      await markSucceededTogether(handle, {
        taskId: first.id,
        success: success(first.id),
        at: end,
        retentionMs: 1,
      }),
      false,
    );
  });

  test("runs that start and end together queue each one's webhooks, the body the task as GET shows it", async () => {
    const [own, endpoint, none] = [
      await t.account({ balanceMinor: 100_000 }),
      await t.account({ balanceMinor: 100_000 }),
      await t.account({ balanceMinor: 100_000 }),
    ];
    assert.ok(own && endpoint && none);
    const hook = 'http://127.0.0.1:9/hook';
    const subscribed = await t.call(endpoint.key, 'POST', '/v1/webhooks', {
      url: `${hook}/endpoint`,
      events: ['task.started', 'task.succeeded'],
    });
    assert.equal(subscribed.statusCode, 201, subscribed.body);
    const tasks: Array<{ id: string; account: TestAccount }> = [];
    for (const account of [own, endpoint, none]) {
      for (let i = 0; i < 2; i += 1) {
        const extra =
          account === own
            ? { webhook_url: `${hook}/own`, webhook_events: ['task.started', 'task.succeeded'] }
            : {};
        const res = await t.call(account.key, 'POST', '/v1/tasks', { ...body, ...extra });
        assert.equal(res.statusCode, 202, res.body);
        tasks.push({ id: res.json().id, account });
      }
    }
    const handle = t.container.db;
    const view = async (task: { id: string; account: TestAccount }) =>
      (await t.call(task.account.key, 'GET', `/v1/tasks/${task.id}`)).json();
    const bodies = async (taskId: string, type: string) =>
      (
        await handle.db
          .selectFrom('webhook_deliveries')
          .select(['url', 'body'])
          .where('task_id', '=', taskId)
          .where('type', '=', type)
          .execute()
      ).map((d) => ({ url: d.url, body: JSON.parse(d.body) as { type: string; data: unknown } }));
    // The batches' own statements (`many`), not the calls that would batch them: a batch that failed would
    // run each call again alone, with the whole row its single UPDATE returns, and hide a wrong body.
    const together = <R>(many: (tx: Tx) => Promise<R>) => handle.dialect.transaction(handle.db, many);
    const at = new Date();
    assert.deepEqual(
      await together((tx) =>
        runsStarting.many(
          tx,
          tasks.map((task) => ({ taskId: task.id, at, runKey: `${task.id}/1` })),
          handle.dialect,
        ),
      ),
      tasks.map(() => true),
    );
    const running = await Promise.all(tasks.map(view));
    const end = new Date(at.getTime() + 1_000);
    assert.deepEqual(
      await together((tx) =>
        runsSucceeding.many(
          tx,
          tasks.map((task, i) => ({
            taskId: task.id,
            success: success(task.id, i % 2),
            at: end,
            retentionMs: 60_000,
          })),
          handle.dialect,
        ),
      ),
      tasks.map(() => true),
    );
    for (const [i, task] of tasks.entries()) {
      const started = await bodies(task.id, 'task.started');
      const succeeded = await bodies(task.id, 'task.succeeded');
      if (task.account === none) {
        assert.deepEqual([started, succeeded], [[], []], 'no one asked for its events');
        continue;
      }
      const url = task.account === own ? `${hook}/own` : `${hook}/endpoint`;
      assert.deepEqual(
        started.map((d) => [d.url, d.body.type]),
        [[url, 'task.started']],
      );
      assert.equal(running[i].status, 'running');
      assert.deepEqual(started[0]?.body.data, running[i]);
      assert.deepEqual(
        succeeded.map((d) => [d.url, d.body.type]),
        [[url, 'task.succeeded']],
      );
      const final = await view(task);
      assert.equal(final.status, 'succeeded');
      assert.equal(final.result?.artifacts?.length ?? 0, i % 2);
      assert.deepEqual(succeeded[0]?.body.data, final);
    }
  });

  test('a batch that fails is undone whole, and each run then ends alone: only the faulty one fails', async () => {
    const account = await t.account({ balanceMinor: 100_000 });
    const tasks = await queued([account], 4);
    const handle = t.container.db;
    const at = new Date();
    await Promise.all(
      tasks.map((task) => markRunningTogether(handle, { taskId: task.id, at, runKey: `${task.id}/1` })),
    );
    // A file row already there for one task: the batch's insert of the files fails on its key.
    const faulty = tasks[1];
    assert.ok(faulty);
    await handle.db
      .insertInto('artifacts')
      .values({
        task_id: faulty.id,
        idx: 0,
        kind: 'document',
        filename: 'old.glb',
        content_type: 'model/gltf-binary',
        size_bytes: 1,
        caption: '',
        storage_key: 'results/old',
        upstream: null,
      })
      .execute();
    const ended = await Promise.allSettled(
      tasks.map((task) =>
        markSucceededTogether(handle, {
          taskId: task.id,
          success: success(task.id, 1),
          at,
          retentionMs: 60_000,
        }),
      ),
    );
    assert.deepEqual(
      ended.map((e) => e.status),
      ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    );
    for (const task of tasks) {
      const entries = await entriesOf(task.id);
      const status = (await row(task.id)).status;
      if (task === faulty) {
        assert.equal(status, 'running');
        assert.deepEqual(
          entries.map((e) => e.type),
          ['hold'],
        );
      } else {
        assert.equal(status, 'succeeded');
        assert.deepEqual(
          entries.map((e) => e.type),
          ['capture', 'hold'],
        );
      }
    }
    await handle.db.deleteFrom('artifacts').where('task_id', '=', faulty.id).execute();
    await handle.dialect.transaction(handle.db, (tx) => markCanceled(tx, faulty.id, new Date(), 60_000));
  });

  test('a cancel racing a batch that ends its task: whichever commits first wins, the money moves once', async () => {
    const accounts = [await t.account({ balanceMinor: 100_000 }), await t.account({ balanceMinor: 100_000 })];
    const tasks = await queued(accounts, 2);
    const { db, dialect } = t.container.db;
    const at = new Date();
    const starts = tasks.map((task) => ({ taskId: task.id, at, runKey: `${task.id}/1` }));
    assert.deepEqual(
      await dialect.transaction(db, (tx) => runsStarting.many(tx, starts, dialect)),
      tasks.map(() => true),
    );
    const [lost, won, ...rest] = tasks;
    assert.ok(lost && won);
    // The batch holds its rows while a cancel of one of its tasks arrives: the cancel loses.
    let commit = (): void => {};
    const gate = new Promise<void>((resolve) => {
      commit = resolve;
    });
    const ends = tasks.map((task) => ({
      taskId: task.id,
      success: success(task.id),
      at,
      retentionMs: 60_000,
    }));
    let updated = (): void => {};
    const holding = new Promise<void>((resolve) => {
      updated = resolve;
    });
    const batch = dialect.transaction(db, async (tx) => {
      const moved = await runsSucceeding.many(tx, ends.slice(0, 1), dialect);
      updated();
      await gate;
      return moved;
    });
    // The cancel is sent once the batch holds the row, not merely once it began.
    await holding;
    const cancel = t.call(lost.account.key, 'POST', `/v1/tasks/${lost.id}/cancel`);
    await someoneWaitsForALock(t);
    commit();
    assert.deepEqual(await batch, [true]);
    expectError(await cancel, 409, 'task_not_cancelable');
    // A cancel holds its task's row while a batch that ends it arrives: the batch leaves it canceled.
    let release = (): void => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let canceled = (): void => {};
    const canceledFirst = new Promise<void>((resolve) => {
      canceled = resolve;
    });
    const canceling = dialect.transaction(db, async (tx) => {
      const done = await markCanceled(tx, won.id, new Date(), 60_000);
      canceled();
      await held;
      return done;
    });
    await canceledFirst;
    const rest2 = dialect.transaction(db, (tx) => runsSucceeding.many(tx, ends.slice(1), dialect));
    await someoneWaitsForALock(t);
    release();
    assert.equal(await canceling, true);
    assert.deepEqual(await rest2, [false, ...rest.map(() => true)]);
    const types = async (task: { id: string }) => (await entriesOf(task.id)).map((e) => e.type);
    assert.deepEqual(await types(lost), ['capture', 'hold']);
    assert.deepEqual(await types(won), ['hold', 'void']);
    for (const task of rest) assert.deepEqual(await types(task), ['capture', 'hold']);
  });

  test('a batch waiting for a row lock holds up only its own calls: later runs of other accounts end meanwhile', {
    skip: !process.env.TEST_DATABASE_URL && 'PostgreSQL only: SQLite has one writer, every write waits',
  }, async () => {
    const [stuck, free] = [
      await t.account({ balanceMinor: 100_000 }),
      await t.account({ balanceMinor: 100_000 }),
    ];
    assert.ok(stuck && free);
    const [held, ...others] = await queued([stuck, free, free], 1);
    assert.ok(held);
    const handle = t.container.db;
    const { db, dialect } = handle;
    const at = new Date();
    for (const task of [held, ...others])
      assert.equal(await markRunningTogether(handle, { taskId: task.id, at, runKey: `${task.id}/1` }), true);
    // A transaction that holds the stuck account's row (a frozen process's, say) until released.
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const holder = dialect.transaction(db, async (tx) => {
      await dialect.lockAccount(tx, stuck.id);
      await gate;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const end = (task: { id: string }) =>
      markSucceededTogether(handle, { taskId: task.id, success: success(task.id), at, retentionMs: 60_000 });
    const waiting = end(held);
    await someoneWaitsForALock(t);
    // Each in a turn of its own: batches of their own, while the first still waits.
    const soon = <T>(promise: Promise<T>): Promise<T> =>
      Promise.race([
        promise,
        new Promise<never>((_, reject) => {
          setTimeout(() => reject(new Error('held up by the stuck batch')), 5_000).unref();
        }),
      ]);
    try {
      for (const task of others) assert.equal(await soon(end(task)), true);
    } finally {
      release();
      await holder;
    }
    assert.equal(await waiting, true);
    assert.equal((await row(held.id)).status, 'succeeded');
  });
});
