import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Metrics, UNMATCHED_ROUTE } from './metrics.ts';
import { TaskTelemetry } from './task-telemetry.ts';

test('each Metrics has its own registry: one app never counts another', async () => {
  const a = new Metrics({ processMetrics: false });
  const b = new Metrics({ processMetrics: false });
  a.observeRequest({ route: '/v1/tasks/:id', method: 'GET', status: 200 }, 0.01);
  a.observeRequest({ route: undefined, method: 'GET', status: 404 }, 0.001);
  const counted = await a.httpRequests.get();
  assert.deepEqual(
    counted.values.map((v) => [v.labels.route, v.labels.status, v.value]),
    [
      ['/v1/tasks/:id', '200', 1],
      [UNMATCHED_ROUTE, '404', 1],
    ],
  );
  assert.deepEqual((await b.httpRequests.get()).values, []);
  assert.doesNotMatch(await a.scrape(), /process_cpu/);
});

test('transitions: queued counts a creation, finals count by status and code, runs their duration', async () => {
  const metrics = new Metrics({ processMetrics: false });
  const lines: unknown[] = [];
  const telemetry = new TaskTelemetry({ log: { info: (obj: unknown) => lines.push(obj) }, metrics });
  const base = { taskId: 't1', accountId: 'a1', model: 'music' };
  const startedAt = new Date('2026-01-01T00:00:00Z');
  telemetry.transition({ ...base, status: 'queued' });
  telemetry.transition({ ...base, status: 'running', channel: null, startedAt });
  telemetry.transition({
    ...base,
    status: 'failed',
    errorCode: 'content_refused',
    channel: 'suno-1',
    startedAt,
    at: new Date('2026-01-01T00:00:42Z'),
  });
  telemetry.transition({ ...base, taskId: 't2', status: 'canceled' });
  assert.deepEqual(
    (await metrics.tasksCreated.get()).values.map((v) => v.value),
    [1],
  );
  assert.deepEqual(
    (await metrics.tasksFinished.get()).values.map((v) => [v.labels.status, v.labels.error_code, v.value]),
    [
      ['failed', 'content_refused', 1],
      ['canceled', '', 1],
    ],
  );
  const runs = (await metrics.runDuration.get()).values.filter((v) => v.metricName?.endsWith('_sum'));
  assert.deepEqual(
    runs.map((v) => [v.labels.channel, v.value]),
    [['suno-1', 42]],
  );
  assert.equal(lines.length, 4);
  assert.deepEqual(lines[2], {
    taskId: 't1',
    accountId: 'a1',
    model: 'music',
    status: 'failed',
    errorCode: 'content_refused',
    channel: 'suno-1',
  });
});
