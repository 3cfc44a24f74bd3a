import type { CompiledQuery } from 'kysely';
import type { ArtifactsTable, TasksTable, Tx } from '../db/index.ts';

/**
 * The reads every poll of an unfinished task and every download make: built and compiled once per
 * database handle and then only given their parameters (building a Kysely query costs more than SQLite's
 * indexed read itself).
 */
const rowReads = new WeakMap<Tx, CompiledQuery<TasksTable>>();

function rowRead(db: Tx): CompiledQuery<TasksTable> {
  let compiled = rowReads.get(db);
  if (!compiled) {
    compiled = db.selectFrom('tasks').selectAll().where('id', '=', '').where('account_id', '=', '').compile();
    rowReads.set(db, compiled);
  }
  return compiled;
}

/** The task row with this id and account, or undefined. */
export async function taskRowOf(db: Tx, accountId: string, taskId: string): Promise<TasksTable | undefined> {
  const { rows } = await db.executeQuery<TasksTable>({ ...rowRead(db), parameters: [taskId, accountId] });
  return rows[0];
}

const artifactReads = new WeakMap<Tx, CompiledQuery<ArtifactsTable>>();

/** The result file `idx` of a task, or undefined. */
export async function artifactRowOf(
  db: Tx,
  taskId: string,
  idx: number,
): Promise<ArtifactsTable | undefined> {
  let compiled = artifactReads.get(db);
  if (!compiled) {
    compiled = db
      .selectFrom('artifacts')
      .selectAll()
      .where('task_id', '=', '')
      .where('idx', '=', 0)
      .compile();
    artifactReads.set(db, compiled);
  }
  const { rows } = await db.executeQuery<ArtifactsTable>({ ...compiled, parameters: [taskId, idx] });
  return rows[0];
}
