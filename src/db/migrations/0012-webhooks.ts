import type { Kysely } from 'kysely';

// Waiting and webhooks (CONTRACT §12). `tasks.revision` counts every change a caller can see (status,
// progress), so event streams number their events and a long-poll knows the task moved. A task may name
// its own webhook. Per-account endpoints keep their signing secret (and the previous one during a
// rotation's overlap); the account's default secret signs the tasks' own webhooks. Deliveries are a
// durable queue: the body is frozen when the event happens, so every retry sends the same bytes under the
// same `webhook-id`, and a lease lets another process take over a sender that died.
// Frozen in time: written against Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('tasks')
    .addColumn('revision', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('tasks').addColumn('webhook_url', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('webhook_events', 'text').execute();
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('account_id', 'text', (col) => col.notNull())
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('events', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('secret', 'text', (col) => col.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', 'text')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema
    .createIndex('webhook_endpoints_account')
    .on('webhook_endpoints')
    .columns(['account_id', 'id'])
    .execute();
  await db.schema
    .createTable('webhook_secrets')
    .addColumn('account_id', 'text', (col) => col.primaryKey())
    .addColumn('secret', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .execute();
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('account_id', 'text', (col) => col.notNull())
    .addColumn('webhook_id', 'text')
    .addColumn('task_id', 'text')
    .addColumn('record_id', 'text')
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('body', 'text', (col) => col.notNull())
    .addColumn('state', 'text', (col) => col.notNull())
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('next_attempt_at', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['state', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_account')
    .on('webhook_deliveries')
    .columns(['account_id', 'id'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_task')
    .on('webhook_deliveries')
    .columns(['task_id', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_secrets').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
  await db.schema.alterTable('tasks').dropColumn('webhook_events').execute();
  await db.schema.alterTable('tasks').dropColumn('webhook_url').execute();
  await db.schema.alterTable('tasks').dropColumn('revision').execute();
}
