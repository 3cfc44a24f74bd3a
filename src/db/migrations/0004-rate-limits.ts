import type { Kysely } from 'kysely';

// Counters of rate-limiter-flexible's PostgreSQL store, in the table layout that library expects
// (`key`, `points`, `expire` in epoch milliseconds), created here so every process finds it ready.
// SQLite keeps the table unused: a single process counts in memory.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('rate_limits')
    .ifNotExists()
    .addColumn('key', 'varchar(255)', (c) => c.primaryKey())
    .addColumn('points', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expire', 'bigint')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('rate_limits').execute();
}
