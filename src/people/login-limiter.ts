import { createHash } from 'node:crypto';
import type pg from 'pg';
import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { counterStore } from '../db/index.ts';
import { clientAddressKey } from '../lib/index.ts';

/** Failed sign-ins allowed per window, per address and per e-mail. (Default: 10 per 15 minutes) */
export interface LoginLimits {
  failures: number;
  windowSeconds: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { failures: 10, windowSeconds: 15 * 60 };

/**
 * Mails one e-mail address may get per window, reset links and confirmation links together: enough to ask
 * again, too few to flood a mailbox through the service.
 */
export const MAIL_LIMITS: LoginLimits = { failures: 5, windowSeconds: 60 * 60 };

/**
 * The counter's key as stored: a digest, whatever the key's length. An e-mail typed into the sign-in form
 * can be thousands of characters long, and the PostgreSQL table's key column holds 255 (a longer one was a
 * 500); the table holds no e-mail address in the clear either.
 */
function stored(key: string): string {
  return createHash('sha256').update(key).digest('base64url');
}

/**
 * Failed attempts per key (an address, an e-mail) within a window; past the budget, further attempts wait
 * until the window ends. On PostgreSQL the counters are shared by every API process, in the table the
 * request limits use; otherwise they live in the process.
 */
export class AttemptLimiter {
  readonly #limiter: RateLimiterAbstract;
  readonly #failures: number;

  constructor(keyPrefix: string, limits: LoginLimits = DEFAULT_LOGIN_LIMITS, pgPool: pg.Pool | null = null) {
    this.#failures = limits.failures;
    this.#limiter = counterStore(keyPrefix, limits.failures, limits.windowSeconds, pgPool);
  }

  /**
   * Counts one attempt of the key unless its budget is spent: null when counted, else seconds to wait.
   * Counting and checking are one step, so attempts sent together cannot all pass a check that none of
   * them has been counted in yet.
   */
  async take(key: string): Promise<number | null> {
    try {
      await this.#limiter.consume(stored(key));
      return null;
    } catch (rejection) {
      ignoreRejection(rejection);
      // Refused attempts are not counted: the window is not kept open by them.
      await this.giveBack(key);
      return Math.max(1, Math.ceil((rejection as RateLimiterRes).msBeforeNext / 1000));
    }
  }

  /** Gives back one attempt counted by `take` (it turned out to be no failure). */
  async giveBack(key: string): Promise<void> {
    await this.#limiter.reward(stored(key), 1);
  }

  /** Forgets the key's failures (after a success). */
  async forget(key: string): Promise<void> {
    await this.#limiter.delete(stored(key));
  }
}

/**
 * Counts failed sign-ins per client address and per e-mail (CONTRACT §13). Past either budget sign-in is
 * refused before the password is even compared, so guessing goes no faster, whichever it spreads over.
 * The current password asked when changing it counts alike; mails per e-mail have a budget of their own.
 * On PostgreSQL the counters are shared by every API process, in the table the request limits use.
 */
export class LoginLimiter {
  readonly #address: AttemptLimiter;
  readonly #email: AttemptLimiter;
  readonly #mails: AttemptLimiter;

  constructor(
    limits: LoginLimits = DEFAULT_LOGIN_LIMITS,
    pgPool: pg.Pool | null = null,
    mailLimits: LoginLimits = MAIL_LIMITS,
  ) {
    this.#address = new AttemptLimiter('login-address', limits, pgPool);
    this.#email = new AttemptLimiter('login-email', limits, pgPool);
    this.#mails = new AttemptLimiter('mail', mailLimits, pgPool);
  }

  /** Counts a mail to `email` (a reset or a confirmation link): null, or seconds until one may go again. */
  takeMail(email: string): Promise<number | null> {
    return this.#mails.take(email);
  }

  /**
   * Counts an attempt against both the address and the e-mail before its password is compared, so
   * attempts sent together cannot all be compared before any of them has failed: null, or the seconds to
   * wait when either budget is spent (the attempt is then not compared and counts for neither).
   * The address is counted first and the e-mail only after it passed: taken at once, two attempts could
   * each pass one budget and fail the other, both giving back, so fewer than the budget got compared.
   */
  async begin(client: string, email: string): Promise<number | null> {
    const address = clientAddressKey(client);
    const byAddress = await this.#address.take(address);
    if (byAddress !== null) return byAddress;
    const byEmail = await this.#email.take(email);
    if (byEmail === null) return null;
    await this.#address.giveBack(address);
    return byEmail;
  }

  /** The attempt `begin` counted was right: it is no failure. */
  async succeeded(client: string, email: string): Promise<void> {
    await Promise.all([this.#address.giveBack(clientAddressKey(client)), this.#email.giveBack(email)]);
  }
}

function ignoreRejection(rejection: unknown): void {
  if (!(rejection instanceof RateLimiterRes)) throw rejection;
}
