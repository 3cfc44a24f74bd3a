import { type Kysely, sql } from 'kysely';

// Since this migration a task that fails or is canceled is given `files_expire_at` (RESULT_RETENTION after
// its end), so the sweeper removes its `results/<task>/` folder, which may hold the files of a run killed
// between storing them and its commit, as it removes a succeeded task's. Tasks that ended so before it have
// none and would keep such files for ever: their folders are due at once (their end), as they show no file.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`update tasks set files_expire_at = finished_at
    where status in ('failed', 'canceled') and files_expire_at is null
      and finished_at is not null`.execute(db);
}

export async function down(): Promise<void> {
  // Which ended tasks had no expiry is not kept, and a past expiry of a task without files is harmless.
}
