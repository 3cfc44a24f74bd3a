import type { Kysely } from 'kysely';

// A provider that fetches its inputs by URL cannot use a caller's artifact link (it needs an API key), so
// a run lends the result file by a direct link of its own: an `uploads` row with a fresh token, the
// artifact's storage key and an expiry as long as the run (PROVIDERS.md "Rules": inputs as absolute URLs
// under PUBLIC_BASE_URL). `source_artifact` (`<task id>/<index>`) marks such a row: its bytes belong to
// the artifact, so the sweeper never deletes them, and it is not one of the caller's uploads (no quota,
// not listed). Null for the caller's own uploads. Frozen in time: written against Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('uploads').addColumn('source_artifact', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('uploads').dropColumn('source_artifact').execute();
}
