import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { WrkOutcome } from '../wrk.ts';
import { combineRounds } from './measure.ts';
import { verdictOf } from './report.ts';

const round = (ok: number, seconds: number, p50: number, p99: number, cores = 0.5): WrkOutcome => ({
  seconds,
  ok,
  failures: 1,
  badStatus: 0,
  p50,
  p90: p99,
  p99,
  bytesPerSecond: 0,
  generatorCores: cores,
  generatorThreads: 1,
});

test('combineRounds: rate over all rounds, mean p50, worst p99, busiest generator', () => {
  const r = combineRounds('x', [round(1000, 5, 1, 4), round(3000, 5, 3, 9, 0.95)]);
  assert.equal(r.rate, 400);
  assert.deepEqual(r.roundRates, [200, 600]);
  assert.equal(r.p50, 2);
  assert.equal(r.p99, 9);
  assert.equal(r.failures, 2);
  assert.equal(r.generatorLoad, 0.95);
});

test('verdictOf: within 10 % is met', () => {
  assert.equal(verdictOf(0.9), 'met');
  assert.equal(verdictOf(0.899), 'NOT met');
});
