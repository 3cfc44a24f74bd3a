/**
 * The demo account of a first start (CONTRACT §1) is made once, however many processes start together on
 * an empty database (issue 10.11). SQLite, and PostgreSQL when TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { createDb } from '../src/db/index.ts';
import { freshPostgres } from './databases.ts';
import { exited, freePort, type Server, startServer } from './processes.ts';

const SERVER = process.env.TEST_DATABASE_URL;

/** An empty database of the dialect under test, and how to remove it. */
async function emptyDatabase(dir: string): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!SERVER) return { url: `sqlite:${path.join(dir, 'service.db')}`, drop: async () => {} };
  return freshPostgres(SERVER, 'gta_demo');
}

async function countAccounts(url: string): Promise<number> {
  const db = createDb(url);
  try {
    const rows = await db.db.selectFrom('accounts').select('id').execute();
    return rows.length;
  } finally {
    await db.close();
  }
}

test('[10.11] processes starting together on an empty database make one demo account', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-demo-'));
  const database = await emptyDatabase(dir);
  const servers: Server[] = [];
  try {
    const env = {
      DATABASE_URL: database.url,
      DATA_DIR: dir,
      WORKER: 'off',
      LOG_LEVEL: 'warn',
      RENDER_THREADS: '0',
    };
    const ports = [await freePort(), await freePort(), await freePort()];
    const started = await Promise.allSettled(
      ports.map((port) => startServer({ ...env, PORT: String(port) })),
    );
    for (const result of started) if (result.status === 'fulfilled') servers.push(result.value);
    for (const result of started) {
      assert.equal(result.status, 'fulfilled', result.status === 'rejected' ? String(result.reason) : '');
    }
    const printed = servers.filter((s) => s.output().includes('Demo account')).length;
    assert.equal(printed, 1, 'one process prints the demo key');
    assert.equal(await countAccounts(database.url), 1);
  } finally {
    for (const server of servers) {
      server.child.kill('SIGTERM');
      await exited(server.child);
    }
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('[10.11] racing bootstraps on one PostgreSQL make one demo account', {
  skip: !SERVER && 'needs TEST_DATABASE_URL',
}, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-demo-'));
  const database = await emptyDatabase(dir);
  const config = loadConfig({ DATABASE_URL: database.url, DATA_DIR: dir, LOG_LEVEL: 'silent' });
  // Two containers are two processes' worth of pools, each racing itself too.
  const containers = [await createContainer(config), await createContainer(config)];
  try {
    const made = await Promise.all(
      [...containers, ...containers].map((c) => c.services.admin.ensureDemoAccount(1_000_000)),
    );
    assert.equal(made.filter((m) => m !== null).length, 1);
    assert.equal(await countAccounts(database.url), 1);
  } finally {
    for (const container of containers) await container.close();
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
