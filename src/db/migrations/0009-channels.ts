import type { Kysely } from 'kysely';

// Channels of real generators (CONTRACT §11). A task records the channel of its run before the worker
// waits on it, so a restarted worker asks the same channel; `avoid_channel` remembers the channel a
// failed run left, so its retry goes elsewhere where it can. Channel state lives in the database because
// every worker process shares the slots and the circuit of a channel. Frozen in time: Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('channel', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('avoid_channel', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('upstream_cost', 'text').execute();
  await db.schema.createIndex('tasks_channel_status').on('tasks').columns(['channel', 'status']).execute();
  await db.schema
    .createTable('channel_states')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('circuit', 'text', (c) => c.notNull().defaultTo('closed'))
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('opened_at', 'text')
    .addColumn('succeeded', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('channel_states').execute();
  await db.schema.dropIndex('tasks_channel_status').execute();
  await db.schema.alterTable('tasks').dropColumn('upstream_cost').execute();
  await db.schema.alterTable('tasks').dropColumn('avoid_channel').execute();
  await db.schema.alterTable('tasks').dropColumn('channel').execute();
}
