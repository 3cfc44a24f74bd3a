// autocannon ships no types and @types/autocannon is not installed: this declares only the part of its
// programmatic API the bench uses, so the bench stays strict without `any`.
declare module 'autocannon' {
  /** Summary of an HDR histogram (latency in milliseconds, 1 ms resolution; requests per second). */
  export interface HistogramSummary {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
  }

  /** One connection of the load generator. */
  export interface Client {
    /** Replaces the headers of this connection's requests. */
    setHeaders(headers: Record<string, string>): void;
  }

  export interface Options {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    method?: 'GET' | 'POST';
    headers?: Record<string, string>;
    body?: string;
    /** Called once per connection, e.g. to give each connection its own credentials. */
    setupClient?: (client: Client) => void;
  }

  export interface Result {
    /** Seconds actually run. */
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    resets: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
    latency: HistogramSummary & { totalCount: number };
    requests: HistogramSummary & { sent: number };
  }

  /** A running load: a promise of the result that also reports every response as it arrives. */
  export interface Instance extends PromiseLike<Result> {
    /** `responseTime` in milliseconds with sub-millisecond precision (from process.hrtime). */
    on(
      event: 'response',
      listener: (client: Client, statusCode: number, resBytes: number, responseTime: number) => void,
    ): this;
  }

  /** Without a callback, autocannon returns an instance that is also a promise of the result. */
  export default function autocannon(options: Options): Instance;
}
