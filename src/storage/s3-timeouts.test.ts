import assert from 'node:assert/strict';
import net from 'node:net';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { createBlobStore } from './index.ts';
import { S3Store } from './s3-store.ts';
import { parseS3Url } from './s3-url.ts';
import { StorageError } from './storage-error.ts';

/** An "S3 server" that accepts connections and reads requests but never answers. */
async function silentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('S3Store against a server that never answers', () => {
  let server: { port: number; close: () => Promise<void> };
  let url = '';

  before(async () => {
    server = await silentServer();
    url = `s3://bucket-a?endpoint=http://127.0.0.1:${server.port}&accessKeyId=K&secretAccessKey=S`;
  });

  after(() => server.close());

  // The test's own timeout is the failure: without bounds every call below waits forever.
  test('[10 faults] every S3 call is bounded: a hanging server ends in a StorageError', {
    timeout: 30_000,
  }, async () => {
    const store = new S3Store(parseS3Url(url), { requestTimeoutMs: 300, idleTimeoutMs: 300 });
    try {
      await assert.rejects(store.stat('results/a/0'), StorageError);
      await assert.rejects(store.get('results/a/0'), StorageError);
      await assert.rejects(store.delete('results/a/0'), StorageError);
      await assert.rejects(store.put('results/a/0', Readable.from([Buffer.from('abc')])), StorageError);
    } finally {
      store.close();
    }
  });

  test('[10 faults] STORAGE_URL carries the S3 timeouts', { timeout: 30_000 }, async () => {
    const location = parseS3Url(`${url}&requestTimeout=300&idleTimeout=300&connectTimeout=200`);
    assert.deepEqual(
      [location.connectTimeoutMs, location.requestTimeoutMs, location.idleTimeoutMs],
      [200, 300, 300],
    );
    assert.throws(() => parseS3Url(`${url}&requestTimeout=soon`), /requestTimeout/);
    const store = (await createBlobStore(`${url}&requestTimeout=300&idleTimeout=300`)) as S3Store;
    try {
      await assert.rejects(store.stat('results/a/0'), StorageError);
    } finally {
      store.close();
    }
  });
});
