import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createDb, type Db, migrateToLatest } from '../db/index.ts';
import { Metrics } from './metrics.ts';
import { type ChannelState, registerStateGauges } from './state-gauges.ts';

let db: Db;
before(async () => {
  db = createDb('sqlite::memory:');
  await migrateToLatest(db);
});
after(() => db.close());

const CHANNEL: ChannelState = { name: 'main', provider: 'suno', enabled: true, state: 'open', in_flight: 2 };

function lineOf(text: string, series: string): string | undefined {
  return text.split('\n').find((l) => l.startsWith(series));
}

test('one scrape reads the database once; the next scrapes within the cache reuse it', async () => {
  const metrics = new Metrics({ processMetrics: false });
  let reads = 0;
  registerStateGauges(metrics, {
    db,
    clock: { now: () => new Date() },
    models: ['music', 'video'],
    channels: async () => {
      reads += 1;
      return [CHANNEL];
    },
  });
  const text = await metrics.scrape();
  await metrics.scrape();
  assert.equal(reads, 1);
  assert.equal(lineOf(text, 'gta_queue_depth{model="video"}'), 'gta_queue_depth{model="video"} 0');
  assert.equal(
    lineOf(text, 'gta_channel_state{channel="main",provider="suno",state="open"}'),
    'gta_channel_state{channel="main",provider="suno",state="open"} 1',
  );
  assert.equal(
    lineOf(text, 'gta_channel_in_flight{'),
    'gta_channel_in_flight{channel="main",provider="suno"} 2',
  );
  assert.equal(lineOf(text, 'gta_money_held_kopecks '), 'gta_money_held_kopecks 0');
  assert.equal(
    lineOf(text, 'gta_webhook_deliveries{state="pending"}'),
    'gta_webhook_deliveries{state="pending"} 0',
  );
});

test('a failing or slow database leaves its gauges out, counts the failure, and the scrape still answers', async () => {
  for (const channels of [
    () => Promise.reject(new Error('connection refused')),
    () => new Promise<ChannelState[]>(() => {}),
  ]) {
    const metrics = new Metrics({ processMetrics: false });
    registerStateGauges(metrics, {
      db,
      clock: { now: () => new Date() },
      models: ['music'],
      channels,
      readTimeoutMs: 50,
    });
    const text = await metrics.scrape();
    assert.equal(lineOf(text, 'gta_state_read_failures_total '), 'gta_state_read_failures_total 1');
    assert.equal(lineOf(text, 'gta_queue_depth{'), undefined);
    assert.equal(lineOf(text, 'gta_webhook_deliveries{'), undefined);
    // prom-client writes NaN as `Nan`, which Prometheus reads (Go's ParseFloat ignores the case).
    assert.match(lineOf(text, 'gta_money_held_kopecks ') ?? '', /^gta_money_held_kopecks nan$/i);
    assert.match(text, /^# TYPE http_requests_total counter$/m, 'the rest of the scrape is there');
  }
});
