/**
 * Uploads held by library records (migration 0026): a record made from the caller's uploads names their
 * direct links, and tasks using it send them later, so an upload a live record names outlives its
 * `UPLOAD_RETENTION`. The library service writes the hold in the transaction that creates the record and
 * releases it in the one that deletes it; from then on the upload expires by its normal rule (at once when
 * its `expires_at` has passed). A DELETE of the upload still deletes it (CONTRACT §6).
 */
import type { ExpressionBuilder, ExpressionWrapper, SqlBool } from 'kysely';
import type { Database, Tx } from '../db/index.ts';
import { linkToken } from './direct-link.ts';

/** True where an `uploads` row is held by a live library record. */
export function isHeld(
  eb: ExpressionBuilder<Database, 'uploads'>,
): ExpressionWrapper<Database, 'uploads', SqlBool> {
  return eb.exists(
    eb
      .selectFrom('library_uploads')
      .select('library_uploads.record_id')
      .whereRef('library_uploads.upload_id', '=', 'uploads.id'),
  );
}

/**
 * Where an upload is live at `now`: not deleted, and not expired or held by a library record. A held
 * upload is the caller's in every way (listed, its link working, its bytes counted against the quota)
 * until it is released. The one statement of the rule: the quota, the list, links and the worker's
 * check of a waiting task's inputs all ask it.
 */
export function isLiveAt(
  now: Date,
): (eb: ExpressionBuilder<Database, 'uploads'>) => ExpressionWrapper<Database, 'uploads', SqlBool> {
  return (eb) =>
    eb.and([eb('deleted_at', 'is', null), eb.or([eb('expires_at', '>', now.toISOString()), isHeld(eb)])]);
}

/**
 * Holds the uploads among `urls` (any host, as direct links are recognised) for the record `recordId`.
 * Only the account's own uploads are held: a link to another account's upload works while that upload
 * lives, but a stranger's record never keeps it (nor its bytes in its owner's quota) alive. One expired
 * but not yet swept is held too, and lives again. Answers the links among `urls` whose upload of the
 * account is gone (deleted, or swept after its expiry): the record would keep a link that answers 404.
 */
export async function holdUploads(
  tx: Tx,
  hold: { recordId: string; accountId: string; urls: readonly string[] },
): Promise<string[]> {
  const tokens = [...new Set(hold.urls.map(linkToken).filter((token): token is string => token !== null))];
  if (tokens.length === 0) return [];
  const uploads = await tx
    .selectFrom('uploads')
    .select(['id', 'token', 'deleted_at'])
    .where('token', 'in', tokens)
    .where('account_id', '=', hold.accountId)
    // A lent link's bytes are an artifact's, kept with its task.
    .where('source_artifact', 'is', null)
    .execute();
  const live = uploads.filter((u) => u.deleted_at === null);
  if (live.length > 0) {
    await tx
      .insertInto('library_uploads')
      .values(live.map((u) => ({ record_id: hold.recordId, upload_id: u.id })))
      .execute();
  }
  const gone = new Set(uploads.filter((u) => u.deleted_at !== null).map((u) => u.token));
  return hold.urls.filter((url) => {
    const token = linkToken(url);
    return token !== null && gone.has(token);
  });
}

/** Releases every upload the record held; the sweeper treats each by its own expiry from then on. */
export async function releaseUploads(tx: Tx, recordId: string): Promise<void> {
  await tx.deleteFrom('library_uploads').where('record_id', '=', recordId).execute();
}
