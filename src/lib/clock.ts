/** Source of the current time; tests pass a controllable one. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that only moves when told to (tests). */
export class ManualClock implements Clock {
  #ms: number;
  constructor(start: Date | string = '2026-01-01T00:00:00.000Z') {
    this.#ms = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.#ms);
  }
  advance(ms: number): void {
    this.#ms += ms;
  }
  set(at: Date | string): void {
    this.#ms = new Date(at).getTime();
  }
}

/**
 * The database's time without a query per reading: the local clock plus an offset measured against the
 * database, re-measured every `intervalMs` (Default: 1 minute) until `stop()`. Every process of the service
 * then agrees on leases, idempotency locks and deadlines even when their hosts' clocks drift apart; a
 * process whose clock ran 30 s ahead would otherwise take over live workers' jobs.
 */
export class DbClock implements Clock {
  readonly #measure: () => Promise<Date>;
  readonly #local: Clock;
  readonly #intervalMs: number;
  readonly #onError: (error: unknown) => void;
  #offsetMs = 0;
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
    return new Date(this.#local.now().getTime() + this.#offsetMs);
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
    const database = (await this.#measure()).getTime();
    const after = this.#local.now().getTime();
    // The database read its clock somewhere within the round trip; its middle is the best guess (as NTP).
    this.#offsetMs = Math.round(database - (before + after) / 2);
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

function moscowDayOf(at: Date): { start: Date; end: Date } {
  const parts = Object.fromEntries(moscowParts.formatToParts(at).map((p) => [p.type, p.value]));
  const wallAsUtc = Date.UTC(
    Number(parts.year),
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  );
  const offsetMs = wallAsUtc - Math.floor(at.getTime() / 1000) * 1000;
  const startWall = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day));
  const start = new Date(startWall - offsetMs);
  return { start, end: new Date(start.getTime() + 24 * 60 * 60 * 1000) };
}
