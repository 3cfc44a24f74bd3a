/**
 * Task writes of runs on channels (CONTRACT §11): the channel recorded with the move to running, a run
 * moved back to the queue for another channel, the upstream cost kept with the run.
 */
import type { Db, Tx } from '../db/index.ts';
import type { ChannelOutcome, RunPlacement, UpstreamCost } from '../generators/index.ts';
import { markRunning, markRunningTogether, taskChanged } from '../tasks/index.ts';
import { releaseJob } from './queue.ts';
import type { WorkerDeps } from './worker.ts';

/** A run moved to running: when, under which key, on which channel (null: the default generator). */
export interface Started {
  at: Date;
  key: string | null;
  channel: string | null;
}

/**
 * queued → running under `key`, with the run's channel chosen and its slot taken in the same transaction
 * (CONTRACT §11). `wait`: no channel of the model has a free slot, the task stays queued. Null: the task
 * left `queued` first (canceled).
 */
export async function moveToRunning(
  deps: { db: Db; placement?: RunPlacement | undefined },
  input: {
    taskId: string;
    model: string;
    avoid: string | null;
    at: Date;
    key: string;
    /** The channel the task must run on (its library records were made there), if any. */
    channel?: string | null;
  },
): Promise<Started | 'wait' | null> {
  const { db, placement } = deps;
  if (!placement?.needsPlace({ model: input.model, channel: input.channel ?? null })) {
    // No channel to place it on: runs starting together move in one batch (batches.ts).
    const moved = await markRunningTogether(db, { taskId: input.taskId, at: input.at, runKey: input.key });
    return moved ? { at: input.at, key: input.key, channel: null } : null;
  }
  // Runs starting together share a commit on SQLite (dialect.groupCommit), each in its own savepoint.
  return db.dialect.groupCommit(db.db, async (tx) => {
    const where = await placement.place(tx, {
      model: input.model,
      avoid: input.avoid,
      channel: input.channel ?? null,
    });
    if (where.kind === 'wait') return 'wait' as const;
    if (!(await markRunning(tx, input.taskId, input.at, input.key))) return null;
    const channel = where.kind === 'channel' ? where.channel : null;
    if (channel !== null) await recordChannel(tx, input.taskId, channel);
    return { at: input.at, key: input.key, channel };
  });
}

/** Tells a channel how its run ended; a failure to write it never changes the task's outcome. */
export async function recordOutcome(
  deps: Pick<WorkerDeps, 'placement' | 'log'>,
  channel: string | null,
  outcome: ChannelOutcome,
): Promise<void> {
  if (channel === null || !deps.placement) return;
  await deps.placement.record(channel, outcome).catch((error: unknown) => {
    deps.log.warn({ err: error, channel }, 'recording the channel outcome failed');
  });
}

/** Records the run's channel in the transaction that moved the task to running (its slot). */
export async function recordChannel(tx: Tx, taskId: string, channel: string): Promise<void> {
  await tx
    .updateTable('tasks')
    .set({ channel, avoid_channel: null })
    .where('id', '=', taskId)
    .where('status', '=', 'running')
    .execute();
}

/**
 * running → queued for a fresh run, preferably on another channel than `avoid`: the upstream never took
 * the run (no handle) or the channel lost its credit. The slot is freed with the status; the hold stays.
 * False when the task left `running` first (canceled).
 */
export async function requeueRun(tx: Tx, taskId: string, avoid: string): Promise<boolean> {
  const result = await tx
    .updateTable('tasks')
    .set((eb) => ({
      status: 'queued',
      channel: null,
      avoid_channel: avoid,
      run_key: null,
      provider_ref: null,
      started_at: null,
      progress: 0,
      revision: eb('revision', '+', 1),
    }))
    .where('id', '=', taskId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return false;
  // Watchers see it queued again; no webhook event has this state.
  await taskChanged(tx, taskId);
  return true;
}

/** Keeps what the provider reported the run cost, for the operator. */
export async function recordUpstreamCost(tx: Tx, taskId: string, cost: UpstreamCost): Promise<void> {
  await tx
    .updateTable('tasks')
    .set({ upstream_cost: JSON.stringify({ amount: cost.amount, currency: cost.currency }) })
    .where('id', '=', taskId)
    .execute();
}

/** Moves the run back to the queue (requeueRun) and gives the job back for `runAt`. */
export async function requeueJob(
  db: Db,
  input: { jobId: string; workerId: string; taskId: string; avoid: string; runAt: Date; attempts?: number },
): Promise<void> {
  await db.dialect.transaction(db.db, (tx) => requeueRun(tx, input.taskId, input.avoid));
  const { jobId, workerId, runAt, attempts } = input;
  await releaseJob(db, { jobId, workerId, runAt, ...(attempts === undefined ? {} : { attempts }) });
}
