import type { Kysely } from 'kysely';

// Each output file keeps the provider's ids of it (PROVIDERS.md §2: Suno's replace-section and personas
// need the source track's taskId and audioId): JSON `{ provider, ids }`, null for files of the simulator
// and of providers that name no file. Frozen in time: written against Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('artifacts').addColumn('upstream', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('artifacts').dropColumn('upstream').execute();
}
