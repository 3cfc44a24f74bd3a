/**
 * The HTTP series of `GET /metrics` (requests, and their durations as a histogram, by route pattern,
 * method and status), counted by the request's own code in a plain map and shaped for prom-client's
 * registry only when it is scraped.
 *
 * Why not prom-client's Counter and Histogram: they hash and validate the label object on every call, and
 * every request makes two; that was 4 % of a poll's CPU (docs/performance.md). Here a request costs one map
 * lookup by a string and a few additions. The text a scrape answers is prom-client's, unchanged: the
 * registry writes these series as it writes its own.
 */

type HttpLabel = 'route' | 'method' | 'status';
type Labels = Record<HttpLabel, string>;

/** One sample as prom-client's registry reads it from a metric's `get()`. */
export interface SeriesSample {
  value: number;
  labels: Partial<Record<HttpLabel | 'le', string | number>>;
  metricName?: string;
}

/** What prom-client's registry reads from a metric: its name, help, type and `get()`. */
export interface RegistrySeries {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; aggregator: 'sum'; values: SeriesSample[] }>;
  reset(): void;
}

interface Counts {
  labels: Labels;
  count: number;
  sum: number;
  /** Observations per bucket, not cumulative: `perBucket[i]` counts values in (bound[i-1], bound[i]]. */
  perBucket: number[];
}

/** Requests and their durations by route, method and status, sharing one count per label set. */
export class HttpSeries {
  readonly #bounds: readonly number[];
  readonly #counts = new Map<string, Counts>();
  /** `http_requests_total`. */
  readonly requests: RegistrySeries;
  /** `http_request_duration_seconds` (with `_bucket`, `_sum` and `_count`). */
  readonly duration: RegistrySeries;

  constructor(
    names: { requests: string; requestsHelp: string; duration: string; durationHelp: string },
    bounds: readonly number[],
  ) {
    this.#bounds = [...bounds].sort((a, b) => a - b);
    const reset = (): void => this.#counts.clear();
    this.requests = series(
      names.requests,
      names.requestsHelp,
      'counter',
      () => this.#requestSamples(),
      reset,
    );
    this.duration = series(
      names.duration,
      names.durationHelp,
      'histogram',
      () => this.#durationSamples(),
      reset,
    );
  }

  /** Counts one answered request that took `seconds`. */
  observe(route: string, method: string, status: number, seconds: number): void {
    const key = `${status} ${method} ${route}`;
    let counts = this.#counts.get(key);
    if (counts === undefined) {
      counts = {
        labels: { route, method, status: String(status) },
        count: 0,
        sum: 0,
        perBucket: new Array<number>(this.#bounds.length).fill(0),
      };
      this.#counts.set(key, counts);
    }
    counts.count += 1;
    counts.sum += seconds;
    const bucket = this.#bucketOf(seconds);
    if (bucket < this.#bounds.length) counts.perBucket[bucket] = (counts.perBucket[bucket] ?? 0) + 1;
  }

  /** The first bound at or above `value` (Prometheus buckets are `le`), or the count of bounds (+Inf). */
  #bucketOf(value: number): number {
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i += 1;
    return i;
  }

  #requestSamples(): SeriesSample[] {
    return [...this.#counts.values()].map((c) => ({ value: c.count, labels: { ...c.labels } }));
  }

  #durationSamples(): SeriesSample[] {
    const samples: SeriesSample[] = [];
    const name = this.duration.name;
    for (const c of this.#counts.values()) {
      let cumulative = 0;
      this.#bounds.forEach((bound, i) => {
        cumulative += c.perBucket[i] ?? 0;
        samples.push({ value: cumulative, labels: { le: bound, ...c.labels }, metricName: `${name}_bucket` });
      });
      samples.push({ value: c.count, labels: { le: '+Inf', ...c.labels }, metricName: `${name}_bucket` });
      samples.push({ value: c.sum, labels: { ...c.labels }, metricName: `${name}_sum` });
      samples.push({ value: c.count, labels: { ...c.labels }, metricName: `${name}_count` });
    }
    return samples;
  }
}

function series(
  name: string,
  help: string,
  type: 'counter' | 'histogram',
  samples: () => SeriesSample[],
  reset: () => void,
): RegistrySeries {
  return {
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: samples() }),
    reset,
  };
}
