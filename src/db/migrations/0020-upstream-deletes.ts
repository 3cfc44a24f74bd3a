import type { Kysely } from 'kysely';

// A library record made at a provider (a cloned voice at ElevenLabs, a Kling element, a Recraft style)
// lives on there after the caller deletes it here, unless the service asks the provider to delete it too.
// `upstream_delete_at` is set in the same UPDATE that deletes the record when the provider keeps a copy:
// the sweeper asks the provider from then on, moving the time forward after a failed attempt, and clears
// it once the provider has let go of the record (or after a week of failures). The partial index holds
// only the records still owed a deletion. Frozen in time: written against Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('library_records').addColumn('upstream_delete_at', 'text').execute();
  await db.schema
    .createIndex('library_records_upstream_delete')
    .on('library_records')
    .column('upstream_delete_at')
    .where('upstream_delete_at', 'is not', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('library_records_upstream_delete').execute();
  await db.schema.alterTable('library_records').dropColumn('upstream_delete_at').execute();
}
