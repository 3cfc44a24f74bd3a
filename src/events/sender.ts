/**
 * Sends queued webhook deliveries (CONTRACT §12), in a loop of its own beside the task worker, so task
 * processing never waits for a receiver. Many deliveries are in flight at once, each attempt is bounded
 * (10 s), and one receiver's host holds at most half the slots, so a slow or dead receiver never holds
 * them all. Woken by new deliveries (in this
 * process and, on PostgreSQL, from any process) and by its own timer for the next due retry.
 */
import os from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/index.ts';
import type { Clock } from '../lib/index.ts';
import { Alarm, uuidv7 } from '../lib/index.ts';
import { FetchError, type LookupFn, postGuarded } from '../media/index.ts';
import {
  type ClaimedDelivery,
  claimDeliveries,
  nextDueAt,
  type Outcome,
  receiverOf,
  recordOutcome,
} from './delivery-queue.ts';
import { WEBHOOKS_CHANNEL } from './outbox.ts';
import { signDelivery } from './signing.ts';
import { ENDPOINT_DELETED } from './webhook-service.ts';

export interface WebhookSenderDeps {
  db: Db;
  clock: Clock;
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
  /** Waits before each retry (WEBHOOK_RETRY_SCHEDULE); used up, the delivery is failed. */
  retryScheduleMs: readonly number[];
  /** The account's default secret (made on first use), which signs tasks' own webhooks. */
  defaultSecret(accountId: string): Promise<string>;
  /** Test-only: exact IP addresses receivers may have although private (FETCH_ALLOW_ADDRESSES). */
  allowAddresses: readonly string[];
}

/**
 * Longest a stop waits for the attempts in flight to be answered (milliseconds) before it aborts them and
 * gives their deliveries back: an answered attempt is recorded, where one given back is sent again by the
 * next process, a second call the receiver must recognise by its webhook-id.
 */
const STOP_GRACE_MS = 2_000;

export interface WebhookSenderOptions {
  /** Deliveries in flight at once. (Default: 16) */
  concurrency?: number;
  /** Lease of a claimed delivery (milliseconds); longer than an attempt. (Default: 30 s) */
  leaseMs?: number;
  /** Safety poll for deliveries no notification announced (milliseconds). (Default: 2 s) */
  pollIntervalMs?: number;
  /** Time for one attempt to get an answer (milliseconds). (Default: 10 s, CONTRACT §12) */
  timeoutMs?: number;
  /** DNS lookup override (tests). */
  lookup?: LookupFn;
}

export class WebhookSender {
  readonly id = `sender-${os.hostname()}-${process.pid}-${uuidv7().slice(-8)}`;
  readonly #deps: WebhookSenderDeps;
  readonly #concurrency: number;
  readonly #leaseMs: number;
  readonly #pollIntervalMs: number;
  readonly #timeoutMs: number;
  readonly #lookup: LookupFn | undefined;
  /** Deliveries in flight, by id, with their order key. */
  readonly #inFlight = new Map<
    string,
    { key: string; host: string; abort: AbortController; done: Promise<void> }
  >();
  #stopping = false;
  #loop: Promise<void> | null = null;
  readonly #alarm = new Alarm();
  #unlisten: Promise<() => Promise<void>> | null = null;

  constructor(deps: WebhookSenderDeps, options: WebhookSenderOptions = {}) {
    this.#deps = deps;
    this.#concurrency = options.concurrency ?? 16;
    this.#leaseMs = options.leaseMs ?? 30_000;
    this.#pollIntervalMs = options.pollIntervalMs ?? 2_000;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#lookup = options.lookup;
  }

  start(): void {
    if (this.#loop) return;
    this.#stopping = false;
    this.#loop = this.#run();
    this.#unlisten = this.#deps.db
      .listen(WEBHOOKS_CHANNEL, () => this.wake())
      .catch((error: unknown) => {
        this.#deps.log.warn({ err: error }, 'cannot listen for webhook deliveries; polling only');
        return async () => {};
      });
  }

  /** Something may be due: look now rather than at the next timer. */
  wake(): void {
    this.#alarm.ring();
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /**
   * Stops claiming. Attempts in flight get `graceMs` to be answered and recorded; those still waiting then
   * are aborted and their deliveries given back uncounted.
   */
  async stop(graceMs = STOP_GRACE_MS): Promise<void> {
    this.#stopping = true;
    this.wake();
    await this.#loop;
    this.#loop = null;
    await (await this.#unlisten)?.();
    this.#unlisten = null;
    const settled = () => Promise.allSettled([...this.#inFlight.values()].map((f) => f.done));
    if (this.#inFlight.size > 0 && graceMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([settled(), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
    }
    for (const { abort } of this.#inFlight.values()) abort.abort(new Error('sender stopping'));
    await settled();
  }

  /** Claims and starts due deliveries once; resolves with how many were started. */
  async tick(): Promise<number> {
    const claimed = await claimDeliveries(this.#deps.db, {
      owner: this.id,
      limit: this.#concurrency - this.#inFlight.size,
      now: this.#deps.clock.now(),
      leaseMs: this.#leaseMs,
      busyKeys: new Set([...this.#inFlight.values()].map((f) => f.key)),
      // One receiver's host takes at most half the slots: the others keep the other half however long
      // a dead or slow one makes its attempts last.
      hostShare: { busy: this.#hostsInFlight(), max: Math.max(1, Math.ceil(this.#concurrency / 2)) },
    });
    for (const delivery of claimed) this.#start(delivery);
    return claimed.length;
  }

  /** Deliveries in flight in this process, by receiver host. */
  #hostsInFlight(): Map<string, number> {
    const hosts = new Map<string, number>();
    for (const { host } of this.#inFlight.values()) hosts.set(host, (hosts.get(host) ?? 0) + 1);
    return hosts;
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      let started = 0;
      try {
        started = await this.tick();
      } catch (error) {
        this.#deps.log.error({ err: error }, 'claiming webhook deliveries failed');
      }
      if (this.#stopping) break;
      if (started > 0 && this.#inFlight.size < this.#concurrency) continue;
      let waitMs = this.#pollIntervalMs;
      try {
        const next = await nextDueAt(this.#deps.db, this.#deps.clock.now());
        if (next) waitMs = Math.min(waitMs, Math.max(10, next.getTime() - this.#deps.clock.now().getTime()));
      } catch (error) {
        this.#deps.log.warn({ err: error }, 'reading the next webhook due time failed');
      }
      if (this.#stopping) continue;
      // A wake-up that came while claiming ends this sleep at once.
      await this.#alarm.sleep(waitMs);
    }
  }

  #start(delivery: ClaimedDelivery): void {
    const abort = new AbortController();
    const done = this.#attempt(delivery, abort.signal)
      .catch((error: unknown) =>
        this.#deps.log.error({ err: error, delivery: delivery.id }, 'webhook delivery crashed'),
      )
      .finally(() => {
        this.#inFlight.delete(delivery.id);
        // A slot is free, and a later delivery of the same key may go now.
        this.wake();
      });
    this.#inFlight.set(delivery.id, { key: delivery.orderKey, host: receiverOf(delivery.url), abort, done });
  }

  async #attempt(delivery: ClaimedDelivery, signal: AbortSignal): Promise<void> {
    const outcome = await this.#send(delivery, signal);
    await recordOutcome(this.#deps.db, {
      id: delivery.id,
      owner: this.id,
      attempts: delivery.attempts,
      dueAt: delivery.dueAt,
      now: this.#deps.clock.now(),
      outcome,
    });
  }

  async #send(delivery: ClaimedDelivery, signal: AbortSignal): Promise<Outcome> {
    const now = this.#deps.clock.now();
    const secrets = await this.#secretsOf(delivery, now);
    if (secrets === null) return { kind: 'dropped', error: ENDPOINT_DELETED };
    const headers = signDelivery(delivery.id, now, delivery.body, secrets);
    let status: number | null = null;
    let error: string;
    try {
      ({ status } = await postGuarded(delivery.url, delivery.body, {
        headers: { ...headers },
        timeoutMs: this.#timeoutMs,
        signal,
        allowAddresses: this.#deps.allowAddresses,
        ...(this.#lookup ? { lookup: this.#lookup } : {}),
      }));
      if (status >= 200 && status <= 299) return { kind: 'succeeded', status };
      // Security: a redirect is never followed; its target would get the signed body unchecked.
      error = status >= 300 && status <= 399 ? `redirect ${status} not followed` : `status ${status}`;
    } catch (caught) {
      if (signal.aborted) return { kind: 'released' };
      error = describe(caught, this.#timeoutMs);
    }
    const wait = this.#deps.retryScheduleMs[delivery.attempts];
    const retryAt = wait === undefined ? null : new Date(this.#deps.clock.now().getTime() + wait);
    return { kind: 'failed', status, error, retryAt };
  }

  /** The secrets that sign an attempt now: an endpoint's (two during a rotation's overlap), else the default. */
  async #secretsOf(delivery: ClaimedDelivery, now: Date): Promise<string[] | null> {
    if (delivery.webhookId === null) return [await this.#deps.defaultSecret(delivery.accountId)];
    const endpoint = await this.#deps.db.db
      .selectFrom('webhook_endpoints')
      .select(['secret', 'previous_secret', 'previous_secret_expires_at', 'deleted_at'])
      .where('id', '=', delivery.webhookId)
      .executeTakeFirst();
    if (!endpoint || endpoint.deleted_at !== null) return null;
    const overlap =
      endpoint.previous_secret !== null &&
      endpoint.previous_secret_expires_at !== null &&
      now.toISOString() < endpoint.previous_secret_expires_at;
    return overlap ? [endpoint.secret, endpoint.previous_secret as string] : [endpoint.secret];
  }
}

/** A short reason for the log: never a secret, never a body. */
function describe(error: unknown, timeoutMs: number): string {
  if (error instanceof FetchError) {
    if (error.reason === 'blocked') return 'address not public';
    if (error.reason === 'timeout') return `no answer within ${Math.round(timeoutMs / 1000)} s`;
    if (error.reason === 'bad_url') return 'invalid URL';
    return `connection failed: ${error.message}`.slice(0, 200);
  }
  return 'delivery failed';
}
