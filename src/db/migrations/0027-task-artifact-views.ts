import type { Kysely } from 'kysely';

// What a task's views show of its result files (index, kind, name, type, size, caption), kept on the
// task's row by the transaction that makes it succeed, so reading or listing a task reads no `artifacts`
// rows: those of an account's tasks lie one page apart each in a large table (docs/performance.md,
// "Scale"). The `artifacts` table stays the source of downloads, lent links and deletions, and of the
// views of tasks that succeeded before this column (null there). Frozen in time: written against
// Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('artifact_views', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').dropColumn('artifact_views').execute();
}
