import type { Kysely } from 'kysely';

// Three indexes hold every row but serve a few. The sweeper's `tasks (files_expired, files_expire_at)`
// looks only at tasks with result files (succeeded ones, which have an expiry); the channels'
// `tasks (channel, status)` only at tasks a provider channel runs (the simulator's have none); the unique
// `ledger_entries (account_id, reference)` only at credits (holds, captures and voids have no reference,
// and NULLs never collided). Each creation still wrote all three, every status change moved the task in
// the second, and every settlement wrote the third again, each at the account's own place in a large
// B-tree. As partial indexes they hold only the rows their queries read (the queries name the same
// condition or imply it, so both engines use them); a new task is written into four B-trees instead of
// six, its ledger entries into three instead of four. Frozen in time: written against Kysely<unknown>.
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
  await db.schema.dropIndex('ledger_entries_reference').execute();
  await db.schema
    .createIndex('ledger_entries_reference')
    .on('ledger_entries')
    .columns(['account_id', 'reference'])
    .unique()
    .where('reference', 'is not', null)
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
  await db.schema.dropIndex('ledger_entries_reference').execute();
  await db.schema
    .createIndex('ledger_entries_reference')
    .on('ledger_entries')
    .columns(['account_id', 'reference'])
    .unique()
    .execute();
}
