import type { Kysely } from 'kysely';

// The sweeper's pass deletes the sessions and the e-mail links that have expired, which nothing else ever
// did: every sign-in, sign-up and reset left a row for good. Each table gets an index by expiry, so the
// pass (once a minute) reads only the rows it deletes instead of the whole table.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('sessions_expires').on('sessions').column('expires_at').execute();
  await db.schema.createIndex('person_tokens_expires').on('person_tokens').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('person_tokens_expires').execute();
  await db.schema.dropIndex('sessions_expires').execute();
}
