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
