import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';

/** How often the thread checkpoints (milliseconds). */
const CHECKPOINT_INTERVAL_MS = 250;
/** Ticks without a write after which the thread truncates the WAL (1 s): never while writes go on. */
const IDLE_TICKS_BEFORE_TRUNCATE = 4;
/**
 * SQLite's own checkpoint on commit, kept as a fallback for a WAL the thread does not keep up with
 * (pages of 4 KiB: 80 MiB). Under continuous writes the thread's PASSIVE checkpoints never copy the frames
 * committed while they run, so only this one lets the WAL start over: it syncs both files on the event
 * loop. At 4,000 pages it ran every few hundred milliseconds of creations and cost about a quarter of
 * their commit time (docs/performance.md).
 */
const FALLBACK_AUTOCHECKPOINT_PAGES = 20_000;

/**
 * The thread's body, plain JavaScript run with `eval`: its own connection to the SQLite file, copying
 * committed pages from the WAL into the database every `intervalMs` with a PASSIVE checkpoint, which never
 * waits for and never blocks the service's readers and writer; after a second without writes, one TRUNCATE
 * checkpoint, which holds the write lock only for the moment of cutting the copied WAL. Not a .ts file of
 * its own: Node would load its TypeScript stripper into the thread, which took the thread's memory from
 * about 9 MB to 23 MB.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SqliteDatabase = require(workerData.driver);
const db = new SqliteDatabase(workerData.file, { fileMustExist: true });
// Another checkpointer (another process on the file) holding the lock is no error: the next tick tries again.
db.pragma('busy_timeout = 0');
// The WAL's frames at the last tick, and for how many ticks in a row no write added any.
let lastLog = -1;
let idleTicks = 0;
const timer = setInterval(() => {
  try {
    const [{ log, checkpointed }] = db.pragma('wal_checkpoint(PASSIVE)');
    idleTicks = log > 0 && checkpointed === log && log === lastLog ? idleTicks + 1 : 0;
    lastLog = log;
    // SQLite reuses a WAL from its start after a checkpoint but never shrinks it: a burst's size (up to the
    // fallback's 80 MiB) would stay on disk for good. Once all of it is copied and no write came for
    // workerData.idleTicks ticks, it is cut to nothing; a reader still on it makes that SQLITE_BUSY (never a
    // wait: busy_timeout 0), and a later tick tries again.
    if (idleTicks >= workerData.idleTicks) {
      idleTicks = 0;
      db.pragma('wal_checkpoint(TRUNCATE)');
    }
  } catch {
    // SQLITE_BUSY or a file being closed: nothing to do until the next tick.
  }
}, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * Moves WAL checkpoints off the event loop. By default SQLite checkpoints inside the commit that takes the
 * WAL past 1,000 pages: that commit copies every page into the database file and syncs it, which was
 * about half of the time of a task creation's commit (docs/performance.md). A thread of its own with a
 * second connection checkpoints instead, with the same durability (WAL, synchronous=NORMAL: the WAL is
 * synced at each checkpoint). Returns a function that stops the thread.
 */
export function startCheckpointer(sqlite: SqliteDatabase.Database, file: string): () => Promise<void> {
  sqlite.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
  const worker = new Worker(THREAD_SOURCE, {
    eval: true,
    workerData: {
      file,
      intervalMs: CHECKPOINT_INTERVAL_MS,
      idleTicks: IDLE_TICKS_BEFORE_TRUNCATE,
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
    },
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
