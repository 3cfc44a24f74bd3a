import type { Kysely } from 'kysely';

// Wallet top-ups (CONTRACT §14). A top-up is one payment at a provider (YooKassa, or the service's own
// test mode) for an amount of one account; it moves pending → succeeded | canceled once. `payment_id` is
// unique: a succeeded payment credits the wallet once, with the payment id as the ledger's reference.
// The test mode keeps its payments in `test_payments`, so every process of the service sees the same
// payment. Frozen in time: written against Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('topups')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('account_id', 'text', (col) => col.notNull())
    .addColumn('amount_minor', 'bigint', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('provider', 'text', (col) => col.notNull())
    .addColumn('payment_id', 'text', (col) => col.notNull().unique())
    .addColumn('confirmation_url', 'text', (col) => col.notNull())
    .addColumn('return_url', 'text', (col) => col.notNull())
    .addColumn('idempotency_key', 'text')
    .addColumn('cancellation_reason', 'text')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('topups_account')
    .on('topups')
    .columns(['account_id', 'created_at', 'id'])
    .execute();
  await db.schema.createIndex('topups_status').on('topups').columns(['status', 'updated_at']).execute();
  await db.schema
    .createTable('test_payments')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('topup_id', 'text', (col) => col.notNull().unique())
    .addColumn('amount_minor', 'bigint', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('cancellation_reason', 'text')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('test_payments').execute();
  await db.schema.dropTable('topups').execute();
}
