import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accountOf, type FillPlan, fillRows, finalStatusOf, planFill, prng } from './fill.ts';

test('planFill: 1 % unfinished up to 10,000, a heavy account of half the tasks up to 100,000', () => {
  assert.deepEqual(planFill(1000), { size: 1000, accounts: 1000, heavyTasks: 500, active: 10, running: 5 });
  assert.deepEqual(planFill(1_000_000), {
    size: 1_000_000,
    accounts: 1000,
    heavyTasks: 100_000,
    active: 10_000,
    running: 500,
  });
});

test('accountOf gives the heavy account exactly its share, spread evenly', () => {
  const plan: FillPlan = { size: 10_000, accounts: 50, heavyTasks: 1000, active: 100, running: 10 };
  const random = prng(1);
  const owners = Array.from({ length: plan.size }, (_, i) => accountOf(i, plan, random));
  assert.equal(owners.filter((a) => a === 0).length, 1000);
  assert.equal(owners.slice(0, 5000).filter((a) => a === 0).length, 500);
  assert.ok(owners.every((a) => a >= 0 && a < plan.accounts));
});

test('finalStatusOf: 90 % succeeded, 7 % failed, 3 % canceled', () => {
  const statuses = Array.from({ length: 1000 }, (_, i) => finalStatusOf(i));
  assert.equal(statuses.filter((s) => s === 'succeeded').length, 900);
  assert.equal(statuses.filter((s) => s === 'failed').length, 70);
  assert.equal(statuses.filter((s) => s === 'canceled').length, 30);
});

test('fillRows: accounts before tasks, balances match the transfers, ids in time order', async () => {
  const plan: FillPlan = { size: 300, accounts: 10, heavyTasks: 100, active: 20, running: 5 };
  const written: Array<{ table: string; row: Record<string, unknown> }> = [];
  const filled = await fillRows(plan, async (table, rows) => {
    for (const row of rows) written.push({ table, row });
  });
  const rows = (table: string) => written.filter((w) => w.table === table).map((w) => w.row);
  const firstTask = written.findIndex((w) => w.table === 'tasks');
  assert.ok(written.slice(firstTask).every((w) => w.table !== 'accounts'));
  const tasks = rows('tasks');
  assert.equal(tasks.length, 300);
  const ids = tasks.map((t) => String(t.id));
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(tasks.filter((t) => t.status === 'queued' || t.status === 'running').length, 20);
  assert.equal(rows('jobs').length, 20);
  // The active-task limit's counts are the unfinished tasks of each account.
  for (const count of rows('active_task_counts')) {
    const unfinished = tasks.filter(
      (t) => t.account_id === count.account_id && (t.status === 'queued' || t.status === 'running'),
    );
    assert.equal(count.active, unfinished.length);
  }
  assert.equal(
    rows('active_task_counts').reduce((s, c) => s + Number(c.active), 0),
    20,
  );
  const transfers = rows('transfers');
  for (const account of rows('accounts')) {
    const own = transfers.filter((t) => t.account_id === account.id);
    const sum = (status: string) =>
      own.filter((t) => t.status === status).reduce((s, t) => s + Number(t.amount_minor), 0);
    assert.equal(account.held_minor, sum('pending'));
    assert.equal(account.captured_minor, sum('posted'));
  }
  assert.equal(filled.heavy.taskIds.length, 100);
  assert.deepEqual(filled.heavy.taskIds, [...filled.heavy.taskIds].sort().reverse());
  assert.equal(filled.running.length, 5);
  assert.ok(filled.finished.length > 0 && filled.finished.length < plan.accounts);
});
