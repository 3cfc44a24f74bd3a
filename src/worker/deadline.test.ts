import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Clock, ManualClock } from '../lib/clock.ts';
import { RunDeadline } from './deadline.ts';
import { DeadlineExceeded } from './failures.ts';

const HOUR_MS = 60 * 60_000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('RunDeadline: the wall clock set hours forward fails no run, set back keeps none waiting', async () => {
  let setByMs = 0;
  const clock: Clock = { now: () => new Date(Date.now() + setByMs) };
  const abort = new AbortController();
  const deadline = new RunDeadline(clock, abort);
  try {
    deadline.arm(clock.now().getTime() + 600);
    setByMs = 3 * HOUR_MS;
    await sleep(50);
    assert.doesNotThrow(() => deadline.mustBeBeforeDeadline(), 'set forward: the run goes on');
    setByMs = -3 * HOUR_MS;
    await sleep(900);
    assert.ok(abort.signal.aborted, 'set back: the run still ends 600 ms after it was armed');
    assert.ok(abort.signal.reason instanceof DeadlineExceeded);
  } finally {
    deadline.disarm();
  }
});

test('RunDeadline: counted on a ManualClock, time passing ends the run and a jump does not', async () => {
  const clock = new ManualClock();
  const abort = new AbortController();
  const deadline = new RunDeadline(clock, abort);
  try {
    deadline.arm(clock.now().getTime() + 60_000);
    clock.jump(5 * HOUR_MS);
    clock.jump(-10 * HOUR_MS);
    deadline.mustBeBeforeDeadline();
    clock.advance(59_999);
    deadline.mustBeBeforeDeadline();
    clock.advance(1);
    assert.throws(() => deadline.mustBeBeforeDeadline(), DeadlineExceeded);
  } finally {
    deadline.disarm();
  }
});

test('RunDeadline: a deadline already past when armed ends the run at once', () => {
  const clock = new ManualClock();
  const abort = new AbortController();
  const deadline = new RunDeadline(clock, abort);
  deadline.arm(clock.now().getTime() - 1);
  assert.throws(() => deadline.mustBeBeforeDeadline(), DeadlineExceeded);
  deadline.disarm();
});
