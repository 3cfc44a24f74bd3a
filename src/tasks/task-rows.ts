import type { CompiledQuery } from 'kysely';
import type { TasksTable, Tx } from '../db/index.ts';

/**
 * The read of one task of an account, which every poll of an unfinished task makes: built and compiled
 * once per database handle and then only given its parameters (building a Kysely query costs more than
 * SQLite's indexed read itself).
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
