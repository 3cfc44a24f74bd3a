import { GeneratorTransientError } from '../generator.ts';
import type { UpstreamResponse } from './types.ts';

/** Milliseconds a `Retry-After` header asks for (seconds or an HTTP date); null when absent or unreadable. */
export function retryAfterMs(headers: Headers, now: Date = new Date()): number | null {
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.round(seconds * 1000));
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}

/**
 * The transient failure an HTTP status means by itself (429 and 5xx, PROVIDERS.md "transient"), with the
 * provider's Retry-After; null for any other status, which the adapter classifies from the body.
 */
export function transientFailure(response: UpstreamResponse, what: string): GeneratorTransientError | null {
  if (response.status !== 429 && response.status < 500) return null;
  const wait = retryAfterMs(response.headers);
  return new GeneratorTransientError(
    `${what}: HTTP ${response.status}`,
    wait === null ? {} : { retryAfterMs: wait },
  );
}

/** True when a provider's answer to a DELETE means the thing is gone: done now (2xx), or before (404). */
export function deletedUpstream(response: UpstreamResponse): boolean {
  return (response.status >= 200 && response.status < 300) || response.status === 404;
}
