import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { makeTempFolder, removeOrphanTempFolders } from './temp-folders.ts';

const HOUR = 60 * 60_000;

/** The id of a process that has ended: a child that ran and exited. */
function endedPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  assert.equal(child.status, 0);
  return child.pid ?? 0;
}

test('folders of ended processes go once they are an hour old; live processes keep theirs', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'temp-sweep-'));
  try {
    const mine = await makeTempFolder('run', root);
    assert.match(path.basename(mine), new RegExp(`^gta-run-${process.pid}-`));
    const dead = endedPid();
    const orphan = path.join(root, `gta-upload-${dead}-abc123`);
    fs.mkdirSync(orphan);
    fs.writeFileSync(path.join(orphan, 'body'), 'half an upload');
    const fresh = path.join(root, `gta-input-${dead}-def456`);
    fs.mkdirSync(fresh);
    const unnamed = path.join(root, 'gta-artifact-XyZ123');
    fs.mkdirSync(unnamed);
    const foreign = path.join(root, 'gta-bench-app-123');
    fs.mkdirSync(foreign);
    const old = (Date.now() - 2 * HOUR) / 1000;
    for (const dir of [mine, orphan, unnamed, foreign]) fs.utimesSync(dir, old, old);

    // An hour later: the ended process's old folder goes; its fresh one, this process's (however old), a
    // folder named without a pid (a day is its bound) and folders that are not the service's stay.
    assert.equal(await removeOrphanTempFolders(root), 1);
    assert.equal(fs.existsSync(orphan), false);
    for (const dir of [mine, fresh, unnamed, foreign]) assert.ok(fs.existsSync(dir), dir);

    // A day later the folder without a pid goes too.
    assert.equal(await removeOrphanTempFolders(root, Date.now() + 24 * HOUR), 2);
    assert.equal(fs.existsSync(unnamed), false);
    assert.equal(fs.existsSync(fresh), false, 'an hour old by then');
    assert.ok(fs.existsSync(mine), "this process's own folder is never taken");
    assert.ok(fs.existsSync(foreign));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
