import type { Kysely } from 'kysely';

// A succeeded payment that cannot be credited (another amount, currency or top-up than its own, or a credit
// the ledger refuses for good) left its top-up pending, and the sweep read it back from the provider and
// logged the same error in every pass, for ever. `needs_operator_at` records when that was first found: the
// error is logged once, and the sweep reads such a top-up no more (a notification or the payer's read
// still does). Frozen in time: written against Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('topups').addColumn('needs_operator_at', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('topups').dropColumn('needs_operator_at').execute();
}
