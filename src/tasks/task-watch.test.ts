import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Db } from '../db/index.ts';
import { TASK_CHANGED_CHANNEL } from './task-events.ts';
import { TaskWatch } from './task-watch.ts';

/** A database whose only part used is `listen`; the check never runs (its period is an hour). */
function fakeDb(): {
  db: Db;
  notify: (payload: string | null) => void;
  listens: string[];
  stopped: () => number;
} {
  let listener: ((payload: string | null) => void) | null = null;
  const listens: string[] = [];
  let stops = 0;
  const db = {
    listen: async (channel: string, onNotify: (payload: string | null) => void) => {
      listens.push(channel);
      listener = onNotify;
      return async () => {
        stops += 1;
      };
    },
  } as unknown as Db;
  return { db, notify: (payload) => listener?.(payload), listens, stopped: () => stops };
}

const never = new AbortController().signal;
const HOUR = 3_600_000;

test('one LISTEN per process, opened by the first subscription; a notification wakes only its task', async () => {
  const fake = fakeDb();
  const watch = new TaskWatch(fake.db, { checkIntervalMs: HOUR, perAccount: 5 });
  assert.deepEqual(fake.listens, [], 'nothing listens before anyone waits');
  const a = watch.subscribe('task-a');
  const b = watch.subscribe('task-b');
  const a2 = watch.subscribe('task-a');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(fake.listens, [TASK_CHANGED_CHANNEL]);
  // The wake-up of every watcher once listening began (what was sent before may be lost) is consumed.
  for (const s of [a, b, a2]) assert.equal(await s.changed(1, never), true);

  const wokeA = a.changed(HOUR, never);
  const wokeA2 = a2.changed(HOUR, never);
  fake.notify('task-a');
  assert.equal(await wokeA, true);
  assert.equal(await wokeA2, true);
  assert.equal(await b.changed(20, never), false, 'task-b was not woken by task-a');

  // A wake before the wait is not lost.
  fake.notify('task-b');
  assert.equal(await b.changed(HOUR, never), true);
  // A reconnection (null) wakes everyone.
  fake.notify(null);
  for (const s of [a, b, a2]) assert.equal(await s.changed(HOUR, never), true);

  assert.equal(watch.size, 3);
  for (const s of [a, b, a2]) s.close();
  assert.equal(watch.size, 0, 'closed subscriptions are forgotten');
  await watch.close();
  assert.equal(fake.stopped(), 1);
});

test('close ends every wait at once and aborts the closing signal', async () => {
  const fake = fakeDb();
  const watch = new TaskWatch(fake.db, { checkIntervalMs: HOUR, perAccount: 5 });
  const s = watch.subscribe('task-a');
  await new Promise((resolve) => setImmediate(resolve));
  await s.changed(1, never);
  const pending = s.changed(HOUR, watch.closing);
  await watch.close();
  assert.equal(await pending, false);
  assert.equal(watch.closing.aborted, true);
  const state = await watch.untilFinal('task-a', async () => ({ revision: 1, final: false }), HOUR);
  assert.equal(state.final, false, 'a waiting call answers at once while shutting down');
});

test('untilFinal re-reads only when woken and stops at the first final state', async () => {
  const fake = fakeDb();
  const watch = new TaskWatch(fake.db, { checkIntervalMs: HOUR, perAccount: 5 });
  let reads = 0;
  const states = [
    { revision: 0, final: false },
    { revision: 1, final: false },
    { revision: 2, final: true },
  ];
  const done = watch.untilFinal(
    'task-a',
    async () => states[Math.min(reads++, states.length - 1)] as { revision: number; final: boolean },
    HOUR,
  );
  await new Promise((resolve) => setTimeout(resolve, 20));
  const before = reads;
  fake.notify('task-a');
  await new Promise((resolve) => setTimeout(resolve, 20));
  fake.notify('task-a');
  assert.deepEqual(await done, { revision: 2, final: true });
  assert.ok(before <= 2, 'no reads without a wake-up beyond the first');
  assert.equal(watch.size, 0);
  await watch.close();
});

test('untilFinal: the host’s clock set back while it waits does not make it wait longer', async (t) => {
  const fake = fakeDb();
  const watch = new TaskWatch(fake.db, { checkIntervalMs: HOUR, perAccount: 5 });
  let revision = 0;
  const started = performance.now();
  const done = watch.untilFinal('task-a', async () => ({ revision, final: false }), 300);
  try {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = Date.now;
    t.mock.method(Date, 'now', () => now() - HOUR);
    // A change (progress) after the clock was set: the wait goes on for what is left of its 300 ms.
    revision = 1;
    fake.notify('task-a');
    const state = await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 2_000, 'waiting'))]);
    assert.deepEqual(state, { revision: 1, final: false });
    assert.ok(performance.now() - started < 1_000);
  } finally {
    await watch.close();
  }
});

test('admit counts per account and gives places back once', () => {
  const watch = new TaskWatch(fakeDb().db, { checkIntervalMs: HOUR, perAccount: 2 });
  const one = watch.admit('acct-1');
  const two = watch.admit('acct-1');
  assert.ok(one && two);
  assert.equal(watch.admit('acct-1'), null, 'a third is refused');
  assert.ok(watch.admit('acct-2'), 'other accounts are not affected');
  one();
  one();
  assert.ok(watch.admit('acct-1'), 'one place back, not two');
  assert.equal(watch.admit('acct-1'), null);
});
