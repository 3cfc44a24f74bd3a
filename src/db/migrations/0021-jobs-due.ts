import { type Kysely, sql } from 'kysely';

// The claim read `jobs (run_at)` from its oldest entry and looked up each job's row to skip the ones
// leased to a worker: the running jobs are the oldest, so every claim of a backlog walked past all of them
// first (about 40 µs of SQLite a task in bench:dispatch). Two partial indexes split the jobs instead: the
// free ones by `run_at`, with the id (and `locked_until`, always null there, without which SQLite would
// still read each row), so the claim reads exactly the jobs it takes and no row; the leased
// ones by `locked_until`, which the claim reads for leases that ran out (rare: a worker that crashed).
// Frozen in time: written against Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('jobs_run_at').execute();
  await db.schema
    .createIndex('jobs_free')
    .on('jobs')
    .columns(['run_at', 'id', 'locked_until'])
    .where(sql.ref('locked_until'), 'is', null)
    .execute();
  await db.schema
    .createIndex('jobs_leased')
    .on('jobs')
    .column('locked_until')
    .where('locked_until', 'is not', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('jobs_free').execute();
  await db.schema.dropIndex('jobs_leased').execute();
  await db.schema.createIndex('jobs_run_at').on('jobs').columns(['run_at']).execute();
}
