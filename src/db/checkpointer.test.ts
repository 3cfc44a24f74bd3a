import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import SqliteDatabase from 'better-sqlite3';
import { CHECKPOINT_POLICY, type CheckpointPolicy, startCheckpointer } from './checkpointer.ts';
import { createDb, migrateToLatest } from './connect.ts';

// The checkpoint thread (checkpointer.ts) copies committed pages from the WAL into the database file on
// its own: SQLite's own checkpoint waits for 20,000 pages, so without the thread these few writes would stay
// in the WAL and the database file would not grow.

test('the checkpoint thread copies committed writes from the WAL into the database file', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-checkpoint-'));
  const file = path.join(dir, 'c.db');
  const db = createDb(`sqlite:${file}`);
  try {
    await migrateToLatest(db);
    await sleep(600);
    const before = fs.statSync(file).size;
    const rows = Array.from({ length: 300 }, (_, i) => ({ name: `k${i}-${'x'.repeat(1000)}`, value: i }));
    await db.db.insertInto('epochs').values(rows).execute();
    // The file may first grow by the migrations' own pages, if the thread had not copied them yet: wait for
    // the rows themselves, within a deadline generous for a loaded machine.
    const grown = () => fs.statSync(file).size > before + 200_000;
    const deadline = Date.now() + 10_000;
    while (!grown() && Date.now() < deadline) await sleep(50);
    assert.ok(grown(), 'about 300 KB of rows reached the database file');
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the checkpoint thread cuts the WAL back to nothing once the writes stop', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-checkpoint-'));
  const file = path.join(dir, 'c.db');
  const db = createDb(`sqlite:${file}`);
  try {
    await migrateToLatest(db);
    // A burst of about 2 MB in one commit: SQLite reuses the WAL from its start after a checkpoint, but
    // never makes the file smaller.
    const rows = Array.from({ length: 2_000 }, (_, i) => ({ name: `k${i}-${'x'.repeat(1000)}`, value: i }));
    await db.db.insertInto('epochs').values(rows).execute();
    assert.ok(fs.statSync(`${file}-wal`).size > 1_000_000, 'the burst went through the WAL');
    const empty = () => fs.statSync(`${file}-wal`).size === 0;
    const deadline = Date.now() + 10_000;
    while (!empty() && Date.now() < deadline) await sleep(50);
    assert.ok(empty(), `the WAL is ${fs.statSync(`${file}-wal`).size} bytes after the writes stopped`);
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** The WAL's frames and how many are copied, from the wal-index header (https://sqlite.org/walformat.html). */
function walHeader(file: string): { log: number; copied: number } {
  const header = fs.readFileSync(`${file}-shm`).subarray(0, 100);
  const read = (at: number) => (os.endianness() === 'LE' ? header.readUInt32LE(at) : header.readUInt32BE(at));
  return { log: read(16), copied: read(96) };
}

/** A raw handle on a new file in WAL mode with one table, and its checkpointer under `policy`. */
function openWithPolicy(policy: Partial<CheckpointPolicy>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-checkpoint-'));
  const file = path.join(dir, 'c.db');
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.exec('create table pages (id integer primary key, body blob not null)');
  const stop = startCheckpointer(sqlite, file, { ...CHECKPOINT_POLICY, tickMs: 20, ...policy });
  const insert = sqlite.prepare('insert into pages (body) values (?)');
  /** One commit of `rows` rows of 3,000 bytes: about one WAL frame each. */
  const write = (rows: number) =>
    sqlite.transaction(() => {
      for (let i = 0; i < rows; i++) insert.run(Buffer.alloc(3_000, i));
    })();
  return {
    file,
    write,
    async close() {
      await stop();
      sqlite.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

test('the thread leaves a WAL under its frames alone, and copies one past them without waiting', async () => {
  // Neither age nor quiet starts a checkpoint within the test: only the WAL's size can.
  const db = openWithPolicy({ frames: 400, maxAgeMs: 600_000, quietMs: 600_000, truncateAfterMs: 600_000 });
  try {
    db.write(100);
    await sleep(400);
    const early = walHeader(db.file);
    assert.ok(early.log >= 100, `${early.log} frames in the WAL`);
    assert.equal(early.copied, 0, 'nothing copied while the WAL holds fewer frames than the policy');
    db.write(400);
    const deadline = Date.now() + 10_000;
    while (walHeader(db.file).copied === 0 && Date.now() < deadline) await sleep(20);
    assert.ok(walHeader(db.file).copied >= 500, 'the WAL past its frames was copied');
  } finally {
    await db.close();
  }
});

test('under continuous writes the WAL starts over long before the fallback on commit', async () => {
  // Every commit adds frames, so no checkpoint of the thread ever catches up alone: the service's
  // connection copies the frames left, and its next write starts the WAL from its beginning.
  const db = openWithPolicy({ frames: 300, maxAgeMs: 600_000, quietMs: 600_000, leftFrames: 0 });
  try {
    let highest = 0;
    let startedOver = false;
    const deadline = Date.now() + 20_000;
    while (!startedOver && Date.now() < deadline) {
      db.write(10);
      const { log } = walHeader(db.file);
      startedOver = log < highest;
      highest = Math.max(highest, log);
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.ok(startedOver, `the WAL grew to ${highest} frames without starting over`);
    // Without the service connection's copy the WAL starts over only at the fallback. The thread syncs the
    // database file before it asks for that copy, which takes longer on a loaded disk: half the fallback.
    assert.ok(
      highest < CHECKPOINT_POLICY.fallbackPages / 2,
      `${highest} frames: far from the fallback's ${CHECKPOINT_POLICY.fallbackPages}`,
    );
  } finally {
    await db.close();
  }
});
