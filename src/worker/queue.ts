/**
 * The durable queue: `jobs` rows written in the same transaction as their task. A worker claims jobs
 * with a lease (`locked_until`) and renews it while it works; a crashed worker's lease runs out and
 * another worker claims the job again.
 */
import type { Db, TasksTable, Tx } from '../db/index.ts';

export interface ClaimedJob {
  id: string;
  taskId: string;
  /**
   * Attempts that failed with a transient error so far. Claims do not count: a restart or a lease
   * take-over resumes the same run and uses up nothing.
   */
  attempts: number;
  /** The task's row as the claim read it, so the run need not read it again; null: the task is gone. */
  task: TasksTable | null;
}

/**
 * Claims up to `limit` due jobs for `workerId`. PostgreSQL: `for update skip locked`, so concurrent
 * workers never take the same job (graphile-worker's approach); SQLite: the claim runs under BEGIN
 * IMMEDIATE, the database's single writer, which gives the same guarantee.
 */
export async function claimJobs(
  db: Db,
  input: {
    workerId: string;
    limit: number;
    now: Date;
    leaseMs: number;
    exclude?: readonly string[];
    /** Jobs are probably due (a backlog): skip the read that looks for any first. */
    expectDue?: boolean;
  },
): Promise<ClaimedJob[]> {
  if (input.limit <= 0) return [];
  const now = input.now.toISOString();
  const lockedUntil = new Date(input.now.getTime() + input.leaseMs).toISOString();
  // Free jobs that are due, oldest first, then jobs whose lease ran out: each read from its own partial
  // index (migration 0021), so a claim never walks past the jobs other runs hold.
  const due = (reader: Tx, leased: boolean, limit: number, lock: boolean) => {
    let query = reader.selectFrom('jobs').select('id').where('run_at', '<=', now);
    query = leased
      ? query.where('locked_until', 'is not', null).where('locked_until', '<', now).orderBy('locked_until')
      : query.where('locked_until', 'is', null).orderBy('run_at');
    query = query.limit(limit);
    // A job this worker is still running is never claimed twice by it, even if its lease ran out.
    if (input.exclude && input.exclude.length > 0) query = query.where('id', 'not in', [...input.exclude]);
    return (lock && db.dialect.supportsSkipLocked ? query.forUpdate().skipLocked() : query).execute();
  };
  // Most claims of a worker that keeps up find nothing (every run's end and every new task's notice asks):
  // one read says so without the write transaction a claim takes (on SQLite the database's write lock,
  // on PostgreSQL four round trips). A job that becomes due just after the read is claimed at its notice
  // or at the next poll, as one that becomes due just after a claim would be. A backlog skips the read:
  // there it would only delay the claim (on SQLite it waits for the connection as the claim does).
  const nothingDue = async () =>
    (await due(db.db, false, 1, false)).length === 0 && (await due(db.db, true, 1, false)).length === 0;
  if (!input.expectDue && (await nothingDue())) return [];
  return db.dialect.transaction(db.db, async (tx) => {
    const ids = (await due(tx, false, input.limit, true)).map((r) => r.id);
    if (ids.length < input.limit)
      ids.push(...(await due(tx, true, input.limit - ids.length, true)).map((r) => r.id));
    if (ids.length === 0) return [];
    const rows = await tx
      .updateTable('jobs')
      .set({ locked_by: input.workerId, locked_until: lockedUntil })
      .where('id', 'in', ids)
      .returning(['id', 'task_id', 'attempts'])
      .execute();
    // The claimed tasks in one statement, instead of one read per run when it starts.
    const tasks = await tx
      .selectFrom('tasks')
      .selectAll()
      .where(
        'id',
        'in',
        rows.map((r) => r.task_id),
      )
      .execute();
    const byId = new Map(tasks.map((task) => [task.id, task]));
    return rows.map((r) => ({
      id: r.id,
      taskId: r.task_id,
      attempts: r.attempts,
      task: byId.get(r.task_id) ?? null,
    }));
  });
}

/** Renews the lease; false when the job is gone or another worker holds it now. */
export async function renewLease(
  db: Db,
  input: { jobId: string; workerId: string; until: Date },
): Promise<boolean> {
  const result = await db.db
    .updateTable('jobs')
    .set({ locked_until: input.until.toISOString() })
    .where('id', '=', input.jobId)
    .where('locked_by', '=', input.workerId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Gives a job back (shutdown, or a retry later): another worker may claim it from `runAt` on. `attempts`
 * records a failed attempt (the new count); a shutdown leaves the count as it is.
 */
export async function releaseJob(
  db: Db,
  input: { jobId: string; workerId: string; runAt: Date; attempts?: number },
): Promise<void> {
  await db.db
    .updateTable('jobs')
    .set({
      locked_by: null,
      locked_until: null,
      run_at: input.runAt.toISOString(),
      ...(input.attempts === undefined ? {} : { attempts: input.attempts }),
    })
    .where('id', '=', input.jobId)
    .where('locked_by', '=', input.workerId)
    .execute();
}
