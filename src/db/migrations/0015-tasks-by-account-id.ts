import type { Kysely } from 'kysely';

// GET /v1/tasks lists an account's tasks newest first by id, a page after a cursor id. The indexes by
// account lead with created_at or with model and status, so each page read and sorted every task of the
// account: 1.5 s a page on SQLite for an account of 100,000 tasks (bench:scale). An index on
// (account_id, id) makes a page a short range walk in order, whatever the account's size. Frozen in time:
// written against Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('tasks_account_id').on('tasks').columns(['account_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('tasks_account_id').execute();
}
