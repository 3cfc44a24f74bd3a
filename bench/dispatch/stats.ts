import type { Timing } from './messages.ts';

const ascending = (values: readonly number[]): number[] => [...values].sort((a, b) => a - b);

/** Nearest-rank percentile (0 < p ≤ 100) of `values`; NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = ascending(values);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

/** The median of `values`, the mean of the middle two of an even count; NaN when there are none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = ascending(values);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** How fast a queue of `count` items drained after the worker started at `startedAt` (epoch ms). */
export interface Drain {
  count: number;
  /** Items per second that reached running (BullMQ: active), until the last one did. */
  toRunning: number;
  /** Items per second that finished (succeeded, completed), until the last one did. */
  toFinished: number;
}

/** Throws when an item never ran or never finished: a drain figure over a partial queue would flatter. */
export function drainOf(timings: readonly Timing[], startedAt: number): Drain {
  if (timings.length === 0) throw new Error('nothing drained');
  let lastRunning = startedAt;
  let lastFinished = startedAt;
  for (const t of timings) {
    if (!Number.isFinite(t.running) || !Number.isFinite(t.finished))
      throw new Error('an item did not finish');
    lastRunning = Math.max(lastRunning, t.running);
    lastFinished = Math.max(lastFinished, t.finished);
  }
  const rate = (until: number): number => timings.length / (Math.max(1, until - startedAt) / 1000);
  return { count: timings.length, toRunning: rate(lastRunning), toFinished: rate(lastFinished) };
}

/** Create → running latency of items created at a steady rate (ms). */
export interface Latency {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export function latencyOf(timings: readonly Timing[]): Latency {
  const waits = timings.map((t) => t.running - t.created);
  if (waits.some((w) => !Number.isFinite(w))) throw new Error('an item never ran');
  return {
    count: waits.length,
    p50: percentile(waits, 50),
    p99: percentile(waits, 99),
    max: percentile(waits, 100),
  };
}
