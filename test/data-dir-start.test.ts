/**
 * A DATA_DIR the SQLite database cannot live in stops the real process at start with exit 1 and a message
 * naming the database and DATA_DIR, as a bad setting does, not a stack trace: a file where the folder
 * should be, and a service.db that is not a database.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { freePort, runToExit } from './processes.ts';

let dir: string;

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-data-dir-'));
});
after(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

async function start(dataDir: string): Promise<{ code: number | null; out: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of ['GENERATORS_FILE', 'DATABASE_URL', 'STORAGE_URL']) delete env[key];
  return runToExit('src/main.ts', { ...env, PORT: String(await freePort()), DATA_DIR: dataDir });
}

test('a DATA_DIR that is a file, or holds a service.db that is not a database, stops the start plainly', async () => {
  const file = path.join(dir, 'a-file');
  fs.writeFileSync(file, 'not a folder');
  const junk = path.join(dir, 'junk');
  fs.mkdirSync(junk);
  fs.writeFileSync(path.join(junk, 'service.db'), 'not a database, not at all '.repeat(100));
  for (const [dataDir, code] of [
    [file, 'EEXIST'],
    [junk, 'SQLITE_NOTADB'],
  ] as const) {
    const started = await start(dataDir);
    assert.equal(started.code, 1, started.out);
    assert.match(started.out, /Configuration error: the SQLite database \S+service\.db cannot be used/);
    assert.match(started.out, new RegExp(`\\(${code}: .*DATA_DIR \\(${dataDir.replace(/[/.]/g, '\\$&')}\\)`));
    assert.doesNotMatch(started.out, /^\s+at /m, 'no stack trace');
    assert.doesNotMatch(started.out, /Listening on/);
  }
});
