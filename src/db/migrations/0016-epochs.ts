import type { Kysely } from 'kysely';

// Change counters that processes compare to know whether what they keep in memory is still true. The one
// row `keys` goes up with every key revocation (in the revoking transaction), so an API process on the
// same SQLite file, which hears no notification from another process, still drops its cached keys at
// once (src/accounts/key-auth.ts). Frozen in time: written against Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('epochs')
    .addColumn('name', 'text', (col) => col.primaryKey())
    .addColumn('value', 'bigint', (col) => col.notNull())
    .execute();
  await (db as Kysely<{ epochs: { name: string; value: number } }>)
    .insertInto('epochs')
    .values({ name: 'keys', value: 0 })
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('epochs').execute();
}
