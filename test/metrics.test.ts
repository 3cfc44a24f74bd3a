/**
 * GET /metrics (CONTRACT §15): the token, and a scrape after known traffic read by a strict parser of the
 * Prometheus text format. Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { uuidv7 } from '../src/lib/index.ts';
import { ScriptedUpstream, scriptedAdapters, testChannels } from './channel-adapters.ts';
import { expectError, startTestApp, type TestApp, waitForFinal } from './helpers.ts';
import { ExpositionError, type Family, parsePrometheusText, sampleValue } from './prometheus-text.ts';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const TASK_3D = { model: 'model-3d', settings: { task_type: 'text_to_model', prompt: 'a chair' } };
const REFUSED_SOUND = { model: 'music', settings: { mode: 'sounds', soundDescription: 'rain [sim:refuse]' } };

async function scrape(t: TestApp): Promise<Map<string, Family>> {
  const res = await t.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(res.body);
}

async function create(t: TestApp, key: string, body: unknown): Promise<{ id: string; price: number }> {
  const res = await t.call(key, 'POST', '/v1/tasks', body);
  assert.equal(res.statusCode, 202, res.body);
  return { id: res.json().id as string, price: res.json().price.amount_minor as number };
}

describe('GET /metrics (CONTRACT §15)', () => {
  test('is 404 without METRICS_TOKEN, like an unknown address, and never in the public document', async () => {
    const t = await startTestApp();
    try {
      const res = await t.app.inject({ method: 'GET', url: '/metrics' });
      expectError(res, 404, 'not_found');
      const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
      assert.equal(doc.paths['/metrics'], undefined);
    } finally {
      await t.close();
    }
  });

  test('a missing or wrong token is 401 in the error shape; the right one gets the text format', async () => {
    const t = await startTestApp({ env: { METRICS_TOKEN } });
    try {
      expectError(await t.app.inject({ method: 'GET', url: '/metrics' }), 401, 'invalid_admin_token');
      for (const authorization of [`Bearer ${METRICS_TOKEN}x`, 'Bearer nope', `Basic ${METRICS_TOKEN}`]) {
        const res = await t.app.inject({
          method: 'GET',
          url: '/metrics',
          headers: { Authorization: authorization },
        });
        expectError(res, 401, 'invalid_admin_token');
        // RFC 6750 §3.1: invalid_token only for a Bearer token; another scheme brought none.
        const challenge = authorization.startsWith('Bearer') ? 'Bearer error="invalid_token"' : 'Bearer';
        assert.equal(res.headers['www-authenticate'], challenge);
        assert.ok(res.headers['x-request-id']);
      }
      // Two Authorization lines are one credential too many, whichever is right (Node reads the first).
      for (const authorization of [
        [`Bearer ${METRICS_TOKEN}`, 'Bearer nope'],
        [`Bearer ${METRICS_TOKEN}`, `Bearer ${METRICS_TOKEN}`],
      ]) {
        const res = await t.app.inject({
          method: 'GET',
          url: '/metrics',
          headers: { Authorization: authorization },
        });
        expectError(res, 401, 'invalid_admin_token');
      }
      const families = await scrape(t);
      assert.equal(families.get('process_cpu_user_seconds_total')?.type, 'counter');
      assert.ok(families.has('nodejs_eventloop_lag_seconds'), 'process metrics of this app');
      const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
      assert.equal(doc.paths['/metrics'], undefined, 'hidden from the public document');
      // The dashboard in the docs queries only series the app exposes.
      const dashboard = JSON.parse(fs.readFileSync('docs/grafana-dashboard.json', 'utf8')) as {
        panels: Array<{ targets: Array<{ expr: string }> }>;
      };
      const exprs = dashboard.panels.flatMap((p) => p.targets.map((target) => target.expr));
      assert.ok(exprs.length >= 14);
      for (const expr of exprs)
        for (const [name] of expr.matchAll(/\b(?:gta|http|process|nodejs)_[a-z0-9_]+/g))
          assert.ok(families.has(name.replace(/_bucket$/, '')), `${name} in the dashboard is not exposed`);
    } finally {
      await t.close();
    }
  });

  test('scrapes are not counted against any account request limit', async () => {
    const t = await startTestApp({
      env: { METRICS_TOKEN },
      limits: { accountRequests: 1, wrongKeyAttempts: 1_000, windowSeconds: 60 },
    });
    try {
      for (let i = 0; i < 5; i++) await scrape(t);
    } finally {
      await t.close();
    }
  });

  test('after known traffic the series say what happened, with bounded labels', async () => {
    const upstream = new ScriptedUpstream();
    const t = await startTestApp({
      env: { METRICS_TOKEN },
      channels: testChannels([
        { name: 'main', provider: 'tripo', models: ['model-3d'], api_key_env: 'TEST_KEY' },
      ]),
      adapters: scriptedAdapters(upstream),
    });
    try {
      const acct = await t.account({ balanceMinor: 10_000_000 });
      const made = [
        await create(t, acct.key, TASK_3D),
        await create(t, acct.key, TASK_3D),
        await create(t, acct.key, TASK_3D),
      ];
      for (const { id } of made) assert.equal((await waitForFinal(t, acct.key, id)).status, 'succeeded');
      const refused = await create(t, acct.key, REFUSED_SOUND);
      const done = await waitForFinal(t, acct.key, refused.id);
      assert.equal((done.error as { code: string }).code, 'content_refused');
      expectError(await t.call(acct.key, 'GET', '/v1/tasks/unknown-task'), 404, 'task_not_found');
      expectError(await t.call('gta_wrong', 'GET', '/v1/models'), 401, 'invalid_api_key');
      expectError(await t.app.inject({ method: 'GET', url: '/v1/no/such/place' }), 404, 'not_found');
      const db = t.container.db.db;
      const delivery = (state: string) => ({
        id: uuidv7(),
        account_id: acct.id,
        webhook_id: null,
        task_id: null,
        record_id: null,
        type: 'task.succeeded',
        url: 'https://example.com/hook',
        body: '{}',
        state: state as 'pending',
        attempts: 0,
        last_status_code: null,
        last_error: null,
        next_attempt_at: null,
        lease_owner: null,
        lease_until: null,
        created_at: new Date().toISOString(),
        updated_at: new Date().toISOString(),
      });
      await db
        .insertInto('webhook_deliveries')
        .values([delivery('pending'), delivery('pending'), delivery('failed')])
        .execute();

      const m = await scrape(t);
      const http = (route: string, method: string, status: string) =>
        sampleValue(m, 'http_requests_total', { route, method, status });
      assert.equal(http('/v1/tasks', 'POST', '202'), 4);
      assert.ok(http('/v1/tasks/:id', 'GET', '200') >= 4, 'polls counted under the route pattern');
      assert.equal(http('/v1/tasks/:id', 'GET', '404'), 1);
      assert.equal(http('/v1/models', 'GET', '401'), 1);
      assert.equal(http('unmatched', 'GET', '404'), 1);
      const routes = new Set(m.get('http_requests_total')?.samples.map((s) => s.labels.route));
      for (const route of routes) assert.ok(!route?.includes('unknown-task'), `raw URL as route: ${route}`);
      assert.equal(
        sampleValue(m, 'http_request_duration_seconds_count', {
          route: '/v1/tasks',
          method: 'POST',
          status: '202',
        }),
        4,
      );

      assert.equal(sampleValue(m, 'gta_tasks_created_total', { model: 'model-3d' }), 3);
      assert.equal(sampleValue(m, 'gta_tasks_created_total', { model: 'music' }), 1);
      assert.equal(
        sampleValue(m, 'gta_tasks_finished_total', {
          model: 'model-3d',
          status: 'succeeded',
          error_code: '',
        }),
        3,
      );
      assert.equal(
        sampleValue(m, 'gta_tasks_finished_total', {
          model: 'music',
          status: 'failed',
          error_code: 'content_refused',
        }),
        1,
      );
      assert.equal(
        sampleValue(m, 'gta_task_run_duration_seconds_count', {
          model: 'model-3d',
          channel: 'main',
          status: 'succeeded',
        }),
        3,
      );
      assert.equal(
        sampleValue(m, 'gta_task_run_duration_seconds_count', {
          model: 'music',
          channel: 'default',
          status: 'failed',
        }),
        1,
      );

      assert.equal(sampleValue(m, 'gta_queue_depth', { model: 'model-3d' }), 0);
      assert.equal(sampleValue(m, 'gta_queue_oldest_age_seconds', { model: 'music' }), 0);
      assert.equal(
        sampleValue(m, 'gta_channel_state', { channel: 'main', provider: 'tripo', state: 'closed' }),
        1,
      );
      assert.equal(sampleValue(m, 'gta_channel_state', { channel: 'main', state: 'open' }), 0);
      assert.equal(sampleValue(m, 'gta_channel_enabled', { channel: 'main' }), 1);
      assert.equal(sampleValue(m, 'gta_channel_in_flight', { channel: 'main' }), 0);
      assert.equal(sampleValue(m, 'gta_webhook_deliveries', { state: 'pending' }), 2);
      assert.equal(sampleValue(m, 'gta_webhook_deliveries', { state: 'failed' }), 1);
      assert.equal(sampleValue(m, 'gta_webhook_deliveries', { state: 'succeeded' }), 0);
      const captured = made.reduce((sum, task) => sum + task.price, 0);
      assert.equal(sampleValue(m, 'gta_money_captured_kopecks'), captured);
      assert.equal(sampleValue(m, 'gta_money_held_kopecks'), 0);
      assert.equal(sampleValue(m, 'gta_money_credited_kopecks'), 10_000_000);
    } finally {
      await t.close();
    }
  });

  test('queued tasks show as queue depth and age, their holds as money held; a cancel counts as finished', async () => {
    const t = await startTestApp({ env: { METRICS_TOKEN }, worker: false });
    try {
      const acct = await t.account({ balanceMinor: 10_000_000 });
      const first = await create(t, acct.key, TASK_3D);
      const second = await create(t, acct.key, TASK_3D);
      const canceled = await t.call(acct.key, 'POST', `/v1/tasks/${first.id}/cancel`);
      assert.equal(canceled.statusCode, 200, canceled.body);
      const m = await scrape(t);
      assert.equal(sampleValue(m, 'gta_queue_depth', { model: 'model-3d' }), 1);
      assert.equal(sampleValue(m, 'gta_queue_depth', { model: 'music' }), 0);
      assert.ok(sampleValue(m, 'gta_queue_oldest_age_seconds', { model: 'model-3d' }) >= 0);
      assert.equal(sampleValue(m, 'gta_money_held_kopecks'), second.price);
      assert.equal(sampleValue(m, 'gta_money_captured_kopecks'), 0);
      assert.equal(sampleValue(m, 'gta_tasks_created_total', { model: 'model-3d' }), 2);
      assert.equal(
        sampleValue(m, 'gta_tasks_finished_total', { model: 'model-3d', status: 'canceled', error_code: '' }),
        1,
      );
      const runs = m.get('gta_task_run_duration_seconds');
      assert.equal(runs?.type, 'histogram');
      assert.equal(runs?.samples.length, 0, 'no run ended');
    } finally {
      await t.close();
    }
  });
});

describe('the strict text-format parser of these tests', () => {
  test('reads families, labels with escapes and special values', () => {
    const families = parsePrometheusText(
      [
        '# HELP a_total Things.',
        '# TYPE a_total counter',
        'a_total{x="q\\"uote\\\\",y="line\\nbreak"} 3',
        '# TYPE g gauge',
        'g NaN',
        'g{k="v"} -Inf 1700000000000',
        '',
      ].join('\n'),
    );
    assert.equal(sampleValue(families, 'a_total', { x: 'q"uote\\', y: 'line\nbreak' }), 3);
    assert.equal(sampleValue(families, 'g', { k: 'v' }), Number.NEGATIVE_INFINITY);
  });

  test('fails on malformed lines and broken histograms', () => {
    const bad = [
      'orphan 1',
      '# TYPE a counter\na{x="1"',
      '# TYPE a counter\na{x=1} 1',
      '# TYPE a counter\na{1x="1"} 1',
      '# TYPE a counter\na one',
      '# TYPE a counter\na 1\na 2',
      '# TYPE a counter\na{x="\\q"} 1',
      '# TYPE a wobbly',
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_count 1\nh_sum 1',
      '# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_count 3\nh_sum 1',
    ];
    for (const text of bad) assert.throws(() => parsePrometheusText(text), ExpositionError, text);
  });
});
