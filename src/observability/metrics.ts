/**
 * The process's metrics (CONTRACT §15) in a registry of its own, never prom-client's global one: tests build
 * many apps in one process, and each must count only its own traffic. Counters and histograms here are
 * this process's; the gauges read from the database at scrape time (state-gauges.ts) are the same from
 * every process.
 */
import { Counter, collectDefaultMetrics, Histogram, type Metric, Registry } from 'prom-client';
import { HttpSeries, type RegistrySeries } from './http-series.ts';

/** Route label of requests no route matched (404, 405, refusals before routing). */
export const UNMATCHED_ROUTE = 'unmatched';
/** Channel label of runs on the built-in simulator or the default generator (no channel file entry). */
export const DEFAULT_CHANNEL = 'default';

/** Run durations span seconds (simulator, images) to an hour (long videos, provider queues). */
const RUN_BUCKETS_SECONDS = [1, 5, 15, 30, 60, 120, 300, 600, 1_200, 1_800, 3_600];
/** Request durations: a poll takes milliseconds, an upload or a long-poll up to a minute. */
const HTTP_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface MetricsOptions {
  /** Also collect Node's process metrics (CPU, memory, event loop, GC). (Default: true) */
  processMetrics?: boolean;
}

/** Every series this process exposes at `GET /metrics`, in one registry. */
export class Metrics {
  readonly registry = new Registry();
  readonly #http: HttpSeries;
  readonly tasksCreated: Counter<'model'>;
  readonly tasksFinished: Counter<'model' | 'status' | 'error_code'>;
  readonly runDuration: Histogram<'model' | 'channel' | 'status'>;

  constructor(options: MetricsOptions = {}) {
    const registers = [this.registry];
    this.#http = new HttpSeries(
      {
        requests: 'http_requests_total',
        requestsHelp: 'HTTP requests answered, by route pattern, method and status.',
        duration: 'http_request_duration_seconds',
        durationHelp: 'Time from receiving a request to the end of its answer (seconds).',
      },
      HTTP_BUCKETS_SECONDS,
    );
    // The registry reads a metric's name, help, type and get(), which the HTTP series provide.
    for (const series of [this.#http.requests, this.#http.duration])
      this.registry.registerMetric(series as unknown as Metric);
    this.tasksCreated = new Counter({
      name: 'gta_tasks_created_total',
      help: 'Tasks accepted (queued with a hold) by this process, by model.',
      labelNames: ['model'],
      registers,
    });
    this.tasksFinished = new Counter({
      name: 'gta_tasks_finished_total',
      help: 'Tasks that reached a final state in this process, by model, status and error code ("" unless failed).',
      labelNames: ['model', 'status', 'error_code'],
      registers,
    });
    this.runDuration = new Histogram({
      name: 'gta_task_run_duration_seconds',
      help: 'Runs ended by this worker, from the move to running to succeeded or failed (seconds).',
      labelNames: ['model', 'channel', 'status'],
      buckets: RUN_BUCKETS_SECONDS,
      registers,
    });
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** One answered request; `route` is the route's pattern, never the raw URL, so series stay bounded. */
  observeRequest(
    labels: { route: string | undefined; method: string; status: number },
    seconds: number,
  ): void {
    this.#http.observe(labels.route ?? UNMATCHED_ROUTE, labels.method, labels.status, seconds);
  }

  /** `http_requests_total` as the registry reads it (tests). */
  get httpRequests(): RegistrySeries {
    return this.#http.requests;
  }

  /** The text a scrape answers (Prometheus exposition format 0.0.4). */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  /** Content-Type of `scrape()`. */
  get contentType(): string {
    return this.registry.contentType;
  }
}
