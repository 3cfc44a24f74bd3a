/**
 * Task state changes, each in the caller's transaction together with the money it moves (CONTRACT §5):
 * queued → running → succeeded (capture) | failed (void); queued | running → canceled (void).
 * Every change is conditional on the state it leaves, so a late or repeated call changes nothing.
 */
import { type Compilable, sql } from 'kysely';
import {
  type BatchKind,
  batched,
  type DialectCapabilities,
  idsJson,
  prepared,
  rowsJson,
  type TaskStatus,
  type TasksTable,
  type Tx,
} from '../db/index.ts';
import type { TaskFailureCode } from '../errors.ts';
import { ENDPOINTS_EPOCH_COLUMN, TASK_MAY_HAVE_RECEIVERS } from '../events/index.ts';
import { captureMany, settle } from '../ledger/index.ts';
import { giveBackActivePlace, giveBackActivePlaces } from './active-tasks.ts';
import { taskChanged } from './task-events.ts';
import { artifactViewsJson } from './task-view.ts';

export const FINAL_STATUSES: readonly TaskStatus[] = ['succeeded', 'failed', 'canceled'];
export const ACTIVE_STATUSES: readonly TaskStatus[] = ['queued', 'running'];

export function isFinal(status: TaskStatus): boolean {
  return FINAL_STATUSES.includes(status);
}

/** Notification channel of new jobs, so workers in other processes wake at once. */
export const TASKS_CHANNEL = 'gta_tasks_queued';

export function jobIdOf(taskId: string): string {
  return `run-task:${taskId}`;
}

/** Key of a task's run, recorded before the generator is asked for it (Generator `RunStart.key`). */
export function runKeyOf(taskId: string, run = 1): string {
  return `${taskId}/${run}`;
}

/** A task as its move returns it: with the endpoints' epoch, so its event reads no endpoints (outbox.ts). */
type MovedTask = TasksTable & { endpoints_epoch: number | string | null };

const toRunning = prepared<{ taskId: string; startedAt: string; runKey: string }, MovedTask>((db, value) =>
  db
    .updateTable('tasks')
    .set((eb) => ({
      status: 'running',
      started_at: value('startedAt'),
      run_key: value('runKey'),
      revision: eb('revision', '+', 1),
    }))
    .where('id', '=', value('taskId'))
    .where('status', '=', 'queued')
    .returningAll()
    .returning(ENDPOINTS_EPOCH_COLUMN),
);

/**
 * queued → running, recording the run's key in the same statement (the intent: from here on a run may
 * exist upstream). True when this call moved it; false when the task left `queued` first (canceled).
 */
export async function markRunning(tx: Tx, taskId: string, at: Date, runKey: string): Promise<boolean> {
  const { rows } = await toRunning(tx, { taskId, startedAt: at.toISOString(), runKey });
  const row = rows[0];
  if (row === undefined) return false;
  await taskChanged(tx, taskId, { type: 'task.started', at }, row);
  return true;
}

/**
 * What a batch's UPDATE returns of each moved task: what its event needs to find who wants it
 * (task-events.ts) and what giving back its place needs (active-tasks.ts). The rest of the row only for a
 * webhook's body: building every column of every moved row as a JavaScript object took a third of SQLite's
 * move to succeeded and half of its move to running (docs/performance.md, "A twenty-fifth session").
 */
const MOVED_COLUMNS = [
  'tasks.id',
  'tasks.account_id',
  'tasks.model',
  'tasks.webhook_url',
  'tasks.webhook_events',
] as const;

/**
 * A task as a batch's move returns it, with the endpoints' epoch (outbox.ts) and, on PostgreSQL, its whole
 * row where anyone may want its event's body (`whole`; null where nobody can).
 */
type BatchMovedTask = Pick<TasksTable, 'id' | 'account_id' | 'model' | 'webhook_url' | 'webhook_events'> & {
  endpoints_epoch: number | string | null;
  whole?: TasksTable | null;
};

/**
 * On PostgreSQL the whole row as JSON where anyone may want the event's body: reading it afterwards would
 * cost a round trip a task, and returning every row whole made the worker parse and collect 30 columns of
 * every task twice, most of them never read (docs/performance.md, "A twenty-sixth session"). Its columns
 * are text and integers, which JSON gives back as the driver would (bigint as a number, connect.ts).
 */
const WHOLE_IF_WANTED =
  sql<TasksTable | null>`case when ${TASK_MAY_HAVE_RECEIVERS} then to_json(tasks.*) end`.as('whole');

/**
 * A batch's UPDATE returning its moved tasks (`BatchMovedTask`), so that no read follows it. SQLite reads a
 * webhook's body afterwards (a synchronous read, no round trip); PostgreSQL returns it (`WHOLE_IF_WANTED`).
 */
function returningMoved(
  update: {
    returning(columns: typeof MOVED_COLUMNS): {
      returning(column: typeof ENDPOINTS_EPOCH_COLUMN): {
        returning(column: typeof WHOLE_IF_WANTED): Compilable<unknown>;
      } & Compilable<unknown>;
    };
  },
  dialect: DialectCapabilities,
): Compilable<BatchMovedTask> {
  const moved = update.returning(MOVED_COLUMNS).returning(ENDPOINTS_EPOCH_COLUMN);
  return (
    dialect.name === 'postgres' ? moved.returning(WHOLE_IF_WANTED) : moved
  ) as Compilable<BatchMovedTask>;
}

/** What `taskChanged` gets of a moved task: its whole row where the move returned it, else its routing. */
function changedOf(row: BatchMovedTask) {
  const { whole, ...routing } = row;
  return whole ? { ...whole, endpoints_epoch: row.endpoints_epoch } : routing;
}

/** The tasks a batch's UPDATE moved (`returningMoved`), by id. */
function movedRows(moved: ReadonlyArray<BatchMovedTask>): Map<string, BatchMovedTask> {
  return new Map(moved.map((row) => [row.id, row]));
}

/** A run's move to running, as `markRunning` takes it. */
export interface RunStarting {
  taskId: string;
  at: Date;
  runKey: string;
}

/** The rows of `runsStarted`. */
const STARTED_COLUMNS = { id: 'text', started_at: 'text', run_key: 'text' } as const;

/** `runsStarting`'s UPDATE. */
const runsStarted = prepared<{ rows: string }, BatchMovedTask>((db, value, dialect) =>
  returningMoved(
    db
      .updateTable('tasks')
      .from(dialect.jsonRows(value('rows'), STARTED_COLUMNS))
      .set((eb) => ({
        status: 'running',
        started_at: eb.ref('v.started_at'),
        run_key: eb.ref('v.run_key'),
        revision: eb('tasks.revision', '+', 1),
      }))
      .whereRef('tasks.id', '=', 'v.id')
      .where('tasks.status', '=', 'queued'),
    dialect,
  ),
);

/**
 * `markRunning` in a transaction of its own, shared with the runs that start at the same moment
 * (batches.ts): one UPDATE moves them all, and each task's event is queued as `markRunning` queues it.
 */
export const runsStarting: BatchKind<RunStarting, boolean> = {
  key: (start) => start.taskId,
  one: ({ db, dialect }, start) =>
    dialect.groupCommit(db, (tx) => markRunning(tx, start.taskId, start.at, start.runKey)),
  async many(tx, starts) {
    const values = starts.map((start) => ({
      id: start.taskId,
      started_at: start.at.toISOString(),
      run_key: start.runKey,
    }));
    const { rows: moved } = await runsStarted(tx, { rows: rowsJson(tx, STARTED_COLUMNS, values) });
    const rows = movedRows(moved);
    for (const start of starts) {
      const row = rows.get(start.taskId);
      if (row !== undefined)
        await taskChanged(tx, start.taskId, { type: 'task.started', at: start.at }, changedOf(row));
    }
    return starts.map((start) => rows.has(start.taskId));
  },
};
export const markRunningTogether = batched(runsStarting);

/** Records the run key of a running task that has none yet; false when it is no longer running. */
export async function recordRunKey(tx: Tx, taskId: string, runKey: string): Promise<boolean> {
  const result = await tx
    .updateTable('tasks')
    .set({ run_key: runKey })
    .where('id', '=', taskId)
    .where('status', '=', 'running')
    .where('run_key', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

const handleSaved = prepared<{ taskId: string; handle: string }, never>((db, value) =>
  db
    .updateTable('tasks')
    .set({ provider_ref: value('handle') })
    .where('id', '=', value('taskId'))
    .where('status', '=', 'running'),
);

/** Saves the generator's handle of a running task; false when the task is no longer running (canceled). */
export async function saveHandle(tx: Tx, taskId: string, handle: string): Promise<boolean> {
  const result = await handleSaved(tx, { taskId, handle });
  return Number(result.numAffectedRows ?? 0) > 0;
}

/** The rows of `handlesStored`. */
const HANDLE_COLUMNS = { id: 'text', handle: 'text' } as const;

/** `handlesSaved`' UPDATE. */
const handlesStored = prepared<{ rows: string }, { id: string }>((db, value, dialect) =>
  db
    .updateTable('tasks')
    .from(dialect.jsonRows(value('rows'), HANDLE_COLUMNS))
    .set((eb) => ({ provider_ref: eb.ref('v.handle') }))
    .whereRef('tasks.id', '=', 'v.id')
    .where('tasks.status', '=', 'running')
    .returning('tasks.id'),
);

/**
 * `saveHandle` on its own (one statement, its own transaction), shared with the handles saved at the same
 * moment (batches.ts): one UPDATE saves them all.
 */
export const handlesSaved: BatchKind<{ taskId: string; handle: string }, boolean> = {
  key: (saved) => saved.taskId,
  one: ({ db, dialect }, saved) =>
    dialect.groupCommitStatement(db, (tx) => saveHandle(tx, saved.taskId, saved.handle)),
  async many(tx, saves) {
    const values = saves.map((saved) => ({ id: saved.taskId, handle: saved.handle }));
    const { rows: moved } = await handlesStored(tx, { rows: rowsJson(tx, HANDLE_COLUMNS, values) });
    const ids = new Set(moved.map((row) => row.id));
    return saves.map((saved) => ids.has(saved.taskId));
  },
};
export const saveHandleTogether = batched(handlesSaved);

/**
 * Records progress of a running task; false when the task is no longer running (canceled). The same
 * progress again changes nothing and tells nobody.
 */
export async function recordProgress(tx: Tx, taskId: string, progress: number, at: Date): Promise<boolean> {
  const result = await tx
    .updateTable('tasks')
    .set((eb) => ({ progress, revision: eb('revision', '+', 1) }))
    .where('id', '=', taskId)
    .where('status', '=', 'running')
    .where('progress', '<>', progress)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) > 0) {
    await taskChanged(tx, taskId, { type: 'task.progress', at });
    return true;
  }
  const still = await tx
    .selectFrom('tasks')
    .select('id')
    .where('id', '=', taskId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return still !== undefined;
}

export interface Success {
  caption: string;
  texts: string[];
  artifacts: Array<{
    kind: string;
    filename: string;
    contentType: string;
    sizeBytes: number;
    caption: string;
    storageKey: string;
    /** The provider's ids of the file (`GeneratedFile.upstream`). */
    upstream?: { provider: string; ids: Readonly<Record<string, string>> };
  }>;
}

const toSucceeded = prepared<
  {
    taskId: string;
    finishedAt: string;
    caption: string;
    texts: string;
    filesExpireAt: string;
    artifactViews: string;
  },
  MovedTask
>((db, value) =>
  db
    .updateTable('tasks')
    .set((eb) => ({
      status: 'succeeded',
      progress: 100,
      finished_at: value('finishedAt'),
      caption: value('caption'),
      texts: value('texts'),
      artifact_views: value('artifactViews'),
      files_expire_at: value('filesExpireAt'),
      revision: eb('revision', '+', 1),
    }))
    .where('id', '=', value('taskId'))
    .where('status', '=', 'running')
    .returningAll()
    .returning(ENDPOINTS_EPOCH_COLUMN),
);

/**
 * When a task's files are removed: `retentionMs` (RESULT_RETENTION) after its end, whichever way it ended.
 * A failed or canceled task has none to show, but its folder may hold some that no artifact names (a run
 * killed between storing its files and its commit), which the sweeper removes then too (Sweeper).
 */
function filesExpireAt(end: Date, retentionMs: number): string {
  return new Date(end.getTime() + retentionMs).toISOString();
}

/** The artifact rows of a success. */
function artifactRows(taskId: string, success: Success) {
  return success.artifacts.map((a, idx) => ({
    task_id: taskId,
    idx,
    kind: a.kind,
    filename: a.filename,
    content_type: a.contentType,
    size_bytes: a.sizeBytes,
    caption: a.caption,
    storage_key: a.storageKey,
    upstream: a.upstream === undefined ? null : JSON.stringify(a.upstream),
  }));
}

/**
 * running → succeeded with its files, capturing the hold; its files are kept `retentionMs`. False when the
 * task left `running` first.
 */
export async function markSucceeded(
  tx: Tx,
  taskId: string,
  success: Success,
  at: Date,
  retentionMs: number,
): Promise<boolean> {
  const artifacts = artifactRows(taskId, success);
  const { rows } = await toSucceeded(tx, {
    taskId,
    finishedAt: at.toISOString(),
    caption: success.caption,
    texts: JSON.stringify(success.texts),
    filesExpireAt: filesExpireAt(at, retentionMs),
    artifactViews: artifactViewsJson(artifacts),
  });
  const row = rows[0];
  if (row === undefined) return false;
  if (artifacts.length > 0) await tx.insertInto('artifacts').values(artifacts).execute();
  await taskChanged(tx, taskId, { type: 'task.succeeded', at }, row);
  await leaveActive(tx, row, 'capture', at);
  return true;
}

/** A run's success, as `markSucceeded` takes it. */
export interface RunSuccess {
  taskId: string;
  success: Success;
  at: Date;
  retentionMs: number;
}

/** The rows of `runsEnded`. */
const ENDED_COLUMNS = {
  id: 'text',
  finished_at: 'text',
  caption: 'text',
  texts: 'text',
  artifact_views: 'text',
  files_expire_at: 'text',
} as const;

/** `runsSucceeding`' UPDATE. */
const runsEnded = prepared<{ rows: string }, BatchMovedTask>((db, value, dialect) =>
  returningMoved(
    db
      .updateTable('tasks')
      .from(dialect.jsonRows(value('rows'), ENDED_COLUMNS))
      .set((eb) => ({
        status: 'succeeded',
        progress: 100,
        finished_at: eb.ref('v.finished_at'),
        caption: eb.ref('v.caption'),
        texts: eb.ref('v.texts'),
        artifact_views: eb.ref('v.artifact_views'),
        files_expire_at: eb.ref('v.files_expire_at'),
        revision: eb('tasks.revision', '+', 1),
      }))
      .whereRef('tasks.id', '=', 'v.id')
      .where('tasks.status', '=', 'running'),
    dialect,
  ),
);

const jobsRemoved = prepared<{ ids: string }, never>((db, value, dialect) =>
  db.deleteFrom('jobs').where(dialect.jsonIn('id', value('ids'))),
);

/**
 * `markSucceeded` in a transaction of its own, shared with the runs that end at the same moment
 * (batches.ts): one UPDATE moves the tasks, one INSERT keeps their files, one DELETE removes their jobs,
 * and their holds are captured together (`captureMany`), each task's money still in the transaction of
 * its own state change.
 */
export const runsSucceeding: BatchKind<RunSuccess, boolean> = {
  key: (end) => end.taskId,
  one: ({ db, dialect }, end) =>
    dialect.groupCommit(db, (tx) => markSucceeded(tx, end.taskId, end.success, end.at, end.retentionMs)),
  async many(tx, ends, dialect) {
    const artifacts = new Map(ends.map((end) => [end.taskId, artifactRows(end.taskId, end.success)]));
    const values = ends.map((end) => ({
      id: end.taskId,
      finished_at: end.at.toISOString(),
      caption: end.success.caption,
      texts: JSON.stringify(end.success.texts),
      artifact_views: artifactViewsJson(artifacts.get(end.taskId) ?? []),
      files_expire_at: filesExpireAt(end.at, end.retentionMs),
    }));
    const { rows: moved } = await runsEnded(tx, { rows: rowsJson(tx, ENDED_COLUMNS, values) });
    const rows = movedRows(moved);
    const done = ends.filter((end) => rows.has(end.taskId));
    const files = done.flatMap((end) => artifacts.get(end.taskId) ?? []);
    if (files.length > 0) await tx.insertInto('artifacts').values(files).execute();
    for (const end of done) {
      const row = rows.get(end.taskId);
      await taskChanged(tx, end.taskId, { type: 'task.succeeded', at: end.at }, row && changedOf(row));
    }
    // As `leaveActive` does for one task, in its order.
    if (done.length > 0) {
      // These writes read nothing back: on PostgreSQL they go with the COMMIT, in this order.
      await jobsRemoved.atCommit(tx, { ids: idsJson(done.map((end) => jobIdOf(end.taskId))) });
      await captureMany(
        tx,
        dialect,
        done.map((end) => ({ taskId: end.taskId, at: end.at })),
      );
      await giveBackActivePlaces(
        tx,
        done.flatMap((end) => rows.get(end.taskId) ?? []),
      );
    }
    return ends.map((end) => rows.has(end.taskId));
  },
};
export const markSucceededTogether = batched(runsSucceeding);

const jobRemoved = prepared<{ jobId: string }, never>((db, value) =>
  db.deleteFrom('jobs').where('id', '=', value('jobId')),
);

/**
 * What every move out of queued/running does beside its row's change, in the same transaction: the hold
 * captured or voided, the task's place under the active-task limit given back, its job removed.
 *
 * Last in its transaction, and in this order: the account's row (locked by the settlement) and then its
 * active-task count are the rows every creation and settlement of the account waits for on PostgreSQL, so
 * they are locked as late as possible (the lock is held until the commit), and in the order a creation
 * locks them (`TaskService`: account, then count), so two transactions never wait for each other.
 */
async function leaveActive(
  tx: Tx,
  row: Pick<TasksTable, 'id' | 'account_id' | 'model'>,
  outcome: 'capture' | 'void',
  at: Date,
): Promise<void> {
  await jobRemoved(tx, { jobId: jobIdOf(row.id) });
  await settle(tx, row.id, outcome, at);
  await giveBackActivePlace(tx, row.account_id, row.model);
}

/** `at` when the task's run has an upstream task to cancel, else null (migration 0025). */
function owedUpstreamCancel(at: Date) {
  return sql<string | null>`case when provider_ref is not null then ${at.toISOString()} end`;
}

/**
 * queued | running → a final state without a result, voiding the hold. False when it was already final.
 * Whatever its folder holds is removed `retentionMs` after the end, as a succeeded task's files are.
 */
async function endWithoutResult(
  tx: Tx,
  taskId: string,
  changes: { status: 'failed' | 'canceled'; error_code?: string; error_message?: string },
  at: Date,
  retentionMs: number,
): Promise<boolean> {
  const row = await tx
    .updateTable('tasks')
    .set((eb) => ({
      ...changes,
      finished_at: at.toISOString(),
      files_expire_at: filesExpireAt(at, retentionMs),
      revision: eb('revision', '+', 1),
      // A caller's cancel owes the provider a cancel of the upstream task, if there is one: the worker
      // driving the run makes it, and the sweeper does when no worker drives it (upstream-cancels.ts).
      // A failure is the worker's own decision; it cancels upstream itself.
      ...(changes.status === 'canceled' ? { upstream_cancel_at: owedUpstreamCancel(at) } : {}),
    }))
    .where('id', '=', taskId)
    .where('status', 'in', ACTIVE_STATUSES)
    .returningAll()
    .returning(ENDPOINTS_EPOCH_COLUMN)
    .executeTakeFirst();
  if (row === undefined) return false;
  const type = changes.status === 'failed' ? 'task.failed' : 'task.canceled';
  await taskChanged(tx, taskId, { type, at }, row);
  await leaveActive(tx, row, 'void', at);
  return true;
}

/**
 * queued | running → failed, voiding the hold. False when the task was already final. Whatever its folder
 * holds is removed `retentionMs` (RESULT_RETENTION) after the end, as for a success.
 */
export function markFailed(
  tx: Tx,
  taskId: string,
  failure: { code: TaskFailureCode; reason: string },
  at: Date,
  retentionMs: number,
): Promise<boolean> {
  return endWithoutResult(
    tx,
    taskId,
    { status: 'failed', error_code: failure.code, error_message: failure.reason },
    at,
    retentionMs,
  );
}

/**
 * queued | running → canceled, releasing the hold in full. False when the task was already final. Whatever
 * its folder holds is removed `retentionMs` (RESULT_RETENTION) after the end, as for a success.
 */
export function markCanceled(tx: Tx, taskId: string, at: Date, retentionMs: number): Promise<boolean> {
  return endWithoutResult(tx, taskId, { status: 'canceled' }, at, retentionMs);
}
