/**
 * Property tests of the wallet (CONTRACT §5) on the real database module: random sequences and random
 * concurrent interleavings of credit, create (hold), start, finish (capture), fail and cancel (void),
 * through the same transition functions the worker and the API use. After any of them, each account's
 * counters equal its ledger, held equals the open holds, balance = credits − captured, and no task is
 * settled twice. SQLite by default; a fresh PostgreSQL database when TEST_DATABASE_URL is set.
 * FUZZ_SEED and FUZZ_RUNS replace the fixed seed and the run count.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { openTestDatabase } from '../../test/databases.ts';
import type { Db, TaskStatus, Tx } from '../db/index.ts';
import { isApiError } from '../errors.ts';
import { uuidv7 } from '../lib/ids.ts';
import { jobIdOf, markCanceled, markFailed, markRunning, markSucceeded } from '../tasks/transitions.ts';
import { credit, hold } from './index.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20_260_110);
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const ACCOUNTS = 3;

type Step = 'start' | 'finish' | 'fail' | 'cancel';
type Op =
  | { kind: 'credit'; account: number; amount: number }
  | { kind: 'create'; account: number; amount: number }
  | { kind: Step; task: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('credit' as const),
    account: fc.nat(ACCOUNTS - 1),
    amount: fc.integer({ min: 1, max: 5_000 }),
  }),
  fc.record({
    kind: fc.constant('create' as const),
    account: fc.nat(ACCOUNTS - 1),
    amount: fc.integer({ min: 1, max: 3_000 }),
  }),
  fc.record({ kind: fc.constantFrom<Step>('start', 'finish', 'fail', 'cancel'), task: fc.nat(40) }),
);

/** One run's accounts (fresh ids, so runs share one database) and the tasks created so far. */
interface World {
  accounts: string[];
  tasks: Array<{ id: string; account: number; amount: number }>;
}

async function newWorld(db: Db): Promise<World> {
  const accounts = Array.from({ length: ACCOUNTS }, () => randomUUID());
  const at = new Date().toISOString();
  await db.db
    .insertInto('accounts')
    .values(
      accounts.map((id) => ({
        id,
        name: 'property',
        credited_minor: 0,
        captured_minor: 0,
        held_minor: 0,
        created_at: at,
      })),
    )
    .execute();
  return { accounts, tasks: [] };
}

/** Holds the price and inserts the task and its job in one transaction, as task creation does. */
async function createTask(tx: Tx, db: Db, accountId: string, amount: number): Promise<string> {
  const now = new Date();
  const id = uuidv7(now.getTime());
  await db.dialect.lockAccount(tx, accountId);
  await hold(tx, { accountId, keyId: null, taskId: id, amountMinor: amount, at: now });
  await tx
    .insertInto('tasks')
    .values({
      id,
      account_id: accountId,
      key_id: null,
      model: 'model-3d',
      mode: 'text_to_model',
      status: 'queued',
      settings: '{}',
      inputs: '[]',
      price_minor: amount,
      currency: 'RUB',
      progress: 0,
      caption: null,
      texts: null,
      error_code: null,
      error_message: null,
      created_at: now.toISOString(),
      started_at: null,
      finished_at: null,
      files_expire_at: null,
      files_expired: 0,
      provider_ref: null,
      revision: 0,
      webhook_url: null,
      webhook_events: null,
    })
    .execute();
  await tx
    .insertInto('jobs')
    .values({
      id: jobIdOf(id),
      task_id: id,
      run_at: now.toISOString(),
      locked_by: null,
      locked_until: null,
      attempts: 0,
    })
    .execute();
  return id;
}

/**
 * Applies one operation in its own transaction. Returns what the transition function answered (true
 * when it moved the task), 'refused' for 402, or 'none' when no task exists yet.
 */
async function apply(db: Db, world: World, op: Op): Promise<boolean | 'refused' | 'none'> {
  const now = new Date();
  if (op.kind === 'credit') {
    const accountId = world.accounts[op.account]!;
    await db.dialect.transaction(db.db, (tx) =>
      credit(tx, { accountId, amountMinor: op.amount, reference: randomUUID(), at: now }),
    );
    return true;
  }
  if (op.kind === 'create') {
    try {
      const id = await db.dialect.transaction(db.db, (tx) =>
        createTask(tx, db, world.accounts[op.account]!, op.amount),
      );
      world.tasks.push({ id, account: op.account, amount: op.amount });
      return true;
    } catch (error) {
      if (isApiError(error) && error.code === 'insufficient_funds') return 'refused';
      throw error;
    }
  }
  const task = world.tasks[op.task % Math.max(1, world.tasks.length)];
  if (!task) return 'none';
  return db.dialect.transaction(db.db, (tx) => {
    switch (op.kind) {
      case 'start':
        return markRunning(tx, task.id, now, `property:${task.id}`);
      case 'finish':
        return markSucceeded(tx, task.id, { caption: '', texts: [], artifacts: [] }, now, 0);
      case 'fail':
        return markFailed(tx, task.id, { code: 'generation_failed', reason: 'property test' }, now, 0);
      case 'cancel':
        return markCanceled(tx, task.id, now, 0);
    }
  });
}

/** The money and states a correct wallet would show after the same sequence. */
class Model {
  readonly credited = Array<number>(ACCOUNTS).fill(0);
  readonly captured = Array<number>(ACCOUNTS).fill(0);
  readonly held = Array<number>(ACCOUNTS).fill(0);
  readonly status: TaskStatus[] = [];
  readonly #tasks: Array<{ account: number; amount: number }> = [];

  /** What `apply` must answer for `op`, updating the model. */
  step(op: Op): boolean | 'refused' | 'none' {
    if (op.kind === 'credit') {
      this.credited[op.account]! += op.amount;
      return true;
    }
    if (op.kind === 'create') {
      const available = this.credited[op.account]! - this.captured[op.account]! - this.held[op.account]!;
      if (op.amount > available) return 'refused';
      this.held[op.account]! += op.amount;
      this.#tasks.push({ account: op.account, amount: op.amount });
      this.status.push('queued');
      return true;
    }
    const index = op.task % Math.max(1, this.#tasks.length);
    const task = this.#tasks[index];
    if (!task) return 'none';
    const from = this.status[index]!;
    const to = { start: 'running', finish: 'succeeded', fail: 'failed', cancel: 'canceled' }[
      op.kind
    ] as TaskStatus;
    const allowed =
      op.kind === 'start' || op.kind === 'finish'
        ? [op.kind === 'start' ? 'queued' : 'running']
        : ['queued', 'running'];
    if (!allowed.includes(from)) return false;
    this.status[index] = to;
    if (to === 'running') return true;
    this.held[task.account]! -= task.amount;
    if (to === 'succeeded') this.captured[task.account]! += task.amount;
    return true;
  }
}

/**
 * The invariants of one run's accounts, read in one snapshot: counters = sums of the ledger, held = the
 * open holds (pending transfers of unfinished tasks), balance ≥ 0 available, one hold and at most one
 * settlement per task, a capture only for a succeeded task and a settlement for every final one.
 */
async function assertInvariants(
  db: Db,
  world: World,
): Promise<Map<string, { credited: number; captured: number; held: number }>> {
  return db.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (tx) => {
      const counters = new Map<string, { credited: number; captured: number; held: number }>();
      const tasks = new Map(
        (
          await tx
            .selectFrom('tasks')
            .select(['id', 'status', 'price_minor'])
            .where('account_id', 'in', world.accounts)
            .execute()
        ).map((t) => [t.id, t]),
      );
      for (const accountId of world.accounts) {
        const account = await tx
          .selectFrom('accounts')
          .selectAll()
          .where('id', '=', accountId)
          .executeTakeFirstOrThrow();
        const entries = await tx
          .selectFrom('ledger_entries')
          .selectAll()
          .where('account_id', '=', accountId)
          .execute();
        const transfers = await tx
          .selectFrom('transfers')
          .selectAll()
          .where('account_id', '=', accountId)
          .execute();
        const sum = (type: string): number =>
          entries.filter((e) => e.type === type).reduce((t, e) => t + Number(e.amount_minor), 0);
        const c = {
          credited: Number(account.credited_minor),
          captured: Number(account.captured_minor),
          held: Number(account.held_minor),
        };
        assert.equal(c.credited, sum('credit'), 'credited = credit entries');
        assert.equal(c.captured, sum('capture'), 'captured = capture entries');
        assert.equal(c.held, sum('hold') - sum('capture') - sum('void'), 'held = holds − settlements');
        const open = transfers.filter((t) => t.status === 'pending');
        assert.equal(
          c.held,
          open.reduce((t, x) => t + Number(x.amount_minor), 0),
          'held = open holds',
        );
        for (const transfer of open) {
          const status = tasks.get(transfer.id)?.status;
          assert.ok(
            status === 'queued' || status === 'running',
            `an open hold belongs to an unfinished task, not ${status}`,
          );
        }
        assert.ok(c.credited - c.captured - c.held >= 0, 'available never goes below zero');
        const byTask = Map.groupBy(
          entries.filter((e) => e.task_id !== null),
          (e) => e.task_id as string,
        );
        for (const [taskId, list] of byTask) {
          const task = tasks.get(taskId);
          assert.ok(task, `ledger entries of a task that does not exist: ${taskId}`);
          const types = list
            .map((e) => e.type)
            .sort()
            .join();
          const expected = {
            succeeded: 'capture,hold',
            failed: 'hold,void',
            canceled: 'hold,void',
            queued: 'hold',
            running: 'hold',
          }[task.status];
          assert.equal(types, expected, `ledger of a ${task.status} task: nothing captured or voided twice`);
          for (const e of list)
            assert.equal(Number(e.amount_minor), Number(task.price_minor), 'every movement is the price');
        }
        counters.set(accountId, c);
      }
      return counters;
    });
}

describe('the wallet under random sequences of task transitions (CONTRACT §5)', () => {
  let db: Db;
  let drop: () => Promise<void>;
  before(async () => {
    ({ db, drop } = await openTestDatabase('gta_ledger'));
  });
  after(() => drop());

  test('one after another: every answer and every balance is what a correct wallet gives', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 60 }), async (ops) => {
        const world = await newWorld(db);
        const model = new Model();
        for (const op of ops) assert.equal(await apply(db, world, op), model.step(op), JSON.stringify(op));
        const counters = await assertInvariants(db, world);
        world.accounts.forEach((id, i) => {
          assert.deepEqual(counters.get(id), {
            credited: model.credited[i],
            captured: model.captured[i],
            held: model.held[i],
          });
        });
        const statuses = await db.db
          .selectFrom('tasks')
          .select(['id', 'status'])
          .where('account_id', 'in', world.accounts)
          .execute();
        const byId = new Map(statuses.map((s) => [s.id, s.status]));
        assert.deepEqual(
          world.tasks.map((t) => byId.get(t.id)),
          model.status,
        );
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  test('interleaved: concurrent transitions of the same tasks keep the ledger whole', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(opArb, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 15 }),
        async (batches) => {
          const world = await newWorld(db);
          for (const batch of batches) {
            // Each batch runs at once: finish and cancel of one task race, creations race for the money.
            await Promise.all(batch.map((op) => apply(db, world, op)));
          }
          const counters = await assertInvariants(db, world);
          // Final tasks left their queue; unfinished ones still have their job.
          const jobs = await db.db
            .selectFrom('jobs')
            .select('task_id')
            .where('task_id', 'in', world.tasks.length ? world.tasks.map((t) => t.id) : [''])
            .execute();
          const statuses = await db.db
            .selectFrom('tasks')
            .select(['id', 'status'])
            .where('account_id', 'in', world.accounts)
            .execute();
          const active = statuses
            .filter((s) => s.status === 'queued' || s.status === 'running')
            .map((s) => s.id)
            .sort();
          assert.deepEqual(jobs.map((j) => j.task_id).sort(), active);
          assert.equal(counters.size, ACCOUNTS);
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
