import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { KeyPrincipal } from '../accounts/index.ts';
import type { ArtifactKind } from '../catalog/index.ts';
import type { Db, Tx, UploadsTable } from '../db/index.ts';
import { ApiError, errors } from '../errors.ts';
import type { Clock } from '../lib/index.ts';
import { ByteCounter, makeTempFolder, randomBase62, uuidv7 } from '../lib/index.ts';
import { inspectFile, kindOf } from '../media/index.ts';
import type { BlobStore, ByteRange } from '../storage/index.ts';
import { linkToken } from './direct-link.ts';
import { safeFilename } from './filename.ts';
import { isHeld, isLiveAt } from './upload-holds.ts';

/** Largest upload (CONTRACT §6); per-field limits are checked when a task uses the file. */
export const MAX_UPLOAD_BYTES = 100 * 1024 * 1024;

export interface UploadView {
  id: string;
  /** Absolute direct link; works without an API key until `expires_at`. */
  url: string;
  filename: string;
  content_type: string;
  kind: ArtifactKind;
  size: number;
  duration_seconds: number | null;
  width: number | null;
  height: number | null;
  created_at: string;
  expires_at: string;
}

/** An upload as the dashboard lists it: `held` while a library record uses it, so it does not expire. */
export interface HeldUploadView extends UploadView {
  held: boolean;
}

export interface UploadServiceDeps {
  db: Db;
  clock: Clock;
  storage: BlobStore;
  publicBaseUrl: string;
  retentionMs: number;
  /** Bytes of live uploads one account may keep (`UPLOAD_QUOTA`). */
  quotaBytes: number;
}

/** A stored file lent to a provider for one run by a direct link of its own (`UploadService.lend`). */
export interface LentFile {
  /** The account whose file it is. */
  accountId: string;
  storageKey: string;
  filename: string;
  contentType: string;
  format: string;
  kind: ArtifactKind;
  sizeBytes: number;
  durationSeconds?: number;
  width?: number;
  height?: number;
  /** What owns the bytes: `<task id>/<index>` of an artifact. */
  source: string;
  /** When the link stops working; at least the end of the run it is made for. */
  expiresAt: Date;
}

function token(): string {
  return randomBase62(32);
}

/** Bytes of an account's live uploads, which count against its quota. */
async function usedBytes(db: Tx, accountId: string, now: Date): Promise<number> {
  const row = await db
    .selectFrom('uploads')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('size_bytes'), eb.lit(0)).as('used'))
    .where('account_id', '=', accountId)
    .where(isLiveAt(now))
    // A lent link's bytes are an artifact's, kept and counted with its task.
    .where('source_artifact', 'is', null)
    .executeTakeFirst();
  return Number(row?.used ?? 0);
}

/** Uploads of own files (CONTRACT §6): stored, probed once, served by an unguessable direct link. */
export class UploadService {
  readonly #deps: UploadServiceDeps;

  constructor(deps: UploadServiceDeps) {
    this.#deps = deps;
  }

  /**
   * Streams an upload to a temporary file with the size cap enforced while reading, recognises its type by
   * content, probes its length and size, and stores it. 413 file_too_large, 422 file_empty, 422 file_type.
   */
  async upload(
    principal: KeyPrincipal,
    input: {
      body: Readable;
      filename?: string;
      /** Checks what follows the file once it is read (the rest of a multipart body); throws to refuse. */
      rest?: () => Promise<void>;
    },
  ): Promise<UploadView> {
    const quota = this.#deps.quotaBytes;
    // A first look, so a full account is refused before any byte is read; the decision is made again
    // under the account lock when the record is written (see #insertWithinQuota).
    const usedBefore = await usedBytes(this.#deps.db.db, principal.accountId, this.#deps.clock.now());
    const room = quota - usedBefore;
    if (room <= 0) throw errors.storageQuotaExceeded(quota, usedBefore);
    const dir = await makeTempFolder('upload');
    try {
      const temp = path.join(dir, 'body');
      const cap = new ByteCounter(Math.min(MAX_UPLOAD_BYTES, room), () =>
        room < MAX_UPLOAD_BYTES
          ? errors.storageQuotaExceeded(quota, usedBefore)
          : errors.fileTooLarge('file', MAX_UPLOAD_BYTES),
      );
      try {
        await pipeline(input.body, cap, fs.createWriteStream(temp));
      } catch (error) {
        if (error instanceof ApiError) throw error;
        throw errors.invalidRequest({ en: 'The upload was interrupted.', ru: 'Загрузка прервана.' });
      }
      await input.rest?.();
      if (cap.bytes === 0) throw errors.fileEmpty('file');
      const sniffed = await inspectFile(temp, cap.bytes);
      if (!sniffed) throw errors.fileType('file');
      const now = this.#deps.clock.now();
      const id = uuidv7(now.getTime());
      const row: UploadsTable = {
        id,
        account_id: principal.accountId,
        token: token(),
        filename: safeFilename(input.filename, sniffed.format),
        content_type: sniffed.contentType,
        format: sniffed.format,
        kind: kindOf(sniffed.format),
        size_bytes: cap.bytes,
        duration_seconds: sniffed.durationSeconds ?? null,
        width: sniffed.width ?? null,
        height: sniffed.height ?? null,
        storage_key: `uploads/${id}`,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + this.#deps.retentionMs).toISOString(),
        deleted_at: null,
        source_artifact: null,
      };
      await this.#deps.storage
        .put(row.storage_key, fs.createReadStream(temp), {
          contentType: row.content_type,
        })
        .catch((error: unknown) => {
          // A put that failed late (a timeout while the store was slow) may still have written the object,
          // which no record names. Not awaited: the store has just failed, and the answer need not wait.
          void this.#deps.storage.delete(row.storage_key).catch(() => {});
          throw error;
        });
      try {
        await this.#insertWithinQuota(row);
      } catch (error) {
        // No record, no bytes: nothing could ever reach or sweep them.
        await this.#deps.storage.delete(row.storage_key).catch(() => {});
        throw error;
      }
      return this.#view(row);
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * What the quota refuses before an upload's body is asked for: a full account, or a file whose length
   * is already known (`declaredBytes`, a raw body's Content-Length) to pass the room left. 413
   * storage_quota_exceeded; `upload` decides again while reading and when the record is written.
   */
  async checkRoom(principal: KeyPrincipal, declaredBytes?: number): Promise<void> {
    const quota = this.#deps.quotaBytes;
    const used = await usedBytes(this.#deps.db.db, principal.accountId, this.#deps.clock.now());
    if (used >= quota || (declaredBytes !== undefined && declaredBytes > quota - used)) {
      throw errors.storageQuotaExceeded(quota, used);
    }
  }

  /**
   * Writes the record if the account's live uploads still leave room for it. Under the account lock
   * (PostgreSQL row lock; SQLite's single writer), so concurrent uploads that each passed the first look
   * cannot together pass the quota.
   */
  async #insertWithinQuota(row: UploadsTable): Promise<void> {
    const { db, dialect } = this.#deps.db;
    await dialect.transaction(db, async (tx) => {
      await dialect.lockAccount(tx, row.account_id);
      const used = await usedBytes(tx, row.account_id, this.#deps.clock.now());
      if (used + Number(row.size_bytes) > this.#deps.quotaBytes) {
        throw errors.storageQuotaExceeded(this.#deps.quotaBytes, used);
      }
      await tx.insertInto('uploads').values(row).execute();
    });
  }

  /**
   * A direct link to a stored file that is not an upload (a result file of the caller's), for a provider
   * that fetches its inputs by URL and has no API key (PROVIDERS.md "Rules"): the same `/files/{token}`
   * link and route as an upload, on a row of its own that lends the file's bytes until `expiresAt`. The
   * row is invisible to the caller (never listed, no quota) and its bytes are never deleted with it.
   */
  async lend(file: LentFile): Promise<string> {
    const now = this.#deps.clock.now();
    const row: UploadsTable = {
      id: uuidv7(now.getTime()),
      account_id: file.accountId,
      token: token(),
      filename: file.filename,
      content_type: file.contentType,
      format: file.format,
      kind: file.kind,
      size_bytes: file.sizeBytes,
      duration_seconds: file.durationSeconds ?? null,
      width: file.width ?? null,
      height: file.height ?? null,
      storage_key: file.storageKey,
      created_at: now.toISOString(),
      expires_at: file.expiresAt.toISOString(),
      deleted_at: null,
      source_artifact: file.source,
    };
    await this.#deps.db.db.insertInto('uploads').values(row).execute();
    return this.#view(row).url;
  }

  async get(principal: KeyPrincipal, id: string): Promise<UploadView> {
    return this.#view(await this.#own(principal, id));
  }

  /**
   * The account's live uploads (held ones past `expires_at` too), newest first, with the bytes they hold
   * against the quota (`UPLOAD_QUOTA`): the dashboard's uploads page.
   */
  async list(
    principal: KeyPrincipal,
    limit = 500,
  ): Promise<{ files: HeldUploadView[]; usedBytes: number; quotaBytes: number }> {
    const { db, clock } = this.#deps;
    const now = clock.now();
    const rows = await db.db
      .selectFrom('uploads')
      .selectAll()
      .select((eb) => isHeld(eb).as('held'))
      .where('account_id', '=', principal.accountId)
      .where(isLiveAt(now))
      .where('source_artifact', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return {
      files: rows.map(({ held, ...row }) => ({ ...this.#view(row), held: Boolean(held) })),
      usedBytes: await usedBytes(db.db, principal.accountId, now),
      quotaBytes: this.#deps.quotaBytes,
    };
  }

  /**
   * Deletes an upload: its direct link answers 404 from then on and its bytes are removed. Of several
   * deletes at once only the one that flags the record answers 204; the others 404, as they would after it.
   */
  async delete(principal: KeyPrincipal, id: string): Promise<void> {
    const row = await this.#own(principal, id);
    if (!(await this.#remove(row))) throw errors.fileNotFound(id);
  }

  /** The live upload behind a direct link's token, or null (unknown, deleted, or expired and not held). */
  async byToken(tokenValue: string): Promise<UploadsTable | null> {
    const row = await this.#anyByToken(tokenValue);
    return row !== null && (await this.#isLive(row)) ? row : null;
  }

  /** The upload of a token, live or not (deleted, expired), or null. */
  async #anyByToken(tokenValue: string): Promise<UploadsTable | null> {
    if (!/^[A-Za-z0-9]{32}$/.test(tokenValue)) return null;
    const row = await this.#deps.db.db
      .selectFrom('uploads')
      .selectAll()
      .where('token', '=', tokenValue)
      .executeTakeFirst();
    return row ?? null;
  }

  /** Whether the row read is live (`isLiveAt`); the database is asked only for an expired one's hold. */
  async #isLive(row: UploadsTable): Promise<boolean> {
    if (row.deleted_at !== null) return false;
    const now = this.#deps.clock.now();
    if (row.expires_at > now.toISOString()) return true;
    const live = await this.#deps.db.db
      .selectFrom('uploads')
      .select('id')
      .where('id', '=', row.id)
      .where(isLiveAt(now))
      .executeTakeFirst();
    return live !== undefined;
  }

  /**
   * The upload a URL points at when it is one of our direct links, whatever host it names (CONTRACT §6:
   * own uploads are read from storage without a network request). Null for other URLs.
   */
  async byUrl(url: string): Promise<UploadsTable | null> {
    const token = linkToken(url);
    return token === null ? null : this.byToken(token);
  }

  /**
   * Whether a URL names an upload of ours by its token (live or not): a link only shaped like ours (a
   * CDN's `/files/<32 hex>/…`) names none and is another host's file.
   */
  async isOwnLink(url: string): Promise<boolean> {
    const token = linkToken(url);
    return token !== null && (await this.#anyByToken(token)) !== null;
  }

  /**
   * Whether a URL is one of our direct links whose upload was deleted or has expired: such a link is
   * refused for what it is, not fetched over the network like a stranger's URL.
   */
  async isGoneLink(url: string): Promise<boolean> {
    const token = linkToken(url);
    const row = token === null ? null : await this.#anyByToken(token);
    return row !== null && !(await this.#isLive(row));
  }

  /** Streams the bytes of a direct link (no API key); 404 file_not_found once gone. */
  async open(
    tokenValue: string,
    /** The part to read of a file of `size` bytes made at `modifiedAt` (its validators decide). */
    range: (size: number, modifiedAt: string) => ByteRange | null,
  ): Promise<{
    row: UploadsTable;
    body: Readable;
    range: ByteRange | null;
  }> {
    const row = await this.byToken(tokenValue);
    if (!row) throw errors.fileNotFound(tokenValue.slice(0, 8));
    const wanted = range(Number(row.size_bytes), row.created_at);
    const object = await this.#deps.storage.get(row.storage_key, wanted ?? undefined);
    if (!object) throw errors.fileNotFound(row.id);
    return { row, body: object.body, range: wanted };
  }

  /**
   * Removes expired uploads no library record holds, and their bytes; returns how many. A held upload
   * stays until its last record is deleted, then goes at the next pass. Bytes go first and the flag after
   * (an expired link already answers 404, and deletes are idempotent): a crash between the two leaves a
   * record the next sweep finds again, never bytes no sweep would look for. An upload whose removal fails
   * is told to `onError` and left whole for the next pass, so it holds up none of the others (without
   * `onError` the first failure ends the pass).
   */
  async sweep(
    batch = 500,
    onError: (error: unknown, uploadId: string) => void = (error) => {
      throw error;
    },
  ): Promise<number> {
    const { db, storage, clock } = this.#deps;
    const now = clock.now();
    const due = await db.db
      .selectFrom('uploads')
      .selectAll()
      // The expired ones by the index `uploads_expiry`, then those of them no longer live (not held).
      .where('deleted_at', 'is', null)
      .where('expires_at', '<=', now.toISOString())
      .where((eb) => eb.not(isLiveAt(now)(eb)))
      .limit(batch)
      .execute();
    let removed = 0;
    for (const row of due) {
      try {
        // A lent link's bytes are its artifact's: they go when the task's files expire, not with the link.
        if (row.source_artifact === null) await storage.delete(row.storage_key);
        const flagged = await db.db
          .updateTable('uploads')
          .set({ deleted_at: clock.now().toISOString() })
          .where('id', '=', row.id)
          .where('deleted_at', 'is', null)
          .executeTakeFirst();
        if (Number(flagged.numUpdatedRows) > 0) removed += 1;
      } catch (error) {
        onError(error, row.id);
      }
    }
    return removed;
  }

  /**
   * Bytes first and the flag after, as the sweep does: a storage that fails leaves the upload whole (the
   * caller retries), never a flagged record whose object no delete or sweep would look for again.
   */
  async #remove(row: UploadsTable): Promise<boolean> {
    await this.#deps.storage.delete(row.storage_key);
    const result = await this.#deps.db.db
      .updateTable('uploads')
      .set({ deleted_at: this.#deps.clock.now().toISOString() })
      .where('id', '=', row.id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async #own(principal: KeyPrincipal, id: string): Promise<UploadsTable> {
    const row = await this.#deps.db.db
      .selectFrom('uploads')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', principal.accountId)
      .where('deleted_at', 'is', null)
      // A lent link is not the caller's upload: it cannot be read or deleted (its bytes) as one.
      .where('source_artifact', 'is', null)
      .executeTakeFirst();
    if (!row || !(await this.#isLive(row))) throw errors.fileNotFound(id);
    return row;
  }

  #view(row: UploadsTable): UploadView {
    return {
      id: row.id,
      url: `${this.#deps.publicBaseUrl}/files/${row.token}/${encodeURIComponent(row.filename)}`,
      filename: row.filename,
      content_type: row.content_type,
      kind: row.kind as ArtifactKind,
      size: Number(row.size_bytes),
      duration_seconds: row.duration_seconds,
      width: row.width,
      height: row.height,
      created_at: row.created_at,
      expires_at: row.expires_at,
    };
  }
}
