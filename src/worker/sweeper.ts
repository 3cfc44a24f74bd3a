import type { Db } from '../db/index.ts';
import type { Clock } from '../lib/clock.ts';
import type { BlobStore } from '../storage/index.ts';
import type { UploadService } from '../files/index.ts';
import type { IdempotencyStore } from '../tasks/idempotency.ts';

interface SweeperDeps {
  db: Db;
  clock: Clock;
  storage: BlobStore;
  idempotency: IdempotencyStore;
  uploads: UploadService;
}

/**
 * Removes what has outlived its retention: result files past `files_expire_at` (then the task shows
 * `files_expired: true` and downloads answer 404 artifact_expired) and old idempotency keys. Each
 * expired task is flipped by a conditional update first, so with several processes only one deletes it.
 */
export class Sweeper {
  readonly #deps: SweeperDeps;
  #timer: NodeJS.Timeout | null = null;

  constructor(deps: SweeperDeps) {
    this.#deps = deps;
  }

  start(intervalMs = 60_000): void {
    this.#timer ??= setInterval(() => void this.sweepOnce().catch(() => {}), intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** One pass; resolves with the number of tasks whose files were removed. */
  async sweepOnce(batch = 500): Promise<number> {
    const { db, clock, storage, idempotency } = this.#deps;
    const now = clock.now().toISOString();
    const due = await db.db
      .selectFrom('tasks')
      .select('id')
      .where('files_expired', '=', 0)
      .where('files_expire_at', '<=', now)
      .limit(batch)
      .execute();
    let removed = 0;
    for (const { id } of due) {
      const flipped = await db.db
        .updateTable('tasks')
        .set({ files_expired: 1 })
        .where('id', '=', id)
        .where('files_expired', '=', 0)
        .executeTakeFirst();
      if (Number(flipped.numUpdatedRows) === 0) continue;
      const artifacts = await db.db
        .selectFrom('artifacts')
        .select('storage_key')
        .where('task_id', '=', id)
        .execute();
      await Promise.all(artifacts.map((a) => storage.delete(a.storage_key)));
      removed += 1;
    }
    await idempotency.sweep();
    await this.#deps.uploads.sweep();
    return removed;
  }
}
