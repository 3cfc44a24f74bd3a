import type { StatementTime } from '../../src/db/index.ts';

/**
 * Parent ↔ child messages of the dispatch bench, on top of `bench/servers/messages.ts` (ready, stop).
 * The parent asks; the child answers each request with a reply carrying the same `id`.
 */

/** Parent → child. */
export type DispatchRequest =
  | { id: number; type: 'start-worker' }
  | { id: number; type: 'counts' }
  /** How many jobs are left: a task's job is removed in the transaction that ends it. */
  | { id: number; type: 'jobs' }
  /** The tasks created from `since` on (epoch milliseconds). */
  | { id: number; type: 'timings'; since: number }
  /** Ends the recording of statement times the worker's start began (BENCH_DISPATCH_STATEMENTS). */
  | { id: number; type: 'statements' }
  | { id: number; type: 'bullmq-drain'; jobs: number }
  | { id: number; type: 'bullmq-steady'; rate: number; seconds: number };

/** When a task (or job) was created, moved to running (active), and finished; epoch milliseconds. */
export interface Timing {
  created: number;
  running: number;
  finished: number;
}

/** Child → parent. */
export type DispatchReply =
  /** `at`: the worker's start on its clock (epoch ms); `uptime`: the child's seconds until then (profiles). */
  | { id: number; type: 'worker-started'; at: number; uptime: number }
  | { id: number; type: 'counts'; queued: number; running: number; succeeded: number; other: number }
  | { id: number; type: 'jobs'; jobs: number }
  | { id: number; type: 'timings'; timings: Timing[] }
  /** Empty when nothing was recorded. */
  | { id: number; type: 'statements'; statements: StatementTime[] }
  /** `cpu`: each CPU's busy seconds from the worker's start to the last job (`busyCpuSeconds`), for a drain. */
  | { id: number; type: 'bullmq-result'; startedAt: number; timings: Timing[]; cpu?: number[] }
  | { id: number; type: 'error'; message: string };

export function isDispatchRequest(message: unknown): message is DispatchRequest {
  return (
    typeof message === 'object' &&
    message !== null &&
    typeof (message as { id?: unknown }).id === 'number' &&
    typeof (message as { type?: unknown }).type === 'string'
  );
}

export function isDispatchReply(message: unknown): message is DispatchReply {
  return isDispatchRequest(message);
}
