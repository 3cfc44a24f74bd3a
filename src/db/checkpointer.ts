import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';

/** How often the thread checkpoints (milliseconds). */
const CHECKPOINT_INTERVAL_MS = 250;
/**
 * SQLite's own checkpoint on commit, kept as a fallback for a WAL the thread does not keep up with
 * (pages of 4 KiB: 16 MiB).
 */
const FALLBACK_AUTOCHECKPOINT_PAGES = 4_000;

/**
 * Moves WAL checkpoints off the event loop. By default SQLite checkpoints inside the commit that takes the
 * WAL past 1,000 pages: that commit copies every page into the database file and syncs it, which was
 * about half of the time of a task creation's commit (docs/performance.md). A thread of its own with a
 * second connection checkpoints instead, with the same durability (WAL, synchronous=NORMAL: the WAL is
 * synced at each checkpoint). Returns a function that stops the thread.
 */
export function startCheckpointer(sqlite: SqliteDatabase.Database, file: string): () => Promise<void> {
  sqlite.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
  const worker = new Worker(new URL('./checkpoint-thread.ts', import.meta.url), {
    workerData: { file, intervalMs: CHECKPOINT_INTERVAL_MS },
  });
  // A failed thread leaves SQLite's own checkpoints on commit: slower, never wrong.
  worker.on('error', () => sqlite.pragma('wal_autocheckpoint = 1000'));
  worker.unref();
  let stopped: Promise<void> | null = null;
  return () => {
    stopped ??= new Promise<void>((resolve) => {
      // Referenced again while it stops: a caller awaiting the close must not see the process end first.
      worker.ref();
      // A thread that does not end on its own is ended: closing the service never waits long on it.
      const timer = setTimeout(() => void worker.terminate(), 2_000);
      worker.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      worker.postMessage('stop');
    });
    return stopped;
  };
}
