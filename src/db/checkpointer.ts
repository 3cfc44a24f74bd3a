import { createRequire } from 'node:module';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';

/** When the thread copies the WAL into the database file, and when it syncs and cuts the WAL. */
export interface CheckpointPolicy {
  /** How often the thread looks at the WAL (milliseconds). */
  tickMs: number;
  /**
   * Frames not yet copied at which the thread checkpoints. A checkpoint writes each page once, however
   * many of the WAL's frames hold it: a creation changes its account's pages of `tasks (account_id, id)`
   * and `ledger_entries (account_id, created_at)`, so on a large database a checkpoint every 250 ms wrote
   * about one page of the database file per frame, and one every 32,768 frames (128 MiB) writes several
   * creations' changes to a page at once (docs/performance.md, "A twenty-first session").
   */
  frames: number;
  /** A WAL with frames not yet copied is checkpointed at least this often (milliseconds). */
  maxAgeMs: number;
  /** A WAL that took no frame for this long is checkpointed at once (milliseconds). */
  quietMs: number;
  /**
   * How often the WAL is synced to disk when frames came (milliseconds): with `synchronous=NORMAL` a
   * commit is safe from a power cut once the WAL is synced, which a checkpoint did every 250 ms before
   * checkpoints grew rare; the thread keeps that window.
   */
  syncMs: number;
  /** A WAL with no frame for this long, all of them copied, is cut to nothing (milliseconds). */
  truncateAfterMs: number;
  /**
   * Frames still not copied after a checkpoint (they came while it ran) that the thread copies again
   * rather than leave to the service's connection, which copies the rest between two of its own writes.
   */
  leftFrames: number;
  /**
   * SQLite's own checkpoint on commit, on the event loop: a fallback for a WAL the thread does not keep
   * up with, past three times `frames` (pages of 4 KiB: 384 MiB).
   */
  fallbackPages: number;
}

export const CHECKPOINT_POLICY: CheckpointPolicy = {
  tickMs: 50,
  frames: 32_768,
  maxAgeMs: 5_000,
  quietMs: 250,
  syncMs: 250,
  truncateAfterMs: 1_000,
  leftFrames: 512,
  fallbackPages: 3 * 32_768,
};

/**
 * The thread's body, plain JavaScript run with `eval`: its own connection to the SQLite file. Each tick it
 * reads how many frames the WAL holds and how many are copied from the wal-index header in the `-shm`
 * file (https://sqlite.org/walformat.html: mxFrame at byte 16, nBackfill at byte 96, native byte order),
 * and copies them into the database with a PASSIVE checkpoint, which never waits for and never blocks the
 * service's readers and writer, once the policy says so. Under continuous writes a PASSIVE checkpoint never
 * copies the frames committed while it runs, so the WAL would never start over: the thread copies them
 * again while many are left, then asks the service's connection to copy the few left between two of its
 * writes, after which its next write starts the WAL from its beginning. Without a readable header (another
 * build of SQLite, a file being closed) it checkpoints every `syncMs`, as it did before. Not a .ts file of
 * its own: Node would load its TypeScript stripper into the thread, which took the thread's memory from
 * about 9 MB to 23 MB.
 */
const THREAD_SOURCE = `
const fs = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const SqliteDatabase = require(workerData.driver);
const policy = workerData.policy;
const db = new SqliteDatabase(workerData.file, { fileMustExist: true });
// Another checkpointer (another process on the file) holding the lock is no error: the next tick tries again.
db.pragma('busy_timeout = 0');
const header = Buffer.alloc(100);
const read32 = workerData.littleEndian ? (at) => header.readUInt32LE(at) : (at) => header.readUInt32BE(at);
let shm = null;
let wal = null;
let file = null;
function walState() {
  try {
    shm ??= fs.openSync(workerData.file + '-shm', 'r');
    if (fs.readSync(shm, header, 0, 100, 0) < 100 || read32(0) !== 3007000) return null;
    return { log: read32(16), copied: read32(96) };
  } catch {
    return null;
  }
}
// Frames left after a checkpoint: those committed while it ran (its own answer counts the WAL as it began).
function checkpoint() {
  db.pragma('wal_checkpoint(PASSIVE)');
  const after = walState();
  return after === null ? 0 : after.log - after.copied;
}
let lastLog = -1;
let changedAt = Date.now();
let checkpointedAt = Date.now();
let syncedLog = -1;
let syncedAt = Date.now();
let truncated = true;
const timer = setInterval(() => {
  try {
    const now = Date.now();
    const state = walState();
    // No readable header: a checkpoint every syncMs, which syncs the WAL too, as before the policy.
    if (state === null) {
      if (now - checkpointedAt >= policy.syncMs) {
        checkpointedAt = now;
        db.pragma('wal_checkpoint(PASSIVE)');
      }
      return;
    }
    const { log } = state;
    if (log !== lastLog) {
      lastLog = log;
      changedAt = now;
      truncated = false;
    }
    const pending = log - state.copied;
    const due =
      pending >= policy.frames ||
      (pending > 0 && (now - checkpointedAt >= policy.maxAgeMs || now - changedAt >= policy.quietMs));
    if (due) {
      checkpointedAt = now;
      // A checkpoint syncs the WAL before it copies.
      syncedLog = log;
      syncedAt = now;
      let left = checkpoint();
      for (let pass = 0; pass < 3 && left > policy.leftFrames; pass++) left = checkpoint();
      if (left > 0) {
        // SQLite syncs the database file only in a checkpoint that copies the whole WAL: the pages these
        // passes copied would be synced by the service connection's copy of the rest, on its event loop
        // (75-165 ms at 1,000,000 tasks, docs/performance.md). They are synced here first.
        try {
          file ??= fs.openSync(workerData.file, 'r');
          fs.fsyncSync(file);
        } catch {
          // The service connection's copy syncs them, as before.
        }
        parentPort.postMessage('finish');
      }
    } else if (log !== syncedLog && now - syncedAt >= policy.syncMs) {
      syncedLog = log;
      syncedAt = now;
      wal ??= fs.openSync(workerData.file + '-wal', 'r');
      fs.fsyncSync(wal);
    }
    // SQLite reuses a WAL from its start after a checkpoint but never shrinks it: a burst's size would stay
    // on disk for good. Once all of it is copied and no write came for a while, it is cut to nothing; a
    // reader still on it makes that SQLITE_BUSY (never a wait: busy_timeout 0), and a later tick tries again.
    if (!truncated && pending === 0 && now - changedAt >= policy.truncateAfterMs) {
      db.pragma('wal_checkpoint(TRUNCATE)');
      truncated = true;
      lastLog = 0;
    }
  } catch {
    // SQLITE_BUSY or a file being closed: nothing to do until the next tick.
  }
}, policy.tickMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  for (const fd of [shm, wal, file]) if (fd !== null) fs.closeSync(fd);
  db.close();
  parentPort.close();
});
`;

/**
 * Moves WAL checkpoints off the event loop. By default SQLite checkpoints inside the commit that takes the
 * WAL past 1,000 pages: that commit copies every page into the database file and syncs it, which was
 * about half of the time of a task creation's commit (docs/performance.md). A thread of its own with a
 * second connection checkpoints instead, with the same durability (WAL, synchronous=NORMAL: the thread
 * syncs the WAL as often as before). Returns a function that stops the thread.
 */
export function startCheckpointer(
  sqlite: SqliteDatabase.Database,
  file: string,
  policy: CheckpointPolicy = CHECKPOINT_POLICY,
): () => Promise<void> {
  sqlite.pragma(`wal_autocheckpoint = ${policy.fallbackPages}`);
  const worker = new Worker(THREAD_SOURCE, {
    eval: true,
    workerData: {
      file,
      policy,
      littleEndian: os.endianness() === 'LE',
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
    },
  });
  // A failed thread leaves SQLite's own checkpoints on commit: slower, never wrong.
  worker.on('error', () => sqlite.pragma('wal_autocheckpoint = 1000'));
  // The thread's checkpoint left the frames that came while it ran: copied here, between two writes of
  // this connection (never inside its transaction), so that the next write starts the WAL over. Busy (the
  // thread or another process checkpointing) is no error: the fallback on commit stays.
  worker.on('message', () => {
    if (!sqlite.open || sqlite.inTransaction) return;
    try {
      sqlite.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // A statement still running on the connection: the next checkpoint's message tries again.
    }
  });
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
