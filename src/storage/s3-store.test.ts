import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, mock, test } from 'node:test';
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { s3rverCredentials, startS3rver, type TestS3rver } from '../../test/s3rver.ts';
import type { BlobInfo } from './blob-store.ts';
import { createBlobStore } from './index.ts';
import { S3Store } from './s3-store.ts';
import { parseS3Url } from './s3-url.ts';
import { StorageError } from './storage-error.ts';

const MIB = 1024 * 1024;

async function readAll(body: Readable): Promise<Buffer> {
  return Buffer.concat(await body.toArray());
}

/** `total` pseudo-random bytes in 64 KiB chunks, hashed as they are produced; `finished` tells if the source was closed. */
function generated(total: number): { body: Readable; digest: () => string; state: { closed: boolean } } {
  const hash = createHash('sha256');
  const state = { closed: false };
  async function* chunks(): AsyncGenerator<Buffer> {
    try {
      for (let sent = 0; sent < total; ) {
        const chunk = randomBytes(Math.min(64 * 1024, total - sent));
        hash.update(chunk);
        sent += chunk.length;
        yield chunk;
      }
    } finally {
      state.closed = true;
    }
  }
  return { body: Readable.from(chunks()), digest: () => hash.digest('hex'), state };
}

/** An endless source, slow enough that an abort lands mid-upload; `pulled` counts bytes taken from it. */
function endless(delayMs: number): { body: Readable; state: { pulled: number; closed: boolean } } {
  const state = { pulled: 0, closed: false };
  async function* chunks(): AsyncGenerator<Buffer> {
    try {
      for (;;) {
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
        const chunk = randomBytes(256 * 1024);
        state.pulled += chunk.length;
        yield chunk;
      }
    } finally {
      state.closed = true;
    }
  }
  return { body: Readable.from(chunks()), state };
}

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('S3Store against s3rver', () => {
  let server: TestS3rver;
  let store: S3Store;

  before(async () => {
    server = await startS3rver();
    store = new S3Store(parseS3Url(server.url));
  });

  after(async () => {
    store.close();
    await server.stop();
  });

  test('a 200,000-byte round trip gives identical bytes back (no aws-chunked framing)', async () => {
    const data = randomBytes(200_000);
    const info = await store.put(
      'results/t1/0',
      Readable.from([data.subarray(0, 70_000), data.subarray(70_000)]),
      {
        contentType: 'image/png',
      },
    );
    assert.equal(info.sizeBytes, 200_000);
    assert.deepEqual(await store.stat('results/t1/0'), { sizeBytes: 200_000 });
    const object = await store.get('results/t1/0');
    assert.ok(object);
    assert.equal(object.sizeBytes, 200_000);
    assert.ok((await readAll(object.body)).equals(data));
  });

  test('range gets return the asked bytes and the total size', async () => {
    const data = randomBytes(200_000);
    await store.put('results/t2/0', Readable.from([data]));
    const cases: [number, number][] = [
      [0, 0],
      [0, 99],
      [1000, 1999],
      [199_990, 199_999],
    ];
    for (const [start, end] of cases) {
      const object = await store.get('results/t2/0', { start, end });
      assert.ok(object);
      assert.equal(object.sizeBytes, 200_000, `${start}-${end}`);
      assert.ok((await readAll(object.body)).equals(data.subarray(start, end + 1)), `${start}-${end}`);
    }
    const clamped = await store.get('results/t2/0', { start: 199_000, end: 500_000 });
    assert.ok(clamped);
    assert.ok((await readAll(clamped.body)).equals(data.subarray(199_000)));
    const past = await store.get('results/t2/0', { start: 300_000, end: 300_010 });
    assert.ok(past);
    assert.equal(past.sizeBytes, 200_000);
    assert.equal((await readAll(past.body)).length, 0);
  });

  test('a 20 MB streamed put goes multipart and reads back intact', async () => {
    const source = generated(20 * MIB);
    const send = mock.method(S3Client.prototype, 'send');
    let info: BlobInfo;
    try {
      info = await store.put('results/big/0', source.body, { contentType: 'video/mp4' });
    } finally {
      send.mock.restore();
    }
    const commands = send.mock.calls.map((call) => call.arguments[0]?.constructor.name);
    assert.deepEqual(commands.filter((name) => name === 'UploadPartCommand').length, 3, 'three 8 MiB parts');
    assert.ok(commands.includes('CompleteMultipartUploadCommand'));
    assert.equal(info.sizeBytes, 20 * MIB);
    assert.ok(source.state.closed);
    const expected = source.digest();
    assert.deepEqual(await store.stat('results/big/0'), { sizeBytes: 20 * MIB });

    const raw = new S3Client({
      endpoint: server.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: s3rverCredentials(),
    });
    try {
      const head = await raw.send(new HeadObjectCommand({ Bucket: server.bucket, Key: 'results/big/0' }));
      assert.equal(head.ContentType, 'video/mp4');
    } finally {
      raw.destroy();
    }

    const object = await store.get('results/big/0');
    assert.ok(object);
    assert.equal(object.sizeBytes, 20 * MIB);
    const hash = createHash('sha256');
    for await (const chunk of object.body) hash.update(chunk as Buffer);
    assert.equal(hash.digest('hex'), expected);
  });

  test('an empty body stores an empty object', async () => {
    assert.deepEqual(await store.put('results/empty/0', Readable.from([])), { sizeBytes: 0 });
    const object = await store.get('results/empty/0');
    assert.ok(object);
    assert.equal(object.sizeBytes, 0);
    assert.equal((await readAll(object.body)).length, 0);
  });

  test('put replaces, delete removes, and missing objects read as null', async () => {
    await store.put('uploads/x', Readable.from([Buffer.from('first version')]));
    await store.put('uploads/x', Readable.from([Buffer.from('second')]));
    const object = await store.get('uploads/x');
    assert.ok(object);
    assert.equal((await readAll(object.body)).toString(), 'second');
    await store.delete('uploads/x');
    assert.equal(await store.stat('uploads/x'), null);
    assert.equal(await store.get('uploads/x'), null);
    assert.equal(await store.get('uploads/x', { start: 0, end: 10 }), null);
    await store.delete('uploads/x');
    await store.delete('never/existed');
  });

  test("deleteFolder removes every run's files of a folder, under the URL prefix, and no other folder", async () => {
    const prefixed = new S3Store(parseS3Url(server.url.replace('?', '/tenant/b/?')));
    try {
      const put = (key: string) => prefixed.put(key, Readable.from([Buffer.from('x')]));
      await Promise.all([put('results/t1/r1/0'), put('results/t1/r2/0'), put('results/t10/r1/0')]);
      await prefixed.deleteFolder('results/t1');
      assert.equal(await prefixed.stat('results/t1/r1/0'), null);
      assert.equal(await prefixed.stat('results/t1/r2/0'), null);
      assert.deepEqual(await prefixed.stat('results/t10/r1/0'), { sizeBytes: 1 }, 'a folder it only begins');
      await prefixed.deleteFolder('results/t1');
      await prefixed.deleteFolder('results/t10');
      assert.equal(await prefixed.stat('results/t10/r1/0'), null);
    } finally {
      prefixed.close();
    }
  });

  test('aborting a put rejects with the signal reason, closes the source and stores nothing', async () => {
    const slow = endless(20);
    const controller = new AbortController();
    const putting = store.put('results/aborted/0', slow.body, { signal: controller.signal });
    await waitFor(() => slow.state.pulled > 0);
    const reason = new Error('task canceled');
    controller.abort(reason);
    await assert.rejects(putting, (error) => error === reason);
    await waitFor(() => slow.state.closed);
    assert.equal(await store.stat('results/aborted/0'), null);
  });

  test('aborting a multipart put mid-way stores nothing', async () => {
    const fast = endless(0);
    const controller = new AbortController();
    const putting = store.put('results/aborted/1', fast.body, { signal: controller.signal });
    await waitFor(() => fast.state.pulled > 12 * MIB);
    controller.abort();
    await assert.rejects(putting, { name: 'AbortError' });
    await waitFor(() => fast.state.closed);
    assert.equal(await store.stat('results/aborted/1'), null);
  });

  test('a put with an already aborted signal does not start', async () => {
    const source = generated(10);
    await assert.rejects(store.put('results/aborted/2', source.body, { signal: AbortSignal.abort() }), {
      name: 'AbortError',
    });
    assert.equal(await store.stat('results/aborted/2'), null);
  });

  test("a failing source rejects the put with the source's own error", async () => {
    const failure = new Error('renderer crashed');
    async function* broken(): AsyncGenerator<Buffer> {
      yield randomBytes(1000);
      throw failure;
    }
    await assert.rejects(
      store.put('results/broken/0', Readable.from(broken())),
      (error) => error === failure,
    );
    assert.equal(await store.stat('results/broken/0'), null);
  });

  test('keys live under the URL prefix; createBlobStore builds an S3Store', async () => {
    const prefixed = await createBlobStore(server.url.replace('?', '/tenant/a/?'));
    assert.ok(prefixed instanceof S3Store);
    try {
      await prefixed.put('results/p/0', Readable.from([Buffer.from('hello')]));
      assert.deepEqual(await store.stat('tenant/a/results/p/0'), { sizeBytes: 5 });
      assert.equal(await store.stat('results/p/0'), null);
      await prefixed.delete('results/p/0');
      assert.equal(await store.stat('tenant/a/results/p/0'), null);
    } finally {
      prefixed.close();
    }
  });

  test('a missing bucket is an error, not a missing object; createBucketIfMissing fixes it', async () => {
    const other = new S3Store(parseS3Url(server.url.replace(`s3://${server.bucket}`, 's3://other-bucket')));
    try {
      await assert.rejects(other.get('a'), StorageError);
      await assert.rejects(other.ping(), StorageError);
      await other.createBucketIfMissing();
      await other.createBucketIfMissing();
      await other.ping();
      assert.equal(await other.get('a'), null);
    } finally {
      other.close();
    }
  });

  test('stalled downloads leave connections for other calls', { timeout: 30_000 }, async () => {
    // Each download keeps its connection until its reader has it all: 60 stalled readers (public direct
    // links need no key) must not leave the next download, an upload or the readiness ping waiting.
    const quick = new S3Store(parseS3Url(server.url), { connectTimeoutMs: 1000, pingTimeoutMs: 2000 });
    const held: Readable[] = [];
    try {
      await quick.put('results/held/0', Readable.from([randomBytes(1000)]));
      for (let i = 0; i < 60; i++) {
        const object = await quick.get('results/held/0');
        assert.ok(object, `download ${i}`);
        held.push(object.body);
      }
      await quick.ping();
      await quick.put('results/held/1', Readable.from([Buffer.from('x')]));
      const object = await quick.get('results/held/1');
      assert.ok(object);
      assert.equal((await readAll(object.body)).toString(), 'x');
    } finally {
      for (const body of held) body.destroy();
      quick.close();
    }
  });
});

test('ping succeeds while the server runs and fails with a StorageError once it stops', async () => {
  const server = await startS3rver();
  let store: S3Store | undefined;
  try {
    store = new S3Store(parseS3Url(server.url), { pingTimeoutMs: 3000 });
    await store.ping();
    await server.stop();
    const error = await store.ping().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof StorageError);
    assert.match(error.message, /^S3 ping of bucket test-bucket failed: /);
    assert.ok(error.cause !== undefined);
    await assert.rejects(store.stat('x'), StorageError);
  } finally {
    store?.close();
    await server.stop();
  }
});
