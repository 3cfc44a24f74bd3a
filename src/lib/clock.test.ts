import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Clock, DbClock, ManualClock, moscowDay } from './clock.ts';

test('moscowDay: the Moscow calendar day as UTC instants (UTC+3)', () => {
  const cases = [
    ['2026-11-22T10:00:00.000Z', '2026-11-21T21:00:00.000Z'],
    ['2026-11-22T20:59:59.999Z', '2026-11-21T21:00:00.000Z'],
    ['2026-11-22T21:00:00.000Z', '2026-11-22T21:00:00.000Z'],
    ['2026-01-01T00:00:00.000Z', '2025-12-31T21:00:00.000Z'],
  ];
  for (const [at, start] of cases) {
    const day = moscowDay(new Date(at as string));
    assert.equal(day.start.toISOString(), start, at);
    assert.equal(day.end.getTime() - day.start.getTime(), 86_400_000);
  }
});

test('moscowDay: each instant gets its own day, whatever day the call before asked for', () => {
  const cases = [
    ['2026-11-29T20:59:59.999Z', '2026-11-28T21:00:00.000Z'],
    ['2026-11-29T21:00:00.000Z', '2026-11-29T21:00:00.000Z'],
    ['2026-11-29T20:59:59.999Z', '2026-11-28T21:00:00.000Z'],
    ['2026-11-28T21:00:00.000Z', '2026-11-28T21:00:00.000Z'],
    ['2026-11-28T20:59:59.999Z', '2026-11-27T21:00:00.000Z'],
    ['2026-11-30T20:59:59.999Z', '2026-11-29T21:00:00.000Z'],
  ];
  for (const [at, start] of cases) {
    const day = moscowDay(new Date(at as string));
    assert.equal(day.start.toISOString(), start, at);
    assert.equal(day.end.getTime() - day.start.getTime(), 86_400_000);
  }
  // The days given out are the caller's own: changing one changes no later answer.
  moscowDay(new Date('2026-11-29T12:00:00.000Z')).start.setTime(0);
  assert.equal(
    moscowDay(new Date('2026-11-29T13:00:00.000Z')).start.toISOString(),
    '2026-11-28T21:00:00.000Z',
  );
});

test('moscowDay: a day the clocks were changed on runs from its own midnight to the next', () => {
  // Moscow moved its clocks until 2014: such a day lasts 23 or 25 hours, and its midnight's offset is not
  // the one later that day. 1981-04-01 had no midnight (00:00 was 01:00): it starts when the clocks jumped.
  const cases = [
    ['2014-10-26T12:00:00.000Z', '2014-10-25T20:00:00.000Z', '2014-10-26T21:00:00.000Z'],
    ['2014-10-25T20:30:00.000Z', '2014-10-25T20:00:00.000Z', '2014-10-26T21:00:00.000Z'],
    ['2014-10-25T12:00:00.000Z', '2014-10-24T20:00:00.000Z', '2014-10-25T20:00:00.000Z'],
    ['2010-03-28T12:00:00.000Z', '2010-03-27T21:00:00.000Z', '2010-03-28T20:00:00.000Z'],
    ['2011-03-27T12:00:00.000Z', '2011-03-26T21:00:00.000Z', '2011-03-27T20:00:00.000Z'],
    ['1981-03-31T12:00:00.000Z', '1981-03-30T21:00:00.000Z', '1981-03-31T21:00:00.000Z'],
    ['1981-04-01T12:00:00.000Z', '1981-03-31T21:00:00.000Z', '1981-04-01T20:00:00.000Z'],
    ['1981-09-30T12:00:00.000Z', '1981-09-29T20:00:00.000Z', '1981-09-30T21:00:00.000Z'],
  ];
  for (const [at, start, end] of cases) {
    const day = moscowDay(new Date(at as string));
    assert.deepEqual([day.start.toISOString(), day.end.toISOString()], [start, end], at);
  }
});

test('DbClock: local time plus the offset measured against the database, kept when a measurement fails', async () => {
  const local = new ManualClock('2026-03-01T12:00:00.000Z');
  let databaseAheadMs = -30_000;
  let failing = false;
  const clock = new DbClock({
    local,
    measure: async () => {
      if (failing) throw new Error('database unreachable');
      return new Date(local.now().getTime() + databaseAheadMs);
    },
  });
  assert.equal(
    clock.now().toISOString(),
    '2026-03-01T12:00:00.000Z',
    'no offset before the first measurement',
  );
  await clock.sync();
  assert.equal(clock.offsetMs, -30_000);
  assert.equal(clock.now().toISOString(), '2026-03-01T11:59:30.000Z');
  local.advance(1_000);
  assert.equal(clock.now().toISOString(), '2026-03-01T11:59:31.000Z', 'reading costs no query');
  databaseAheadMs = 2_000;
  failing = true;
  await assert.rejects(clock.sync());
  assert.equal(clock.offsetMs, -30_000);
  failing = false;
  await clock.sync();
  assert.equal(clock.now().toISOString(), '2026-03-01T12:00:03.000Z');
});

test('DbClock: the host’s clock set hours forward or back between measurements moves nothing', async () => {
  let setByMs = 0;
  const local: Clock = { now: () => new Date(Date.now() + setByMs) };
  const clock = new DbClock({ local, measure: async () => new Date(Date.now() + 5_000) });
  await clock.sync();
  const near = (what: string): void => {
    const off = clock.now().getTime() - (Date.now() + 5_000);
    assert.ok(Math.abs(off) < 200, `${what}: ${off} ms off the database`);
  };
  near('after the measurement');
  setByMs = 3 * 60 * 60_000;
  near('set forward');
  setByMs = -3 * 60 * 60_000;
  near('set back');
  await clock.sync();
  near('measured again');
});

test('DbClock: a measurement that waited for a pooled connection sets the clock neither ahead nor back', async () => {
  const local = new ManualClock('2026-03-01T12:00:00.000Z');
  let databaseAheadMs = 5_000;
  let waitMs = 0;
  const clock = new DbClock({
    local,
    measure: async () => {
      local.advance(waitMs); // the pool's connections are all taken: the query waits before it is sent
      const read = new Date(local.now().getTime() + databaseAheadMs);
      local.advance(2); // the answer's way back
      return read;
    },
  });
  const offDatabase = (): number => clock.now().getTime() - (local.now().getTime() + databaseAheadMs);
  await clock.sync();
  const first = offDatabase();
  assert.ok(Math.abs(first) <= 2, `${first} ms off the database`);
  local.advance(60_000);
  waitMs = 4_000;
  await clock.sync();
  assert.equal(offDatabase(), first, 'the wait moved nothing');
  const beforeQuick = clock.now().getTime();
  local.advance(60_000);
  waitMs = 0;
  const at = clock.now().getTime();
  await clock.sync();
  assert.ok(clock.now().getTime() >= at, `stepped back by ${at - clock.now().getTime()} ms`);
  assert.ok(clock.now().getTime() > beforeQuick);
  databaseAheadMs = -60_000;
  await clock.sync();
  assert.ok(Math.abs(offDatabase()) <= 2, 'the database’s clock set back is followed');
});

test('ManualClock: advance and set pass time; jump sets the wall clock only', () => {
  const clock = new ManualClock('2026-03-01T12:00:00.000Z');
  const start = clock.monotonicMs();
  clock.advance(1_000);
  clock.set('2026-03-01T12:00:10.000Z');
  clock.jump(-60 * 60_000);
  assert.equal(clock.now().toISOString(), '2026-03-01T11:00:10.000Z');
  assert.equal(clock.monotonicMs() - start, 10_000);
  clock.set('2026-03-01T10:00:00.000Z');
  assert.equal(clock.monotonicMs() - start, 10_000, 'set back: no time passed');
});

test('DbClock: start() measures at once and then periodically until stop()', async () => {
  let measurements = 0;
  const clock = new DbClock({
    intervalMs: 10,
    measure: async () => {
      measurements += 1;
      return new Date();
    },
  });
  await clock.start();
  assert.equal(measurements, 1);
  await new Promise((r) => setTimeout(r, 60));
  clock.stop();
  const seen = measurements;
  assert.ok(seen >= 2, `${seen} measurements`);
  await new Promise((r) => setTimeout(r, 40));
  assert.equal(measurements, seen, 'no measurement after stop()');
  assert.ok(Math.abs(clock.offsetMs) < 50);
});
