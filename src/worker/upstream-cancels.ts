/**
 * Upstream cancels owed by canceled tasks. A caller's cancel of a task whose run has an upstream task
 * (`provider_ref`) sets `upstream_cancel_at` in the cancel's own UPDATE (`markCanceled`). The worker that
 * drives the run cancels upstream at once and clears the mark (`upstreamCancelMade`); while no worker drives
 * it (the worker stopped, or the run waits for its retry), this pass asks the provider instead. An attempt
 * that fails while the provider cannot be asked (unreachable, busy, the channel switched off) is made again
 * later, for a day at most; a refusal for good (the provider says the run is over or unknown) is not.
 * Either way the attempts end, with a warning when they were given up.
 */
import type { Db } from '../db/index.ts';
import { GenerationError, type Generator, UpstreamRunLost } from '../generators/index.ts';
import type { Clock } from '../lib/index.ts';

/** Time between two attempts at one task (milliseconds). */
export const UPSTREAM_CANCEL_RETRY_MS = 60_000;
/** How long after the task's cancel attempts go on (milliseconds): no provider run outlives it. */
export const UPSTREAM_CANCEL_GIVE_UP_MS = 24 * 60 * 60_000;
/** Our wait for one provider call (milliseconds). */
export const UPSTREAM_CANCEL_WAIT_MS = 30_000;

export interface UpstreamCancelDeps {
  db: Db;
  clock: Clock;
  /** The worker's generator (the channel router): it knows the channel from the handle. */
  generator: Pick<Generator, 'cancel'>;
  /** Told of every attempt given up. */
  onGiveUp?(taskId: string, error: unknown): void;
}

/**
 * One pass over the canceled tasks whose upstream cancel is due; resolves with how many are done with
 * (asked, or attempts given up). Safe in several processes at once: an attempt first moves the task's time
 * forward on the condition that nobody else did, so only one process asks at a time.
 */
export async function cancelUpstreamRuns(deps: UpstreamCancelDeps, batch = 20): Promise<number> {
  const { db } = deps.db;
  const now = deps.clock.now();
  const due = await db
    .selectFrom('tasks')
    .select(['id', 'provider_ref', 'finished_at', 'upstream_cancel_at'])
    // The condition of the partial index (migration 0025), named so every engine takes it.
    .where('upstream_cancel_at', 'is not', null)
    .where('upstream_cancel_at', '<=', now.toISOString())
    .orderBy('upstream_cancel_at')
    .limit(batch)
    .execute();
  let done = 0;
  for (const row of due) {
    const claimed = await db
      .updateTable('tasks')
      .set({ upstream_cancel_at: new Date(now.getTime() + UPSTREAM_CANCEL_RETRY_MS).toISOString() })
      .where('id', '=', row.id)
      .where('upstream_cancel_at', '=', row.upstream_cancel_at)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) === 0) continue;
    try {
      if (row.provider_ref !== null)
        await deps.generator.cancel(row.provider_ref, AbortSignal.timeout(UPSTREAM_CANCEL_WAIT_MS));
    } catch (error) {
      // The provider refused for good, or no longer knows the run: asking again would not change that.
      const canceledAt = Date.parse(row.finished_at ?? now.toISOString());
      const final = error instanceof GenerationError || error instanceof UpstreamRunLost;
      if (!final && now.getTime() - canceledAt < UPSTREAM_CANCEL_GIVE_UP_MS) continue;
      deps.onGiveUp?.(row.id, error);
    }
    await upstreamCancelMade(deps.db, row.id);
    done += 1;
  }
  return done;
}

/** The task's upstream cancel has been made (or given up): the sweeper no longer owes it. */
export async function upstreamCancelMade(db: Db, taskId: string): Promise<void> {
  await db.db
    .updateTable('tasks')
    .set({ upstream_cancel_at: null })
    .where('id', '=', taskId)
    .where('upstream_cancel_at', 'is not', null)
    .execute();
}
