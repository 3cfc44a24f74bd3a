import { type Kysely, sql } from 'kysely';

// The active-task limit (429 too_many_active) counted an account's queued and running tasks of the model
// with every creation: a walk over that many index entries (35 µs at 1,000 unfinished tasks, more as they
// grow), in the transaction every creation of the database waits for. A count per account and model kept
// in the transactions that change it (creation adds one, the move to a final state takes one away) makes
// the check one row. Filled from the tasks as they are. Frozen in time: written against Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('active_task_counts')
    .addColumn('account_id', 'text', (col) => col.notNull())
    .addColumn('model', 'text', (col) => col.notNull())
    .addColumn('active', 'integer', (col) => col.notNull())
    .addPrimaryKeyConstraint('active_task_counts_pk', ['account_id', 'model'])
    .execute();
  await sql`insert into active_task_counts (account_id, model, active)
    select account_id, model, count(*) from tasks where status in ('queued', 'running')
    group by account_id, model`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('active_task_counts').execute();
}
