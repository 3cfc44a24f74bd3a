/**
 * One log line and the counters of each task transition (CONTRACT §15), called where the transition
 * committed: the acceptance and the cancel in the API, the move to running and the final states in the
 * worker. A transition that did not commit (the task had moved on) is never told.
 */
import type { Logger } from 'pino';
import { DEFAULT_CHANNEL, type Metrics } from './metrics.ts';
import { currentRequestId } from './request-scope.ts';

export type TransitionStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';

export interface Transition {
  taskId: string;
  accountId: string;
  model: string;
  status: TransitionStatus;
  /** The failure's code (`failed` only). */
  errorCode?: string | undefined;
  /** The run's channel; null or unset: the default generator. */
  channel?: string | null | undefined;
  /** When the run moved to running; with a final state, the run's duration is observed. */
  startedAt?: Date | null | undefined;
  /** When the transition committed. (Default: now) */
  at?: Date | undefined;
}

/** Tells the logs and the metrics about committed task transitions. */
export class TaskTelemetry {
  readonly #log: Pick<Logger, 'info'>;
  readonly #metrics: Metrics;

  constructor(deps: { log: Pick<Logger, 'info'>; metrics: Metrics }) {
    this.#log = deps.log;
    this.#metrics = deps.metrics;
  }

  transition(t: Transition): void {
    const channel = t.channel ?? DEFAULT_CHANNEL;
    const requestId = currentRequestId();
    this.#log.info(
      {
        taskId: t.taskId,
        accountId: t.accountId,
        model: t.model,
        status: t.status,
        ...(t.errorCode === undefined ? {} : { errorCode: t.errorCode }),
        ...(t.status === 'queued' || t.status === 'canceled' ? {} : { channel }),
        ...(requestId === undefined ? {} : { requestId }),
      },
      `task ${t.status}`,
    );
    if (t.status === 'queued') {
      this.#metrics.tasksCreated.inc({ model: t.model });
      return;
    }
    if (t.status === 'running') return;
    this.#metrics.tasksFinished.inc({ model: t.model, status: t.status, error_code: t.errorCode ?? '' });
    if (t.status !== 'canceled' && t.startedAt) {
      const seconds = ((t.at ?? new Date()).getTime() - t.startedAt.getTime()) / 1_000;
      this.#metrics.runDuration.observe({ model: t.model, channel, status: t.status }, Math.max(0, seconds));
    }
  }
}
