import type { Kysely } from 'kysely';

// Every upload sums the account's live uploads against its quota: an index by account keeps that a
// short range scan instead of a walk over every upload. Frozen in time: written against Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('uploads_account')
    .on('uploads')
    .columns(['account_id', 'deleted_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('uploads_account').execute();
}
