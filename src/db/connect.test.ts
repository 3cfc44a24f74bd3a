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
