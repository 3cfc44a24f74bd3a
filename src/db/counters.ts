import type pg from 'pg';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterPostgres } from 'rate-limiter-flexible';

/**
 * Counters of `points` per key within `durationSeconds` (rate-limiter-flexible): with a PostgreSQL pool
 * in the `rate_limits` table (migration 0004), shared by every process on the database; otherwise in
 * this process's memory. The request limits, sign-in attempts, download allowances and signed-out
 * sessions all keep theirs here, each under its own `keyPrefix`. An `insured` store counts in this
 * process's memory while the database does not answer, instead of failing.
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
        storeClient: pgPool,
        storeType: 'pool',
        tableName: 'rate_limits',
        tableCreated: true,
        ...(insured ? { insuranceLimiter: new RateLimiterMemory(options) } : {}),
      })
    : new RateLimiterMemory(options);
}
