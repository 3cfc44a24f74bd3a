import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { createDb } from './connect.ts';

test('SQLite keeps its temporary storage, savepoint journals included, in memory', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-connect-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const db = createDb(`sqlite:${path.join(dir, 'service.db')}`);
  try {
    const rows = await sql<{ temp_store: number }>`pragma temp_store`.execute(db.db);
    // 2 = MEMORY (0 would be the build's default: a file under /var/tmp).
    assert.deepEqual(rows.rows, [{ temp_store: 2 }]);
  } finally {
    await db.close();
  }
});

test('PostgreSQL on the same machine is reached through its Unix socket (`host` in the URL)', async (t) => {
  const url = process.env.TEST_DATABASE_URL;
  // The socket folder of Debian's clusters (scripts/test-services.sh makes one).
  const folder = '/var/run/postgresql';
  if (!url) return t.skip('PostgreSQL only (TEST_DATABASE_URL)');
  const port = new URL(url).port || '5432';
  if (!fs.existsSync(path.join(folder, `.s.PGSQL.${port}`))) return t.skip(`no socket in ${folder}`);
  const socketUrl = new URL(url);
  socketUrl.hostname = 'localhost';
  socketUrl.searchParams.set('host', folder);
  const db = createDb(socketUrl.toString());
  try {
    const { rows } = await sql<{ local: boolean }>`select inet_server_addr() is null as local`.execute(db.db);
    assert.deepEqual(rows, [{ local: true }], 'a Unix socket connection has no server address');
  } finally {
    await db.close();
  }
});
