/**
 * Delays between retries: exponential with jitter, so retries of many tasks that broke together spread
 * out instead of arriving together (graphile-worker `calculateDelay`; STYLE "Errors").
 */

export interface BackoffOptions {
  /** Delay before the first retry (milliseconds). (Default: 1 s) */
  baseMs?: number;
  /** Longest delay (milliseconds). (Default: 5 minutes) */
  maxMs?: number;
  /** Spread around the delay, as a fraction of it. (Default: 0.2, so ± 20 %) */
  jitter?: number;
  /** What the other side asked for (its Retry-After); never retried sooner (milliseconds). */
  retryAfterMs?: number | null;
  /** Source of randomness in [0, 1). (Default: Math.random) */
  random?: () => number;
}

/** Delay before retry number `attempt` (1 for the first): 1 s, 2 s, 4 s … ± 20 %, at most 5 minutes. */
export function backoffMs(attempt: number, options: BackoffOptions = {}): number {
  const baseMs = options.baseMs ?? 1_000;
  const maxMs = options.maxMs ?? 5 * 60_000;
  const jitter = options.jitter ?? 0.2;
  const random = options.random ?? Math.random;
  const exponent = Math.max(0, Math.floor(attempt) - 1);
  // 2 ** 1000 is Infinity, which Math.min caps; no overflow to worry about.
  const plain = Math.min(maxMs, baseMs * 2 ** exponent);
  const spread = plain * (1 - jitter + random() * 2 * jitter);
  return Math.round(Math.max(spread, options.retryAfterMs ?? 0));
}
