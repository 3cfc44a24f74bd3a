/**
 * Gauges read from the database when scraped (CONTRACT §15): queue depth and the oldest queued task per
 * model, channel states, webhook deliveries by state, money held and captured. Every process answers the
 * same values, since they describe the shared database. Each query is a grouped count or sum over a
 * bounded set (jobs exist only for unfinished tasks, one account row per account, the deliveries' state
 * index), and one scrape's results are kept for a few seconds, so scraping every process every few seconds
 * costs the database a handful of small queries.
 */
import { sql } from 'kysely';
import { Counter, Gauge } from 'prom-client';
import type { Db, WebhookDeliveryState } from '../db/index.ts';
import { type Clock, withTimeout } from '../lib/index.ts';
import type { Metrics } from './metrics.ts';

/** How long one scrape's database results serve the next scrapes (milliseconds). */
export const STATE_CACHE_MS = 5_000;
/**
 * Longest wait for the database's answers (milliseconds): past it the scrape goes on without them, well
 * inside Prometheus' default scrape timeout of 10 s.
 */
export const STATE_READ_TIMEOUT_MS = 3_000;

const CIRCUIT_STATES = ['closed', 'open', 'half_open'] as const;
const DELIVERY_STATES: readonly WebhookDeliveryState[] = ['pending', 'succeeded', 'failed'];

/** What the gauges read of a channel (the ChannelRouter's `views()` rows). */
export interface ChannelState {
  name: string;
  provider: string;
  enabled: boolean;
  state: string;
  in_flight: number;
}

export interface StateSources {
  db: Db;
  clock: Clock;
  /** Every model key, so a model with an empty queue reads 0 rather than disappearing. */
  models: readonly string[];
  /** The channels of GENERATORS_FILE and their state (the ChannelRouter's listing). */
  channels(): Promise<ChannelState[]>;
  /** (Default: STATE_CACHE_MS) */
  cacheMs?: number;
  /** (Default: STATE_READ_TIMEOUT_MS) */
  readTimeoutMs?: number;
}

interface Snapshot {
  queued: Map<string, { count: number; oldestMs: number }>;
  channels: ChannelState[];
  deliveries: Map<string, number>;
  heldMinor: number;
  capturedMinor: number;
  creditedMinor: number;
}

/** Registers the database-derived gauges on `metrics`' registry. */
export function registerStateGauges(metrics: Metrics, sources: StateSources): void {
  const cacheMs = sources.cacheMs ?? STATE_CACHE_MS;
  const registers = [metrics.registry];
  let cached: { at: number; snapshot: Promise<Snapshot | null> } | null = null;
  // A scrape must answer while the database is away (that is when process metrics matter): a failed or
  // slow read leaves the database gauges out of this scrape, and is not cached.
  const snapshot = (): Promise<Snapshot | null> => {
    const now = Date.now();
    if (cached === null || now - cached.at >= cacheMs) {
      const timeoutMs = sources.readTimeoutMs ?? STATE_READ_TIMEOUT_MS;
      const fresh = withTimeout(
        readSnapshot(sources),
        timeoutMs,
        `database gauges took over ${timeoutMs} ms`,
      ).catch(() => {
        failures.inc();
        if (cached?.snapshot === fresh) cached = null;
        return null;
      });
      cached = { at: now, snapshot: fresh };
    }
    return cached.snapshot;
  };

  new Gauge({
    name: 'gta_queue_depth',
    help: 'Tasks waiting in the queue (status queued), by model.',
    labelNames: ['model'],
    registers,
    async collect() {
      const read = await snapshot();
      this.reset();
      if (read === null) return;
      for (const model of sources.models) this.set({ model }, read.queued.get(model)?.count ?? 0);
    },
  });
  new Gauge({
    name: 'gta_queue_oldest_age_seconds',
    help: 'Age of the oldest queued task, by model; 0 when none waits (seconds).',
    labelNames: ['model'],
    registers,
    async collect() {
      const read = await snapshot();
      this.reset();
      if (read === null) return;
      const now = sources.clock.now().getTime();
      for (const model of sources.models) {
        const oldest = read.queued.get(model)?.oldestMs;
        this.set({ model }, oldest === undefined ? 0 : Math.max(0, (now - oldest) / 1_000));
      }
    },
  });
  new Gauge({
    name: 'gta_channel_state',
    help: 'Circuit state of each channel: 1 for its current state, 0 for the others.',
    labelNames: ['channel', 'provider', 'state'],
    registers,
    async collect() {
      this.reset();
      for (const c of (await snapshot())?.channels ?? [])
        for (const state of CIRCUIT_STATES)
          this.set({ channel: c.name, provider: c.provider, state }, c.state === state ? 1 : 0);
    },
  });
  new Gauge({
    name: 'gta_channel_enabled',
    help: 'Whether each channel is enabled (1) or switched off (0).',
    labelNames: ['channel', 'provider'],
    registers,
    async collect() {
      this.reset();
      for (const c of (await snapshot())?.channels ?? [])
        this.set({ channel: c.name, provider: c.provider }, c.enabled ? 1 : 0);
    },
  });
  new Gauge({
    name: 'gta_channel_in_flight',
    help: 'Runs holding a slot of each channel, across all processes.',
    labelNames: ['channel', 'provider'],
    registers,
    async collect() {
      this.reset();
      for (const c of (await snapshot())?.channels ?? [])
        this.set({ channel: c.name, provider: c.provider }, c.in_flight);
    },
  });
  new Gauge({
    name: 'gta_webhook_deliveries',
    help: 'Webhook deliveries by state (pending, succeeded, failed).',
    labelNames: ['state'],
    registers,
    async collect() {
      const read = await snapshot();
      this.reset();
      if (read === null) return;
      for (const state of DELIVERY_STATES) this.set({ state }, read.deliveries.get(state) ?? 0);
    },
  });
  const money = (name: string, help: string, pick: (s: Snapshot) => number): void => {
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        const read = await snapshot();
        // A gauge without labels cannot be left out: NaN shows as a gap, where 0 would be a false reading.
        this.set(read === null ? Number.NaN : pick(read));
      },
    });
  };
  money(
    'gta_money_held_kopecks',
    'Money held for unfinished tasks, all accounts (kopecks).',
    (s) => s.heldMinor,
  );
  money(
    'gta_money_captured_kopecks',
    'Money captured by succeeded tasks, all accounts (kopecks).',
    (s) => s.capturedMinor,
  );
  money('gta_money_credited_kopecks', 'Money credited to all accounts (kopecks).', (s) => s.creditedMinor);
  const failures = new Counter({
    name: 'gta_state_read_failures_total',
    help: 'Scrapes whose database-derived gauges were left out: the database failed or was too slow.',
    registers,
    // Waits for this scrape's read, so its own failure shows in it.
    async collect() {
      await snapshot();
    },
  });
}

async function readSnapshot(sources: StateSources): Promise<Snapshot> {
  const { db } = sources.db;
  const [queuedRows, deliveryRows, money, channels] = await Promise.all([
    // Through jobs: only unfinished tasks have one, so the scan stays small however many tasks ended.
    db
      .selectFrom('jobs')
      .innerJoin('tasks', 'tasks.id', 'jobs.task_id')
      .where('tasks.status', '=', 'queued')
      .select((eb) => [
        'tasks.model',
        eb.fn.countAll<number>().as('n'),
        eb.fn.min('tasks.created_at').as('oldest'),
      ])
      .groupBy('tasks.model')
      .execute(),
    db
      .selectFrom('webhook_deliveries')
      .select((eb) => ['state', eb.fn.countAll<number>().as('n')])
      .groupBy('state')
      .execute(),
    db
      .selectFrom('accounts')
      .select([
        sql<string | number | null>`sum(held_minor)`.as('held'),
        sql<string | number | null>`sum(captured_minor)`.as('captured'),
        sql<string | number | null>`sum(credited_minor)`.as('credited'),
      ])
      .executeTakeFirst(),
    sources.channels(),
  ]);
  return {
    queued: new Map(
      queuedRows.map((r) => [r.model, { count: Number(r.n), oldestMs: Date.parse(String(r.oldest)) }]),
    ),
    deliveries: new Map(deliveryRows.map((r) => [r.state, Number(r.n)])),
    heldMinor: Number(money?.held ?? 0),
    capturedMinor: Number(money?.captured ?? 0),
    creditedMinor: Number(money?.credited ?? 0),
    channels,
  };
}
