import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import { BufferPool, FileBody } from './file-body.ts';

describe('FileBody', () => {
  let dir: string;
  let file: string;
  // Several large buffers' worth, not a multiple of either buffer size.
  const bytes = randomBytes(3 * 512 * 1024 + 12_345);

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'file-body-'));
    file = path.join(dir, 'blob');
    fs.writeFileSync(file, bytes);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const open = async (start: number, end: number) => new FileBody(await fsp.open(file, 'r'), start, end);

  /** Serves `body()` on a loopback server and returns what a client receives. */
  async function served(body: () => Promise<FileBody>, readSlowly = false): Promise<Buffer> {
    const server = http.createServer((_request, response) => {
      body().then((stream) => stream.pipe(response));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    try {
      return await new Promise<Buffer>((resolve, reject) => {
        http.get({ port, host: '127.0.0.1' }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            if (readSlowly) {
              response.pause();
              setTimeout(() => response.resume(), 2);
            }
          });
          response.on('end', () => resolve(Buffer.concat(chunks)));
          response.on('error', reject);
        });
      });
    } finally {
      server.close();
    }
  }

  it('sends the whole file and a range through an HTTP response', async () => {
    assert.ok((await served(() => open(0, bytes.length - 1))).equals(bytes));
    assert.ok((await served(() => open(700_000, 1_400_000))).equals(bytes.subarray(700_000, 1_400_001)));
  });

  it('sends the same bytes to a client that reads slowly', async () => {
    assert.ok((await served(() => open(0, bytes.length - 1), true)).equals(bytes));
  });

  it('reads into a new buffer each time for any other consumer', async () => {
    const chunks: Buffer[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        chunks.push(chunk);
        callback();
      },
    });
    await pipeline(await open(10, bytes.length - 10), sink);
    assert.ok(Buffer.concat(chunks).equals(bytes.subarray(10, bytes.length - 9)));
    // Kept chunks are distinct memory: none was overwritten by a later read.
    assert.equal(new Set(chunks.map((c) => c.buffer)).size, chunks.length);
  });

  it('fails when the file is shorter than the asked range', async () => {
    const body = await open(bytes.length - 10, bytes.length + 100);
    await assert.rejects(body.toArray(), /shorter than its recorded size/);
  });

  it('closes the file when destroyed before it was read', async () => {
    const body = await open(0, 100);
    body.destroy();
    await once(body, 'close');
  });
});

describe('BufferPool', () => {
  it('reuses given buffers, makes no more than its limit, and forgets dropped ones', () => {
    const pool = new BufferPool({ size: 16, limit: 2, keep: 1 });
    const a = pool.take();
    const b = pool.take();
    assert.ok(a && b);
    assert.equal(pool.take(), null);
    pool.give(a);
    assert.equal(pool.take(), a);
    pool.drop();
    assert.ok(pool.take());
  });
});
