import type { FastifyReply } from 'fastify';
import type pg from 'pg';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { errors } from '../../errors.ts';
import type { RequestLimits } from '../types.ts';

/**
 * The reference's request limits on rate-limiter-flexible, whose stores include PostgreSQL and Redis,
 * so the same limiters can later be shared by several processes (issue: scale-out).
 */
export class RequestLimiter {
  readonly #account: RateLimiterAbstract;
  readonly #wrongKey: RateLimiterAbstract;
  readonly #wrongAdminToken: RateLimiterAbstract;
  readonly #limits: RequestLimits;

  /** With a PostgreSQL pool the counters are shared by every API process; otherwise kept in memory. */
  constructor(limits: RequestLimits, pgPool: pg.Pool | null = null) {
    this.#limits = limits;
    const make = (keyPrefix: string, points: number, duration: number): RateLimiterAbstract =>
      pgPool
        ? new RateLimiterPostgres({
            storeClient: pgPool,
            storeType: 'pool',
            tableName: 'rate_limits',
            tableCreated: true,
            keyPrefix,
            points,
            duration,
          })
        : new RateLimiterMemory({ keyPrefix, points, duration });
    const wrongKeyWindow = limits.wrongKeyWindowSeconds ?? limits.windowSeconds;
    this.#account = make('account', limits.accountRequests, limits.windowSeconds);
    this.#wrongKey = make('wrong-key', limits.wrongKeyAttempts, wrongKeyWindow);
    // Its own budget, so API-key traffic from an address never locks its operator out, or the reverse.
    this.#wrongAdminToken = make('wrong-admin-token', limits.wrongKeyAttempts, wrongKeyWindow);
  }

  /**
   * Counts one request of an account (all its keys share the budget), sets the IETF RateLimit headers
   * and throws 429 rate_limited past the limit.
   */
  async takeAccountRequest(accountId: string, reply: FastifyReply): Promise<void> {
    const policy = `"account";q=${this.#limits.accountRequests};w=${this.#limits.windowSeconds}`;
    try {
      const res = await this.#account.consume(accountId);
      reply.header('ratelimit-policy', policy);
      const remaining = integerText(res.remainingPoints);
      reply.header('ratelimit', `"account";r=${remaining};t=${Math.ceil(res.msBeforeNext / 1000)}`);
    } catch (rejection) {
      const res = asLimiterRes(rejection);
      const reset = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      throw errors.rateLimited(reset, { 'RateLimit-Policy': policy, RateLimit: `"account";r=0;t=${reset}` });
    }
  }

  /**
   * Counts a failed key attempt from an address. Returns the seconds to wait when the address is past
   * its budget (then it gets 429 instead of 401), or null.
   */
  async takeWrongKeyAttempt(address: string): Promise<number | null> {
    try {
      await this.#wrongKey.consume(address);
      return null;
    } catch (rejection) {
      return Math.max(1, Math.ceil(asLimiterRes(rejection).msBeforeNext / 1000));
    }
  }

  /**
   * Seconds an address must wait before its next operator-token attempt is even compared, or null.
   * Checked before the comparison, so past the budget a right guess looks exactly like a wrong one.
   */
  async adminTokenWait(address: string): Promise<number | null> {
    const res = await this.#wrongAdminToken.get(address);
    if (!res || res.consumedPoints < this.#limits.wrongKeyAttempts) return null;
    return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  }

  /** Counts a wrong operator token from an address; the seconds to wait once it is past its budget, or null. */
  async takeWrongAdminToken(address: string): Promise<number | null> {
    try {
      await this.#wrongAdminToken.consume(address);
      return null;
    } catch (rejection) {
      return Math.max(1, Math.ceil(asLimiterRes(rejection).msBeforeNext / 1000));
    }
  }
}

/**
 * A whole number as decimal text, without V8's number-to-string cache: that cache lives in the old
 * generation, so caching a new string on every request (the remaining count changes with each one) kept
 * each string alive into the old generation, about 14 KB per young collection under load, and brought a
 * Mark-Compact with a 20 ms pause every several seconds (docs/performance.md). `toFixed` makes its text
 * without the cache.
 */
export function integerText(value: number): string {
  return Number.isSafeInteger(value) ? value.toFixed(0) : String(value);
}

function asLimiterRes(rejection: unknown): RateLimiterRes {
  if (rejection instanceof RateLimiterRes) return rejection;
  throw rejection;
}
