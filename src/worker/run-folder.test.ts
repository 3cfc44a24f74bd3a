import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { RunFolders } from './run-folder.ts';

describe('RunFolders', () => {
  it('makes nothing for a run that never asks for its folder', async () => {
    const folders = new RunFolders(2);
    const folder = folders.forRun();
    await folder.release();
    await folders.clear();
  });

  it('gives a folder left empty to the next run and removes it when cleared', async () => {
    const folders = new RunFolders(2);
    const first = folders.forRun();
    const dir = await first.path();
    assert.equal(await first.path(), dir);
    await first.release();
    const second = folders.forRun();
    assert.equal(await second.path(), dir);
    await second.release();
    await folders.clear();
    assert.equal(fs.existsSync(dir), false);
  });

  it('removes a folder with files in it, and one whose writer never came back', async () => {
    const folders = new RunFolders(2);
    const full = folders.forRun();
    const a = await full.path();
    await full.writing(async () => {
      fs.mkdirSync(path.join(a, 'nested'));
      fs.writeFileSync(path.join(a, 'nested', 'file.bin'), 'x');
    });
    await full.release();
    assert.equal(fs.existsSync(a), false);

    const abandoned = folders.forRun();
    const b = await abandoned.path();
    await assert.rejects(abandoned.writing(() => Promise.reject(new Error('timed out'))));
    await abandoned.release();
    assert.equal(fs.existsSync(b), false);
  });

  it('keeps no more folders than asked', async () => {
    const folders = new RunFolders(1);
    const runs = [folders.forRun(), folders.forRun()];
    const dirs = await Promise.all(runs.map((r) => r.path()));
    await Promise.all(runs.map((r) => r.release()));
    assert.equal(dirs.filter((d) => fs.existsSync(d)).length, 1);
    await folders.clear();
    assert.equal(dirs.filter((d) => fs.existsSync(d)).length, 0);
  });
});
