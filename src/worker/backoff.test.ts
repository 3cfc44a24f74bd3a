import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffMs } from './backoff.ts';

test('backoff doubles from one second, stays within its jitter and its cap, and honours Retry-After', () => {
  const middle = () => 0.5;
  const cases: Array<[number, Parameters<typeof backoffMs>[1], number]> = [
    [1, { random: middle }, 1_000],
    [2, { random: middle }, 2_000],
    [3, { random: middle }, 4_000],
    [0, { random: middle }, 1_000],
    [30, { random: middle }, 300_000],
    [1_000, { random: middle }, 300_000],
    [1, { random: () => 0 }, 800],
    [1, { random: () => 0.999_999 }, 1_200],
    [2, { random: middle, baseMs: 50, maxMs: 60 }, 60],
    [1, { random: middle, retryAfterMs: 7_000 }, 7_000],
    [4, { random: middle, retryAfterMs: 1_000 }, 8_000],
  ];
  for (const [attempt, options, expected] of cases) {
    assert.equal(backoffMs(attempt, options), expected, `attempt ${attempt} ${JSON.stringify(options)}`);
  }
});

test('backoff with real randomness never leaves ± 20 % of the plain delay', () => {
  for (let i = 0; i < 1_000; i++) {
    const delay = backoffMs(3);
    assert.ok(delay >= 3_200 && delay <= 4_800, String(delay));
  }
});
