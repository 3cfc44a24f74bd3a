import { type Kysely, sql } from 'kysely';

// A library record made from the caller's uploads names their direct links (an element's pictures and
// cover, a singing voice's source, the files Seedance characters and voices stand for), and tasks using the
// record send those links later. The upload sweeper removed them after UPLOAD_RETENTION all the same, so
// the record still read `ready` while its files were gone. `library_uploads` holds one row per upload a
// live record names, written in the transaction that creates the record and removed in the one that
// deletes it; the sweeper leaves held uploads alone. The index by upload serves the sweeper's and the
// links' "is it held" question. Frozen in time: written against Kysely<unknown>.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('library_uploads')
    .addColumn('record_id', 'text', (c) => c.notNull().references('library_records.id'))
    .addColumn('upload_id', 'text', (c) => c.notNull().references('uploads.id'))
    .addPrimaryKeyConstraint('library_uploads_pk', ['record_id', 'upload_id'])
    .execute();
  await db.schema.createIndex('library_uploads_upload').on('library_uploads').column('upload_id').execute();
  // Records made before this migration hold the uploads of their own account whose links they kept
  // (tokens are base62, so they are no LIKE wildcards); uploads already swept stay gone.
  await sql`
    insert into library_uploads (record_id, upload_id)
    select r.id, u.id from library_records r
    join uploads u on u.account_id = r.account_id
    where r.deleted_at is null and u.deleted_at is null and u.source_artifact is null
      and (r.private like '%/files/' || u.token || '%' or r.data like '%/files/' || u.token || '%')
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('library_uploads').execute();
}
