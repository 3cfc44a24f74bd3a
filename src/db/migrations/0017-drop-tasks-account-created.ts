import type { Kysely } from 'kysely';

// `tasks (account_id, created_at, id)` served the task list before it moved to `tasks (account_id, id)`
// (0015: ids are UUID v7, in creation order); no query reads it any longer. Every creation still wrote it: a
// sixth B-tree per task, whose pages at a random place for each account fall out of the cache in a large
// database (bench:scale). Frozen in time: written against Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('tasks_account_created').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('tasks_account_created')
    .on('tasks')
    .columns(['account_id', 'created_at', 'id'])
    .execute();
}
