import type { Kysely } from 'kysely';

// Idempotency-Key claims carry a random token (issue 10.1): a request whose claim was taken over after its
// lock ran out can then neither complete nor release the key under the new owner. Rows claimed before this
// migration have none and simply finish or expire. Frozen in time: written against Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('claim_token', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').dropColumn('claim_token').execute();
}
