import type { RawRequest } from 'autocannon';
import { type RunOutcome, runAutocannon } from '../load.ts';
import type { BenchClient } from './clients.ts';

/** What a scenario sends; every request goes out as the next client in turn. */
export interface RotatingSpec {
  method: 'GET' | 'POST';
  /** Path of the request for `client`. */
  path: (client: BenchClient) => string;
  body?: string;
}

/**
 * Hands out the clients in turn to every request of every connection and target. Shared by all
 * scenarios, it spreads each account's requests evenly over the run, so none gets near its 120 a minute.
 */
export function rotation(clients: readonly BenchClient[]): () => BenchClient {
  let next = 0;
  return () => {
    const client = clients[next % clients.length];
    next += 1;
    if (!client) throw new Error('no bench clients');
    return client;
  };
}

/**
 * One closed-loop run of `seconds` against every base URL at once, `connections` split evenly over them
 * (one autocannon instance per target, all in this process; the figures are summed). That is what a
 * connection-level round-robin balancer with keep-alive does, and it keeps the total concurrency equal
 * for one and for two processes.
 */
export async function runRotating(
  spec: RotatingSpec,
  bases: readonly string[],
  next: () => BenchClient,
  connections: number,
  seconds: number,
): Promise<RunOutcome> {
  const share = Math.max(1, Math.floor(connections / bases.length));
  const runs = await Promise.all(bases.map((base) => runOne(spec, base, next, share, seconds)));
  const statusCodes: Record<string, number> = {};
  for (const run of runs) {
    for (const [code, count] of Object.entries(run.statusCodes))
      statusCodes[code] = (statusCodes[code] ?? 0) + count;
  }
  return {
    // The instances run side by side: the slowest one's time is the run's time.
    seconds: Math.max(...runs.map((run) => run.seconds)),
    ok: runs.reduce((sum, run) => sum + run.ok, 0),
    failures: runs.reduce((sum, run) => sum + run.failures, 0),
    statusCodes,
    latencies: runs.flatMap((run) => run.latencies),
  };
}

async function runOne(
  spec: RotatingSpec,
  base: string,
  next: () => BenchClient,
  connections: number,
  seconds: number,
): Promise<RunOutcome> {
  const setupRequest = (request: RawRequest): RawRequest => {
    const client = next();
    return {
      ...request,
      path: spec.path(client),
      headers: { ...request.headers, authorization: `Bearer ${client.key}` },
    };
  };
  return runAutocannon({
    url: base,
    connections,
    duration: seconds,
    method: spec.method,
    headers: spec.body === undefined ? {} : { 'content-type': 'application/json' },
    ...(spec.body === undefined ? {} : { body: spec.body }),
    requests: [{ setupRequest }],
  });
}
