import type { Kysely } from 'kysely';

// Frozen in time: written against Kysely<unknown> so later schema types never change what ran.
// Types chosen to mean the same on SQLite and PostgreSQL: text ids and ISO timestamps, bigint money,
// integer booleans.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('credited_minor', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('captured_minor', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('held_minor', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text')
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('models', 'text')
    .addColumn('daily_limit_minor', 'bigint')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('api_keys_account').on('api_keys').columns(['account_id']).execute();

  await db.schema
    .createTable('ledger_entries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('amount_minor', 'bigint', (c) => c.notNull())
    .addColumn('task_id', 'text')
    .addColumn('key_id', 'text')
    .addColumn('reference', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('ledger_entries_account')
    .on('ledger_entries')
    .columns(['account_id', 'created_at'])
    .execute();
  // NULL references (holds, captures, voids) never collide: NULLs are distinct in both engines.
  await db.schema
    .createIndex('ledger_entries_reference')
    .on('ledger_entries')
    .columns(['account_id', 'reference'])
    .unique()
    .execute();

  await db.schema
    .createTable('transfers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('key_id', 'text')
    .addColumn('amount_minor', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('settled_at', 'text')
    .execute();
  await db.schema
    .createIndex('transfers_key_day')
    .on('transfers')
    .columns(['key_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('model_settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('available', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('max_active', 'integer')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('tasks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('key_id', 'text')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('inputs', 'text', (c) => c.notNull())
    .addColumn('price_minor', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('progress', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('caption', 'text')
    .addColumn('texts', 'text')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('files_expire_at', 'text')
    .addColumn('files_expired', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('provider_ref', 'text')
    .execute();
  await db.schema
    .createIndex('tasks_account_created')
    .on('tasks')
    .columns(['account_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('tasks_account_model_status')
    .on('tasks')
    .columns(['account_id', 'model', 'status'])
    .execute();
  await db.schema
    .createIndex('tasks_files_expire')
    .on('tasks')
    .columns(['files_expired', 'files_expire_at'])
    .execute();

  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('run_at', 'text', (c) => c.notNull())
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('jobs_run_at').on('jobs').columns(['run_at']).execute();

  await db.schema
    .createTable('artifacts')
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('idx', 'integer', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'bigint', (c) => c.notNull())
    .addColumn('caption', 'text', (c) => c.notNull())
    .addColumn('storage_key', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('artifacts_pk', ['task_id', 'idx'])
    .execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('resource_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('locked_until', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'idempotency_keys',
    'artifacts',
    'jobs',
    'tasks',
    'model_settings',
    'transfers',
    'ledger_entries',
    'api_keys',
    'accounts',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
