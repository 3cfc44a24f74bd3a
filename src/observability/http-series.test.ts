import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { Metrics } from './metrics.ts';

// The HTTP series are counted without prom-client's Counter and Histogram, but a scrape must read exactly
// as if they had been: same names, samples, labels, bucket bounds (`le`, cumulative, +Inf), sums and counts.

const BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const OBSERVED: Array<[string, string, number, number]> = [
  ['/v1/tasks/:id', 'GET', 200, 0.0007],
  ['/v1/tasks/:id', 'GET', 200, 0.005], // on a bound: counted in that bucket (le)
  ['/v1/tasks', 'POST', 202, 0.031],
  ['/v1/tasks/:id', 'GET', 404, 0.002],
  ['unmatched', 'GET', 404, 0.0001],
  ['/v1/tasks/:id', 'GET', 200, 75], // past the last bound: +Inf only
  ['/v1/tasks', 'POST', 202, 0.25],
  ['/v1/tasks/:id/events', 'GET', 499, 12.5],
];

/** The lines of a scrape that belong to the HTTP series. */
const httpLines = (text: string): string[] => text.split('\n').filter((line) => /^(# \w+ )?http_/.test(line));

test('a scrape of the HTTP series reads exactly as prom-client’s Counter and Histogram would write it', async () => {
  const reference = new Registry();
  const counter = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status.',
    labelNames: ['route', 'method', 'status'],
    registers: [reference],
  });
  const histogram = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to the end of its answer (seconds).',
    labelNames: ['route', 'method', 'status'],
    buckets: BOUNDS,
    registers: [reference],
  });
  const metrics = new Metrics({ processMetrics: false });
  for (const [route, method, status, seconds] of OBSERVED) {
    const labels = { route, method, status: String(status) };
    counter.inc(labels);
    histogram.observe(labels, seconds);
    metrics.observeRequest({ route, method, status }, seconds);
  }
  const expected = httpLines(await reference.metrics());
  assert.ok(expected.length > 50, 'the reference wrote the series');
  assert.deepEqual(httpLines(await metrics.scrape()), expected);
});

test('the HTTP series start empty: a scrape before any request lists their names only', async () => {
  const metrics = new Metrics({ processMetrics: false });
  assert.deepEqual(
    httpLines(await metrics.scrape()).filter((line) => !line.startsWith('#')),
    [],
  );
  assert.match(await metrics.scrape(), /^# TYPE http_request_duration_seconds histogram$/m);
});
