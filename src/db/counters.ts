import type pg from 'pg';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterPostgres } from 'rate-limiter-flexible';
import { withTimeout } from '../lib/index.ts';

/**
 * Longest wait of an insured store for PostgreSQL (milliseconds): a database that takes connections but no
 * longer answers would otherwise hold the call until the pool's connect or query timeout (10 s, 35 s).
 */
export const INSURED_WAIT_MS = 1_000;

/**
 * Counters of `points` per key within `durationSeconds` (rate-limiter-flexible): with a PostgreSQL pool
 * in the `rate_limits` table (migration 0004), shared by every process on the database; otherwise in
 * this process's memory. The request limits, sign-in attempts, download allowances and signed-out
 * sessions all keep theirs here, each under its own `keyPrefix`. An `insured` store counts in this
 * process's memory while the database does not answer (refuses, or is silent for `INSURED_WAIT_MS`),
 * instead of failing or waiting.
 */
export function counterStore(
  keyPrefix: string,
  points: number,
  durationSeconds: number,
  pgPool: pg.Pool | null,
  insured = false,
): RateLimiterAbstract {
  const options = { keyPrefix, points, duration: durationSeconds };
  return pgPool
    ? new RateLimiterPostgres({
        ...options,
        storeClient: insured ? boundedPool(pgPool, INSURED_WAIT_MS) : pgPool,
        storeType: 'pool',
        tableName: 'rate_limits',
        tableCreated: true,
        ...(insured ? { insuranceLimiter: new RateLimiterMemory(options) } : {}),
      })
    : new RateLimiterMemory(options);
}

/** A pool whose queries fail after `ms` (the query itself runs on; its late answer is dropped). */
function boundedPool(pool: pg.Pool, ms: number): Pick<pg.Pool, 'query'> {
  const query = (config: pg.QueryConfig): Promise<pg.QueryResult> =>
    withTimeout(pool.query(config), ms, `PostgreSQL took over ${ms} ms to answer`);
  return { query } as Pick<pg.Pool, 'query'>;
}
