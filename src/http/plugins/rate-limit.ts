import type { FastifyReply } from 'fastify';
import type pg from 'pg';
import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { counterStore } from '../../db/index.ts';
import { errors } from '../../errors.ts';
import { clientAddressKey } from '../../lib/index.ts';
import type { RequestLimits } from '../types.ts';

/**
 * The reference's request limits on rate-limiter-flexible, whose stores include PostgreSQL and Redis,
 * so the same limiters can later be shared by several processes (issue: scale-out).
 */
export class RequestLimiter {
  /** Counted in this process without a promise per request, or shared by every process in PostgreSQL. */
  readonly #account: FixedWindows | RateLimiterAbstract;
  readonly #wrongKey: RateLimiterAbstract;
  readonly #wrongAdminToken: RateLimiterAbstract;
  /** The `RateLimit-Policy` header of the account budget. */
  readonly #policy: string;

  /** With a PostgreSQL pool the counters are shared by every API process; otherwise kept in memory. */
  constructor(limits: RequestLimits, pgPool: pg.Pool | null = null) {
    this.#policy = `"account";q=${limits.accountRequests};w=${limits.windowSeconds}`;
    const make = (keyPrefix: string, points: number, duration: number): RateLimiterAbstract =>
      counterStore(keyPrefix, points, duration, pgPool);
    const wrongKeyWindow = limits.wrongKeyWindowSeconds ?? limits.windowSeconds;
    this.#account = pgPool
      ? make('account', limits.accountRequests, limits.windowSeconds)
      : new FixedWindows(limits.accountRequests, limits.windowSeconds * 1000);
    this.#wrongKey = make('wrong-key', limits.wrongKeyAttempts, wrongKeyWindow);
    // Its own budget, so API-key traffic from an address never locks its operator out, or the reverse.
    // Counted in this process while PostgreSQL is away: /metrics must answer then (CONTRACT §15).
    this.#wrongAdminToken = counterStore(
      'wrong-admin-token',
      limits.wrongKeyAttempts,
      wrongKeyWindow,
      pgPool,
      true,
    );
  }

  /**
   * Counts one request of an account (all its keys share the budget), sets the IETF RateLimit headers
   * and throws 429 rate_limited past the limit.
   */
  async takeAccountRequest(accountId: string, reply: FastifyReply): Promise<void> {
    const account = this.#account;
    if (account instanceof FixedWindows) {
      this.takeAccountRequestHere(accountId, reply);
      return;
    }
    try {
      const res = await account.consume(accountId);
      this.#allowed(reply, res.remainingPoints, res.msBeforeNext);
    } catch (rejection) {
      this.#refused(asLimiterRes(rejection).msBeforeNext);
    }
  }

  /**
   * `takeAccountRequest` without waiting, when the budget is counted in this process: true when the request
   * was counted (its headers set, or 429 thrown), false when the count lives in PostgreSQL and only
   * `takeAccountRequest` can take it.
   */
  takeAccountRequestHere(accountId: string, reply: FastifyReply): boolean {
    if (!(this.#account instanceof FixedWindows)) return false;
    const { remaining, msBeforeNext } = this.#account.take(accountId);
    if (remaining < 0) this.#refused(msBeforeNext);
    this.#allowed(reply, remaining, msBeforeNext);
    return true;
  }

  #allowed(reply: FastifyReply, remaining: number, msBeforeNext: number): void {
    reply.header('ratelimit-policy', this.#policy);
    reply.header('ratelimit', `"account";r=${integerText(remaining)};t=${Math.ceil(msBeforeNext / 1000)}`);
  }

  #refused(msBeforeNext: number): never {
    const reset = Math.max(1, Math.ceil(msBeforeNext / 1000));
    throw errors.rateLimited(reset, {
      'RateLimit-Policy': this.#policy,
      RateLimit: `"account";r=0;t=${reset}`,
    });
  }

  /**
   * Counts a failed key attempt from an address. Returns the seconds to wait when the address is past
   * its budget (then it gets 429 instead of 401), or null.
   */
  async takeWrongKeyAttempt(address: string): Promise<number | null> {
    try {
      await this.#wrongKey.consume(clientAddressKey(address));
      return null;
    } catch (rejection) {
      return Math.max(1, Math.ceil(asLimiterRes(rejection).msBeforeNext / 1000));
    }
  }

  /**
   * Counts an operator-token attempt from an address before its token is compared: null, or the seconds to
   * wait when the address is past its budget (then nothing is compared, so a right guess looks exactly
   * like a wrong one). Counting and checking are one step, so attempts sent together cannot all pass a
   * check that none of them has been counted in yet (on PostgreSQL each count is a round trip, during
   * which a burst's other guesses would be compared). `adminTokenRight` gives back a right one.
   */
  async takeAdminTokenAttempt(address: string): Promise<number | null> {
    try {
      await this.#wrongAdminToken.consume(clientAddressKey(address));
      return null;
    } catch (rejection) {
      return Math.max(1, Math.ceil(asLimiterRes(rejection).msBeforeNext / 1000));
    }
  }

  /** The attempt `takeAdminTokenAttempt` counted had the right token: it is no failure. */
  async adminTokenRight(address: string): Promise<void> {
    await this.#wrongAdminToken.reward(clientAddressKey(address), 1);
  }
}

/**
 * Fixed windows counted in memory, as rate-limiter-flexible's RateLimiterMemory counts them (a key's window
 * opens at its first request and lasts `windowMs`; past `points` requests in it the rest are refused), but
 * answered synchronously: the memory store wraps every count in a promise and a timer per key, which a poll
 * pays on every request. Ended windows are swept once a window, so memory follows the active keys.
 */
export class FixedWindows {
  readonly #points: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  readonly #windows = new Map<string, { count: number; endsAt: number }>();
  #sweepAt: number;

  constructor(points: number, windowMs: number, now: () => number = Date.now) {
    this.#points = points;
    this.#windowMs = windowMs;
    this.#now = now;
    this.#sweepAt = now() + windowMs;
  }

  /** Counts one request of `key`: the requests left in its window (negative once past it) and the ms until it ends. */
  take(key: string): { remaining: number; msBeforeNext: number } {
    const now = this.#now();
    if (now >= this.#sweepAt) this.#sweep(now);
    let window = this.#windows.get(key);
    if (window === undefined || window.endsAt <= now) {
      window = { count: 0, endsAt: now + this.#windowMs };
      this.#windows.set(key, window);
    }
    window.count += 1;
    return { remaining: this.#points - window.count, msBeforeNext: window.endsAt - now };
  }

  /** Keys with a window open (tests). */
  get size(): number {
    return this.#windows.size;
  }

  #sweep(now: number): void {
    for (const [key, window] of this.#windows) if (window.endsAt <= now) this.#windows.delete(key);
    this.#sweepAt = now + this.#windowMs;
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
