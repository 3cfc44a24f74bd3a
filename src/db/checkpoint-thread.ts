/**
 * The body of the WAL checkpointer thread (`checkpointer.ts`): its own connection to the SQLite file,
 * copying committed pages from the WAL into the database every `intervalMs` with a PASSIVE checkpoint,
 * which never waits for and never blocks the service's readers and writer.
 */
import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';

const { file, intervalMs } = workerData as { file: string; intervalMs: number };
const db = new SqliteDatabase(file, { fileMustExist: true });
// Another checkpointer (another process on the file) holding the lock is no error: the next tick tries again.
db.pragma('busy_timeout = 0');

const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // SQLITE_BUSY or a file being closed: nothing to do until the next tick.
  }
}, intervalMs);

parentPort?.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort?.close();
});
