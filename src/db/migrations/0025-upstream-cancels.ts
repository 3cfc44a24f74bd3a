import type { Kysely } from 'kysely';

// A caller's cancel reaches the provider through the worker that drives the run. While no worker drives it
// (the worker stopped, or the run waits for its retry), nobody would: the upstream task would run on,
// billed by the provider, for a result nobody wants. `upstream_cancel_at` is set by the cancel's own UPDATE
// when the task has an upstream handle (`provider_ref`); the sweeper asks the provider from then on, moving
// the time forward after a failed attempt, and clears it once the provider has been asked (or after a day
// of failures). The partial index holds only the tasks still owed a cancel. Frozen in time: written against
// Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('upstream_cancel_at', 'text').execute();
  await db.schema
    .createIndex('tasks_upstream_cancel')
    .on('tasks')
    .column('upstream_cancel_at')
    .where('upstream_cancel_at', 'is not', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('tasks_upstream_cancel').execute();
  await db.schema.alterTable('tasks').dropColumn('upstream_cancel_at').execute();
}
