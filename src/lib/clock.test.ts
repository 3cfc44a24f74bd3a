import assert from 'node:assert/strict';
import { test } from 'node:test';
import { moscowDay } from './clock.ts';

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
