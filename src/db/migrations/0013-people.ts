import type { Kysely } from 'kysely';

// People's accounts (CONTRACT §13). A person is the e-mail and password behind one account; operator-made
// accounts have none until the operator attaches an e-mail. E-mail tokens (confirmation, password reset)
// and sessions are stored only as SHA-256 of the value sent, so a copy of the database opens nothing.
// Frozen in time: written against Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('people')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('account_id', 'text', (col) => col.notNull().unique())
    .addColumn('email', 'text', (col) => col.notNull().unique())
    .addColumn('password_hash', 'text')
    .addColumn('email_confirmed_at', 'text')
    .addColumn('lang', 'text')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .execute();
  await db.schema
    .createTable('person_tokens')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('person_id', 'text', (col) => col.notNull())
    .addColumn('purpose', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'text', (col) => col.notNull())
    .addColumn('used_at', 'text')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('person_tokens_person')
    .on('person_tokens')
    .columns(['person_id', 'purpose'])
    .execute();
  await db.schema
    .createTable('sessions')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('person_id', 'text', (col) => col.notNull())
    .addColumn('csrf', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('sessions_person').on('sessions').columns(['person_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sessions').execute();
  await db.schema.dropTable('person_tokens').execute();
  await db.schema.dropTable('people').execute();
}
