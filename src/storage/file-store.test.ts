import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
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

  test("deleteFolder removes every run's files of a folder, and the folders it leaves empty", async () => {
    await put('results/t1/r1/0');
    await put('results/t1/r2/0');
    await put('results/t10/r1/0');
    await store.deleteFolder('results/t1');
    assert.equal(await exists('results/t1'), false);
    assert.equal(await exists('results/t10/r1/0'), true, 'a folder it only begins');
    await store.deleteFolder('results/t1');
    await store.deleteFolder('results/t10');
    assert.equal(await exists('results'), false);
    assert.equal(await exists(''), true, 'never the root');
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
  test("a write whose mkdir loses its new parent folder to a delete's cleanup still lands", async (t) => {
    // The interleaving seen under load: mkdir -p makes `race2`, a delete's cleanup removes that (still
    // empty) folder, and mkdir's next step, `race2/a`, fails with ENOENT. Played here in that order.
    const mkdir = fsp.mkdir;
    let calls = 0;
    t.mock.method(fsp, 'mkdir', async (...args: Parameters<typeof fsp.mkdir>) => {
      calls += 1;
      if (calls > 1) return mkdir(...args);
      await mkdir(path.join(root, 'race2'));
      await fsp.rmdir(path.join(root, 'race2'));
      throw Object.assign(new Error(`ENOENT: no such file or directory, mkdir '${args[0]}'`), {
        code: 'ENOENT',
      });
    });
    const written = await put('race2/a/new', 'hello');
    assert.equal(written.sizeBytes, 5);
    assert.equal(calls, 2);
    assert.equal(await exists('race2/a/new'), true);
    await store.delete('race2/a/new');
  });

  test("a killed process's unfinished writes are removed, a write under way and stored files are not", async () => {
    const hour = 60 * 60_000;
    const now = Date.now();
    await put('results/t3/r1/0');
    await put('uploads/u1');
    // What a `put` cut off by kill -9 leaves: its temporary file in the parts' folder, never renamed.
    const part = (uuid: string) => `.parts/${uuid}.part`;
    const write = async (relative: string, ageMs: number) => {
      const file = path.join(root, relative);
      await fsp.writeFile(file, 'partial');
      const at = new Date(now - ageMs);
      await fsp.utimes(file, at, at);
    };
    await write(part('01a22c53-740d-76e8-8ccb-2484a13f279e'), 2 * hour);
    await write(part('01a22c53-740d-76e8-8ccb-2484a13f2800'), 2 * hour);
    await write(part('01a22c53-740d-76e8-8ccb-2484a13f2801'), hour - 60_000);
    assert.equal(await store.removeAbandonedWrites(now), 2);
    assert.equal(await exists(part('01a22c53-740d-76e8-8ccb-2484a13f279e')), false);
    assert.equal(
      await exists(part('01a22c53-740d-76e8-8ccb-2484a13f2801')),
      true,
      'written to within the hour: perhaps under way',
    );
    assert.equal(await exists('results/t3/r1/0'), true);
    assert.equal(await exists('uploads/u1'), true);
    assert.equal(await store.removeAbandonedWrites(now + hour), 1);
    assert.equal(await exists('.parts'), true, 'the folder stays for the next writes');
    await put('uploads/u2');
    assert.equal(await exists('uploads/u2'), true);
  });

  test('a write under way is kept apart from the keys, and no key reaches it', async () => {
    const body = new PassThrough();
    const writing = store.put('apart/a/0', body);
    body.write('half');
    const partsDir = path.join(root, '.parts');
    const listParts = () => fsp.readdir(partsDir).catch(() => [] as string[]);
    for (let wait = 0; wait < 500 && (await listParts()).length === 0; wait += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const parts = await listParts();
    assert.equal(parts.length, 1);
    assert.match(parts[0] ?? '', /^[0-9a-f-]{36}\.part$/);
    assert.equal(await exists('apart'), false, 'nothing beside the key while it is written');
    const key = `.parts/${parts[0]}`;
    await assert.rejects(store.stat(key), /unsafe storage key/);
    await assert.rejects(store.get(key), /unsafe storage key/);
    await assert.rejects(store.delete(key), /unsafe storage key/);
    await assert.rejects(store.deleteFolder('.parts'), /unsafe storage key/);
    await assert.rejects(store.put(key, Readable.from([Buffer.from('x')])), /unsafe storage key/);
    body.end('done');
    assert.equal((await writing).sizeBytes, 8);
    assert.deepEqual(await fsp.readdir(path.join(root, '.parts')), []);
    assert.deepEqual(await fsp.readdir(path.join(root, 'apart/a')), ['0']);
    await store.delete('apart/a/0');
  });

  test('a write lands even when someone removed the parts folder', async () => {
    await fsp.rm(path.join(root, '.parts'), { recursive: true });
    await put('again/0', 'hello');
    assert.equal(await exists('again/0'), true);
    await store.delete('again/0');
  });
});
