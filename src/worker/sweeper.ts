import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/index.ts';
import type { UploadService } from '../files/index.ts';
import type { CallbackStore } from '../generators/index.ts';
import { type Clock, Repeating, removeOrphanTempFolders } from '../lib/index.ts';
import type { BlobStore } from '../storage/index.ts';
import type { IdempotencyStore } from '../tasks/index.ts';

/** How long a run's callback token and bodies outlive its task: late duplicates still get a quiet 200. */
const CALLBACKS_KEPT_MS = 60 * 60_000;
/** How often the host's temporary folder is searched for folders of processes that were killed. */
const ORPHAN_TEMP_SWEEP_MS = 60 * 60_000;

interface SweeperDeps {
  db: Db;
  clock: Clock;
  storage: BlobStore;
  idempotency: IdempotencyStore;
  uploads: UploadService;
  /** Callbacks of real providers, dropped an hour after their task ended. (Default: none) */
  callbacks?: CallbackStore;
  /**
   * Removes expired dashboard sessions and e-mail links (PeopleService.sweepExpired); run with each pass.
   * (Default: none)
   */
  sweepPeople?: () => Promise<number>;
  log: Pick<FastifyBaseLogger, 'warn'>;
  /**
   * Settles library records whose pending step is due though nobody reads them, so their webhooks go out
   * (LibraryService.settleDue); run every few seconds. (Default: none)
   */
  settleRecords?: () => Promise<number>;
  /**
   * Deletes the provider copies of deleted library records (LibraryService.deleteUpstreamCopies); run every
   * few seconds, apart from settling, so a slow provider delays neither. (Default: none)
   */
  deleteUpstreamCopies?: () => Promise<number>;
  /**
   * Cancels the upstream tasks of canceled tasks no worker drives (cancelUpstreamRuns); run every few
   * seconds, apart from the others, so a slow provider delays nothing else. (Default: none)
   */
  cancelUpstreamRuns?: () => Promise<number>;
}

/**
 * Removes what has outlived its retention: result files past `files_expire_at` (then the task shows
 * `files_expired: true` and downloads answer 404 artifact_expired), expired uploads and old idempotency
 * keys, and once an hour (from the first pass on) the temporary folders and the store's unfinished writes
 * of processes that were killed. Bytes go first and the flag after: a crash between the two leaves a task
 * the next pass finds again, never bytes no pass would look for. Downloads already answer 404 from
 * `files_expire_at` on, and deletes are idempotent, so two processes sweeping the same task do no harm.
 */
export class Sweeper {
  readonly #deps: SweeperDeps;
  /** The expired files' pass: one at a time, like the records' passes, and its failures logged. */
  readonly #files: Repeating;
  readonly #records: Repeating[] = [];
  /** When this process last searched for killed processes' temporary folders (never: 0, at the first pass). */
  #tempSweptAt = 0;

  constructor(deps: SweeperDeps) {
    this.#deps = deps;
    const { settleRecords, deleteUpstreamCopies, cancelUpstreamRuns, log } = deps;
    this.#files = new Repeating(
      () => this.sweepOnce(),
      (err) => log.warn({ err }, 'removing expired result files failed'),
    );
    if (settleRecords)
      this.#records.push(
        new Repeating(settleRecords, (err) => log.warn({ err }, 'settling due library records failed')),
      );
    if (deleteUpstreamCopies)
      this.#records.push(
        new Repeating(deleteUpstreamCopies, (err) =>
          log.warn({ err }, 'deleting provider copies of deleted library records failed'),
        ),
      );
    if (cancelUpstreamRuns)
      this.#records.push(
        new Repeating(cancelUpstreamRuns, (err) =>
          log.warn({ err }, 'canceling the upstream runs of canceled tasks failed'),
        ),
      );
  }

  start(intervalMs = 60_000, recordsIntervalMs = 5_000): void {
    this.#files.start(intervalMs);
    for (const job of this.#records) job.start(recordsIntervalMs);
  }

  stop(): void {
    this.#files.stop();
    for (const job of this.#records) job.stop();
  }

  /** One pass; resolves with the number of tasks whose files were removed. */
  async sweepOnce(batch = 500): Promise<number> {
    const { db, clock, storage, idempotency } = this.#deps;
    const now = clock.now().toISOString();
    const due = await db.db
      .selectFrom('tasks')
      .select('id')
      .where('files_expired', '=', 0)
      // The condition of the partial index (migration 0019), named so every engine takes it.
      .where('files_expire_at', 'is not', null)
      .where('files_expire_at', '<=', now)
      .limit(batch)
      .execute();
    let removed = 0;
    for (const { id } of due) {
      try {
        const artifacts = await db.db
          .selectFrom('artifacts')
          .select('storage_key')
          .where('task_id', '=', id)
          .execute();
        await Promise.all(artifacts.map((a) => storage.delete(a.storage_key)));
        // And what no artifact names: the files of a run killed between storing them and its commit
        // (its per-run keys are recorded nowhere), which nothing else would ever remove.
        await storage.deleteFolder(`results/${id}`);
        const flipped = await db.db
          .updateTable('tasks')
          .set({ files_expired: 1 })
          .where('id', '=', id)
          .where('files_expired', '=', 0)
          .executeTakeFirst();
        if (Number(flipped.numUpdatedRows) > 0) removed += 1;
      } catch (error) {
        // Left as it is, the task comes up again in the next pass.
        this.#deps.log.warn({ err: error, taskId: id }, 'removing expired result files failed');
      }
    }
    await idempotency.sweep();
    // Left as it is, a failed upload comes up again in the next pass; the others go in this one.
    await this.#deps.uploads.sweep(batch, (err, uploadId) =>
      this.#deps.log.warn({ err, uploadId }, 'removing an expired upload failed'),
    );
    await this.#deps.sweepPeople?.();
    // Temporary folders a killed process left (an upload cut off mid-body, a run's outputs) and its writes
    // into the store cut off before their rename: removed here, as nothing else would ever look for them
    // (lib/temp-folders.ts, FileStore.removeAbandonedWrites).
    if (Date.now() - this.#tempSweptAt >= ORPHAN_TEMP_SWEEP_MS) {
      this.#tempSweptAt = Date.now();
      await removeOrphanTempFolders().catch((err: unknown) =>
        this.#deps.log.warn({ err }, 'removing the temporary folders of ended processes failed'),
      );
      await storage
        .removeAbandonedWrites?.()
        .catch((err: unknown) =>
          this.#deps.log.warn({ err }, 'removing the stored files of abandoned writes failed'),
        );
    }
    await this.#deps.callbacks?.sweep(new Date(clock.now().getTime() - CALLBACKS_KEPT_MS), batch);
    return removed;
  }
}
