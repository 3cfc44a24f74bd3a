import type { CompiledQuery } from 'kysely';
import type { ArtifactsTable, Db, TasksTable, Tx } from '../db/index.ts';
import { type ArtifactFacts, keptArtifacts } from './task-view.ts';

/**
 * The reads every poll of an unfinished task and every download make: built and compiled once per
 * database handle and then only given their parameters (building a Kysely query costs more than SQLite's
 * indexed read itself), and run at once where the handle allows it (`Db.readNow`).
 */
function compiledOnce<R>(build: (db: Tx) => CompiledQuery<R>): (db: Tx) => CompiledQuery<R> {
  const compiled = new WeakMap<Tx, CompiledQuery<R>>();
  return (db) => {
    let query = compiled.get(db);
    if (!query) {
      query = build(db);
      compiled.set(db, query);
    }
    return query;
  };
}

const rowRead = compiledOnce((db) =>
  db.selectFrom('tasks').selectAll().where('id', '=', '').where('account_id', '=', '').compile(),
);

const artifactRead = compiledOnce((db) =>
  db.selectFrom('artifacts').selectAll().where('task_id', '=', '').where('idx', '=', 0).compile(),
);

/** The first row, at once when the handle can read it so (`Db.readNow`), else as a promise. */
function firstRow<R>(
  db: Db,
  compiled: CompiledQuery<R>,
  parameters: unknown[],
): R | undefined | Promise<R | undefined> {
  const query: CompiledQuery<R> = { ...compiled, parameters };
  const rows = db.readNow<R>(query);
  if (rows !== null) return rows[0];
  return db.db.executeQuery<R>(query).then((result) => result.rows[0]);
}

/** The task row with this id and account, or undefined; a promise of it when it cannot be read at once. */
export function taskRowOf(
  db: Db,
  accountId: string,
  taskId: string,
): TasksTable | undefined | Promise<TasksTable | undefined> {
  return firstRow(db, rowRead(db.db), [taskId, accountId]);
}

/** The result file `idx` of a task, or undefined (or a promise of it, as `taskRowOf`). */
export function artifactRowOf(
  db: Db,
  taskId: string,
  idx: number,
): ArtifactsTable | undefined | Promise<ArtifactsTable | undefined> {
  return firstRow(db, artifactRead(db.db), [taskId, idx]);
}

/**
 * The files a view of `row` shows: none unless it succeeded; the copy its row keeps, or its `artifacts`
 * rows for a task that succeeded before that copy (migration 0027).
 */
export async function viewFilesOf(db: Tx, row: TasksTable): Promise<readonly ArtifactFacts[]> {
  if (row.status !== 'succeeded') return [];
  return (
    keptArtifacts(row) ??
    (await db.selectFrom('artifacts').selectAll().where('task_id', '=', row.id).execute())
  );
}
