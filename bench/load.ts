import autocannon, { type Client, type Options } from 'autocannon';

/** What one scenario sends. */
export interface LoadSpec {
  name: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /**
   * Headers per connection, used in turn (connection i gets entry i modulo the length) instead of
   * `headers`: lets each connection act as a different client.
   */
  headersPerConnection?: ReadonlyArray<Record<string, string>>;
  body?: string;
}

/** The raw outcome of one autocannon run. */
export interface RunOutcome {
  /** Seconds actually run. */
  seconds: number;
  /** 2xx responses. */
  ok: number;
  /** Socket errors (timeouts included) + non-2xx responses. */
  failures: number;
  statusCodes: Record<string, number>;
  /** Latency of each 2xx response (ms, sub-millisecond precision). */
  latencies: number[];
}

/** One scenario's figures over all its measured runs. */
export interface Measurement {
  name: string;
  /** 2xx responses per second over all measured runs. */
  rate: number;
  /** The rate of each measured run (one per round), to show how much the machine wobbled. */
  roundRates: number[];
  /** Latency of 2xx responses (ms). */
  p50: number;
  p99: number;
  /** 2xx responses in the measured runs. */
  ok: number;
  /** Failed requests of the warm-up and the measured runs, with every status code seen. */
  failures: number;
  statusCodes: Record<string, number>;
}

/**
 * One closed-loop run of `seconds` with `connections` keep-alive connections. Latencies are taken from
 * autocannon's response events rather than its histogram, whose 1 ms resolution is too coarse here.
 */
export async function runLoad(spec: LoadSpec, connections: number, seconds: number): Promise<RunOutcome> {
  const options: Options = {
    url: spec.url,
    connections,
    duration: seconds,
    method: spec.method ?? 'GET',
    headers: spec.headers ?? {},
    ...(spec.body === undefined ? {} : { body: spec.body }),
    ...(spec.headersPerConnection ? { setupClient: rotate(spec.headersPerConnection) } : {}),
  };
  return runAutocannon(options);
}

/**
 * Runs autocannon with `options` and keeps per-response latencies of 2xx answers (sub-millisecond)
 * rather than autocannon's 1 ms histogram. Shared by `npm run bench` and `npm run bench:scale`.
 */
export async function runAutocannon(options: Options): Promise<RunOutcome> {
  const latencies: number[] = [];
  const instance = autocannon(options);
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  const result = await instance;
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats)) statusCodes[code] = stats.count;
  return {
    seconds: result.duration,
    ok: result['2xx'],
    failures: result.errors + result.non2xx,
    statusCodes,
    latencies,
  };
}

/** Adds up a scenario's runs: rates and percentiles from the measured runs, failures from all of them. */
export function summarize(
  name: string,
  measured: readonly RunOutcome[],
  warmups: readonly RunOutcome[],
): Measurement {
  const ok = measured.reduce((sum, run) => sum + run.ok, 0);
  const seconds = measured.reduce((sum, run) => sum + run.seconds, 0);
  const latencies = Float64Array.from(measured.flatMap((run) => run.latencies)).sort();
  const statusCodes: Record<string, number> = {};
  for (const run of [...warmups, ...measured]) {
    for (const [code, count] of Object.entries(run.statusCodes))
      statusCodes[code] = (statusCodes[code] ?? 0) + count;
  }
  return {
    name,
    rate: seconds > 0 ? ok / seconds : 0,
    roundRates: measured.map((run) => (run.seconds > 0 ? run.ok / run.seconds : 0)),
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    ok,
    failures: [...warmups, ...measured].reduce((sum, run) => sum + run.failures, 0),
    statusCodes,
  };
}

/** Nearest-rank percentile of sorted values (0 when there are none). */
export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] ?? 0;
}

/** A setupClient that hands the header sets out to the connections in turn. */
function rotate(headerSets: ReadonlyArray<Record<string, string>>): (client: Client) => void {
  let next = 0;
  return (client) => {
    const headers = headerSets[next % headerSets.length];
    next += 1;
    if (headers) client.setHeaders(headers);
  };
}
