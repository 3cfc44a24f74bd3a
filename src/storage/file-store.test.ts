import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { FileStore } from './file-store.ts';

describe('FileStore', () => {
  let root: string;
  let store: FileStore;
  before(async () => {
    root = await fsp.mkdtemp(path.join(os.tmpdir(), 'gta-file-store-'));
    store = new FileStore(root);
  });
  after(() => fsp.rm(root, { recursive: true, force: true }));

  const put = (key: string, text = 'x') => store.put(key, Readable.from([Buffer.from(text)]));
  const exists = (relative: string) =>
    fsp.stat(path.join(root, relative)).then(
      () => true,
      () => false,
    );

  test('a delete removes the folders it leaves empty, up to the root, and no folder still in use', async () => {
    await put('results/t1/r1/0');
    await put('results/t1/r1/1');
    await put('results/t2/r1/0');
    await store.delete('results/t1/r1/0');
    assert.equal(await exists('results/t1/r1'), true, 'another file is still there');
    await store.delete('results/t1/r1/1');
    assert.equal(await exists('results/t1'), false, "the task's folders go with its last file");
    assert.equal(await exists('results/t2/r1/0'), true);
    await store.delete('results/t2/r1/0');
    assert.equal(await exists('results'), false);
    assert.equal(await exists(''), true, 'never the root');
    await store.delete('results/t2/r1/0');
  });

  test('writes racing with deletes in one folder all land', async () => {
    for (let round = 0; round < 50; round += 1) {
      await put('race/a/old');
      const [written] = await Promise.all([put(`race/a/new${round}`, 'hello'), store.delete('race/a/old')]);
      assert.equal(written.sizeBytes, 5);
      assert.equal(await exists(`race/a/new${round}`), true, `round ${round}`);
      await store.delete(`race/a/new${round}`);
    }
    assert.equal(await exists('race'), false);
  });
});
