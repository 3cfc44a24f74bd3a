import { type Kysely, sql } from 'kysely';

// Frozen in time, like 0001: Kysely<unknown>, text ids, ISO text timestamps, JSON as text, so the same
// statements mean the same on SQLite and PostgreSQL (both support partial indexes).

export async function up(db: Kysely<unknown>): Promise<void> {
  // One generic table for every library (elements, personas, voices, styles, characters); a record's
  // public fields live in `data`, our own bookkeeping (source task, phrase history, the pending step)
  // in `private`.
  await db.schema
    .createTable('library_records')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('library', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('private', 'text', (c) => c.notNull())
    // What must be unique among the live records of one library of the account: an element's name,
    // a persona's source task and index. Null: nothing.
    .addColumn('unique_key', 'text')
    .addColumn('error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    // When the pending step (training, processing, verifying) completes; the transition is applied on read.
    .addColumn('ready_at', 'text')
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema
    .createIndex('library_records_list')
    .on('library_records')
    .columns(['account_id', 'model', 'library', 'created_at'])
    .execute();
  // Element names per person, personas per (source task, index): only live records count (reference
  // "Element library", "Singing personas"), so a deleted record frees its name or song version.
  await db.schema
    .createIndex('library_records_unique')
    .on('library_records')
    .columns(['account_id', 'model', 'library', 'unique_key'])
    .unique()
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();

  // Calls of the free helpers, for the hourly limit shared by every process (reference "Limits").
  await db.schema
    .createTable('helper_calls')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('helper_calls_account_at')
    .on('helper_calls')
    .columns(['account_id', 'at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('helper_calls').execute();
  await db.schema.dropTable('library_records').execute();
}
