import type { Kysely } from 'kysely';

// Callbacks of real providers (CONTRACT §11): a secret token per run, kept only as its SHA-256 so a
// database dump cannot forge callbacks, and the bodies posted to it, kept until the run reads them
// (the Cog webhook body is the run's result: there is no read endpoint to ask again).
// Frozen in time: written against Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('callback_tokens')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('channel', 'text', (col) => col.notNull())
    .addColumn('run_key', 'text', (col) => col.notNull())
    .addColumn('task_id', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('callback_tokens_task').on('callback_tokens').column('task_id').execute();
  await db.schema
    .createTable('callback_bodies')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('run_key', 'text', (col) => col.notNull())
    .addColumn('channel', 'text', (col) => col.notNull())
    .addColumn('body', 'text', (col) => col.notNull())
    .addColumn('received_at', 'text', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('callback_bodies_run')
    .on('callback_bodies')
    .columns(['run_key', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('callback_bodies').execute();
  await db.schema.dropTable('callback_tokens').execute();
}
