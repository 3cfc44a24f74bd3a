import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drainOf, latencyOf, median, percentile } from './stats.ts';

describe('dispatch bench statistics', () => {
  it('takes nearest-rank percentiles', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    assert.equal(percentile(values, 50), 50);
    assert.equal(percentile(values, 99), 99);
    assert.equal(percentile(values, 100), 100);
    assert.equal(percentile([7], 99), 7);
    assert.ok(Number.isNaN(percentile([], 50)));
  });

  it('takes the median, the mean of the middle two of an even count', () => {
    assert.equal(median([0.7, 0.5, 0.6]), 0.6);
    assert.equal(median([0.7, 0.5]), 0.6);
    assert.equal(median([3]), 3);
    assert.ok(Number.isNaN(median([])));
  });

  it('measures a drain from the worker start to the last item', () => {
    const timings = [
      { created: 0, running: 1_100, finished: 1_200 },
      { created: 0, running: 1_400, finished: 2_000 },
    ];
    assert.deepEqual(drainOf(timings, 1_000), { count: 2, toRunning: 5, toFinished: 2 });
  });

  it('refuses a drain with an item that never finished', () => {
    assert.throws(() => drainOf([{ created: 0, running: 5, finished: Number.NaN }], 0), /did not finish/);
  });

  it('measures create → running latency', () => {
    const timings = [1, 2, 3, 4].map((wait) => ({ created: 10, running: 10 + wait, finished: 20 }));
    assert.deepEqual(latencyOf(timings), { count: 4, p50: 2, p99: 4, max: 4 });
  });
});
