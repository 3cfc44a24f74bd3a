import type { Kysely } from 'kysely';

// `tasks (account_id, model, status)` served the active-task count until that count was kept in a table of
// its own (0018). The task list walks the tasks newest first; an index without the id cannot give a page in
// that order without sorting every match. SQLite's planner never picks it for a page; PostgreSQL's only
// for a model and a rare status together (a bitmap scan and a sort: 0.33 ms, where the newest-first walk
// takes 0.59 ms on an account of 100,000 tasks). Yet every creation wrote it, and every status change moved
// its entry: at 1,000,000 tasks its leaf page at each account's own place is one of the pages a creation
// dirties alone, 250 → 220 µs of SQLite writes per creation. Frozen in time: written against Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('tasks_account_model_status').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('tasks_account_model_status')
    .on('tasks')
    .columns(['account_id', 'model', 'status'])
    .execute();
}
