import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
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
