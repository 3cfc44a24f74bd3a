import type { Kysely } from 'kysely';

// Databases made by the first release ran an earlier 0001: `tasks` had an `attempts` column (attempts are
// counted on `jobs`) and no `provider_ref`. That 0001 was edited afterwards, so such databases never got
// `provider_ref` and every task creation failed. This brings any shipped state to the current `tasks`;
// on a database made by the current 0001 it changes nothing. Frozen in time: written against
// Kysely<unknown>, reading the live table rather than the schema types.
export async function up(db: Kysely<unknown>): Promise<void> {
  const tables = await db.introspection.getTables();
  const columns = new Set(
    tables.filter((t) => t.name === 'tasks').flatMap((t) => t.columns.map((c) => c.name)),
  );
  if (!columns.has('provider_ref')) {
    await db.schema.alterTable('tasks').addColumn('provider_ref', 'text').execute();
  }
  if (columns.has('attempts')) {
    await db.schema.alterTable('tasks').dropColumn('attempts').execute();
  }
}

// Nothing to undo: the current 0001 already makes `tasks` like this.
export async function down(): Promise<void> {}
