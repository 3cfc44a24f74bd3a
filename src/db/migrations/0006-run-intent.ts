import type { Kysely } from 'kysely';

// The run key a worker records before it asks the generator for a run, so a worker that resumes after a
// crash between the generator's answer and saving its handle finds that run instead of starting another.
// Frozen in time: written against Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('run_key', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').dropColumn('run_key').execute();
}
