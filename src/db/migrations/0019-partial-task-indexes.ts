import type { Kysely } from 'kysely';

// Two indexes of `tasks` hold every task but serve a few: the sweeper's `(files_expired, files_expire_at)`
// looks only at tasks with result files (succeeded ones, which have an expiry), and the channels'
// `(channel, status)` only at tasks a provider channel runs (the simulator's have none). Each creation
// still wrote both, and every status change moved the task within the second. As partial indexes they
// hold only the rows their queries read (the queries name the same condition, so both engines use them),
// and a new task is written into four B-trees instead of six. Frozen in time: written against
// Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('tasks_files_expire').execute();
  await db.schema
    .createIndex('tasks_files_expire')
    .on('tasks')
    .columns(['files_expired', 'files_expire_at'])
    .where('files_expire_at', 'is not', null)
    .execute();
  await db.schema.dropIndex('tasks_channel_status').execute();
  await db.schema
    .createIndex('tasks_channel_status')
    .on('tasks')
    .columns(['channel', 'status'])
    .where('channel', 'is not', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('tasks_files_expire').execute();
  await db.schema
    .createIndex('tasks_files_expire')
    .on('tasks')
    .columns(['files_expired', 'files_expire_at'])
    .execute();
  await db.schema.dropIndex('tasks_channel_status').execute();
  await db.schema.createIndex('tasks_channel_status').on('tasks').columns(['channel', 'status']).execute();
}
