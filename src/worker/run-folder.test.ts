import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { RunFolder } from './run-folder.ts';

describe('RunFolder', () => {
  it('makes nothing until asked and removes nothing then', async () => {
    const folder = new RunFolder();
    await folder.remove();
  });

  it('makes one folder however often asked and removes it empty or full', async () => {
    const empty = new RunFolder();
    const a = await empty.path();
    assert.equal(await empty.path(), a);
    assert.ok(fs.statSync(a).isDirectory());
    await empty.remove();
    assert.equal(fs.existsSync(a), false);

    const full = new RunFolder();
    const b = await full.path();
    fs.mkdirSync(path.join(b, 'nested'));
    fs.writeFileSync(path.join(b, 'nested', 'file.bin'), 'x');
    await full.remove();
    assert.equal(fs.existsSync(b), false);
  });
});
