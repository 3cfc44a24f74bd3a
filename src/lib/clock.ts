/** Source of the current time; tests pass a controllable one. */
export interface Clock {
  /** The wall clock: what timestamps are stored as and compared with. */
  now(): Date;
  /**
   * A monotonic reading (milliseconds from an arbitrary origin) for measuring how long something takes:
   * it never jumps when the host's wall clock is set forward or back. (Default: `performance.now()`)
   */
  monotonicMs?(): number;
}

/** The clock's monotonic reading (`Clock.monotonicMs`), else the process's. */
export function monotonicMs(clock: Clock): number {
  return clock.monotonicMs?.() ?? performance.now();
}

export const systemClock: Clock = { now: () => new Date(), monotonicMs: () => performance.now() };

/**
 * A clock that only moves when told to (tests). `advance` and `set` are time passing (a `set` backwards
 * leaves the monotonic reading where it was); `jump` is the host's clock being set, which time does not
 * pass by.
 */
export class ManualClock implements Clock {
  #ms: number;
  #monotonicMs = 0;
  constructor(start: Date | string = '2026-01-01T00:00:00.000Z') {
    this.#ms = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.#ms);
  }
  monotonicMs(): number {
    return this.#monotonicMs;
  }
  advance(ms: number): void {
    this.#ms += ms;
    this.#monotonicMs += Math.max(0, ms);
  }
  set(at: Date | string): void {
    this.advance(new Date(at).getTime() - this.#ms);
    this.#ms = new Date(at).getTime();
  }
  /** The wall clock is set `ms` forward (negative: back) while no time passes. */
  jump(ms: number): void {
    this.#ms += ms;
  }
}

/**
 * The database's time without a query per reading: the database's time at the last measurement plus the
 * monotonic time elapsed since, re-measured every `intervalMs` (Default: 1 minute) until `stop()`. Every
 * process of the service then agrees on leases, idempotency locks and deadlines even when their hosts'
 * clocks drift apart; a process whose clock ran 30 s ahead would otherwise take over live workers' jobs.
 * Between two measurements the host's wall clock is not read at all, so setting it forward or back by
 * hours moves no lease, lock or deadline.
 */
export class DbClock implements Clock {
  readonly #measure: () => Promise<Date>;
  readonly #local: Clock;
  readonly #intervalMs: number;
  readonly #onError: (error: unknown) => void;
  #offsetMs = 0;
  /** The database's time at the last measurement and the local monotonic reading then; null before it. */
  #synced: { databaseMs: number; monotonicMs: number } | null = null;
  #timer: NodeJS.Timeout | null = null;

  /** `measure` reads the database's clock; `local` is this host's (Default: the system clock). */
  constructor(deps: {
    measure: () => Promise<Date>;
    local?: Clock;
    intervalMs?: number;
    onError?: (error: unknown) => void;
  }) {
    this.#measure = deps.measure;
    this.#local = deps.local ?? systemClock;
    this.#intervalMs = deps.intervalMs ?? 60_000;
    this.#onError = deps.onError ?? (() => {});
  }

  now(): Date {
    const synced = this.#synced;
    if (synced === null) return this.#local.now();
    return new Date(synced.databaseMs + (this.monotonicMs() - synced.monotonicMs));
  }

  monotonicMs(): number {
    return monotonicMs(this.#local);
  }

  /** How far the database's clock is ahead of this host's (milliseconds; negative when behind). */
  get offsetMs(): number {
    return this.#offsetMs;
  }

  /** Measures once, then keeps measuring in the background until `stop()`. */
  async start(): Promise<void> {
    await this.sync();
    this.#timer ??= setInterval(() => void this.sync().catch(this.#onError), this.#intervalMs);
    this.#timer.unref();
  }

  /** Measures the offset now. A failed measurement keeps the last offset. */
  async sync(): Promise<void> {
    const before = this.#local.now().getTime();
    const beforeMonotonic = this.monotonicMs();
    const database = (await this.#measure()).getTime();
    const after = this.#local.now().getTime();
    const afterMonotonic = this.monotonicMs();
    // The database read its clock somewhere within the round trip; its middle is the best guess (as NTP).
    this.#offsetMs = Math.round(database - (before + after) / 2);
    // Counted on, though, the clock must not step back at the next measurement: at the round trip's end
    // the database's time lies between `database` and `database` plus the round trip, and a wait in it (for
    // a pooled connection, before the database reads its clock) only widens that range. The time counted
    // on from the last measurement is kept while it lies inside, else moved to the range's nearest edge;
    // the first measurement takes the low edge. A slow measurement then moves nothing, where its middle
    // would set the clock ahead by half the wait and the next quick one back by as much.
    const roundTripMs = afterMonotonic - beforeMonotonic;
    const synced = this.#synced;
    const counted = synced === null ? database : synced.databaseMs + (afterMonotonic - synced.monotonicMs);
    this.#synced = {
      databaseMs: Math.min(Math.max(counted, database), database + roundTripMs),
      monotonicMs: afterMonotonic,
    };
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}

const moscowParts = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'Europe/Moscow',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

/**
 * The Moscow calendar day containing `at` (reference: "The day is counted in Moscow time"), as UTC
 * instants. The offset is read from the time-zone database, not assumed.
 */
export function moscowDay(at: Date): { start: Date; end: Date } {
  const time = at.getTime();
  // The day of the previous call serves every instant inside it: every task creation asks for it.
  if (lastDay !== null && time >= lastDay.start && time < lastDay.end) {
    return { start: new Date(lastDay.start), end: new Date(lastDay.end) };
  }
  const day = moscowDayOf(at);
  lastDay = { start: day.start.getTime(), end: day.end.getTime() };
  return day;
}

let lastDay: { start: number; end: number } | null = null;

const DAY_MS = 24 * 60 * 60 * 1000;

function moscowDayOf(at: Date): { start: Date; end: Date } {
  const offsetMs = moscowOffsetAt(at.getTime());
  const midnight = Math.floor((at.getTime() + offsetMs) / DAY_MS) * DAY_MS;
  // Each midnight at its own offset: on a day the clocks were changed (Moscow did until 2014) the offset
  // at `at` is not the one at midnight, and the day lasts 23 or 25 hours.
  return {
    start: new Date(moscowMidnight(midnight, offsetMs)),
    end: new Date(moscowMidnight(midnight + DAY_MS, offsetMs)),
  };
}

/** Moscow's offset from UTC at the instant `ms`, from the time-zone database. */
function moscowOffsetAt(ms: number): number {
  const parts = Object.fromEntries(moscowParts.formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
  const wallAsUtc = Date.UTC(
    Number(parts.year),
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  );
  return wallAsUtc - Math.floor(ms / 1000) * 1000;
}

/**
 * The instant a Moscow date starts, from its midnight read as UTC (`wall`) and a likely offset: the first of
 * the readings at the offsets around it that is not before midnight (one the clocks skipped starts the day
 * when they jump).
 */
function moscowMidnight(wall: number, likelyOffsetMs: number): number {
  const guess = wall - likelyOffsetMs;
  const offsetMs = moscowOffsetAt(guess);
  if (offsetMs === likelyOffsetMs) return guess;
  const other = wall - offsetMs;
  return Math.min(...[guess, other].filter((at) => at + moscowOffsetAt(at) >= wall));
}
