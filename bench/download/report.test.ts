import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WrkOutcome } from '../wrk.ts';
import { generatorBound, ratioLine, summarizeRounds } from './report.ts';

function wrk(overrides: Partial<WrkOutcome>): WrkOutcome {
  return {
    seconds: 5,
    ok: 10,
    failures: 0,
    badStatus: 0,
    p50: 1,
    p90: 2,
    p99: 3,
    bytesPerSecond: 1e9,
    generatorCores: 0.5,
    generatorThreads: 1,
    ...overrides,
  };
}

describe('download bench report', () => {
  it('weighs rounds by their duration and keeps the worst p99', () => {
    const summary = summarizeRounds('app', [
      { wrk: wrk({ seconds: 4, bytesPerSecond: 1e9, ok: 40, p50: 10, p99: 30 }), serverCores: 1 },
      { wrk: wrk({ seconds: 6, bytesPerSecond: 2e9, ok: 60, p50: 20, p99: 50 }), serverCores: 0.5 },
    ]);
    assert.equal(summary.mbPerSecond, 1600);
    assert.equal(summary.rate, 10);
    assert.deepEqual(summary.roundMbPerSecond, [1000, 2000]);
    assert.equal(summary.p50, 15);
    assert.equal(summary.p99, 50);
    assert.equal(summary.serverCores, 0.75);
  });

  it('says when the generator was the limit and checks the ratio against its target', () => {
    const app = summarizeRounds('app', [{ wrk: wrk({ generatorCores: 0.95 }), serverCores: 1 }]);
    const nginx = summarizeRounds('nginx', [{ wrk: wrk({ bytesPerSecond: 2e9 }), serverCores: 1 }]);
    assert.equal(generatorBound(app), true);
    assert.equal(generatorBound(nginx), false);
    assert.equal(ratioLine('full', app, nginx, 0.8), '- full app/nginx: 0.500 (target ≥ 0.8: NOT met)');
  });
});
