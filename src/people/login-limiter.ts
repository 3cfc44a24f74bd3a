import type pg from 'pg';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
} from 'rate-limiter-flexible';

/** Failed sign-ins allowed per window, per address and per e-mail. (Default: 10 per 15 minutes) */
export interface LoginLimits {
  failures: number;
  windowSeconds: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { failures: 10, windowSeconds: 15 * 60 };

/**
 * Counts failed sign-ins per client address and per e-mail (CONTRACT §13). Past either budget sign-in is
 * refused before the password is even compared, so guessing goes no faster, whichever it spreads over.
 * On PostgreSQL the counters are shared by every API process, in the table the request limits use.
 */
export class LoginLimiter {
  readonly #address: RateLimiterAbstract;
  readonly #email: RateLimiterAbstract;
  readonly #limits: LoginLimits;

  constructor(limits: LoginLimits = DEFAULT_LOGIN_LIMITS, pgPool: pg.Pool | null = null) {
    this.#limits = limits;
    const make = (keyPrefix: string): RateLimiterAbstract =>
      pgPool
        ? new RateLimiterPostgres({
            storeClient: pgPool,
            storeType: 'pool',
            tableName: 'rate_limits',
            tableCreated: true,
            keyPrefix,
            points: limits.failures,
            duration: limits.windowSeconds,
          })
        : new RateLimiterMemory({ keyPrefix, points: limits.failures, duration: limits.windowSeconds });
    this.#address = make('login-address');
    this.#email = make('login-email');
  }

  /** Seconds to wait before the next attempt of this address or e-mail is compared, or null. */
  async wait(address: string, email: string): Promise<number | null> {
    const [a, e] = await Promise.all([this.#address.get(address), this.#email.get(email)]);
    const waits = [a, e]
      .filter((res): res is RateLimiterRes => res !== null && res.consumedPoints >= this.#limits.failures)
      .map((res) => Math.max(1, Math.ceil(res.msBeforeNext / 1000)));
    return waits.length === 0 ? null : Math.max(...waits);
  }

  /** Counts one failed attempt against both the address and the e-mail. */
  async fail(address: string, email: string): Promise<void> {
    await Promise.all([
      this.#address.consume(address).catch(ignoreRejection),
      this.#email.consume(email).catch(ignoreRejection),
    ]);
  }
}

function ignoreRejection(rejection: unknown): void {
  if (!(rejection instanceof RateLimiterRes)) throw rejection;
}
