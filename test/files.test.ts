import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { HOUR_MS } from '../src/config.ts';
import { ManualClock } from '../src/lib/clock.ts';
import {
  box,
  makeJpeg,
  makeMp3,
  makeMp4,
  makeMp4WithSampleTables,
  makePng,
  makeWav,
} from '../src/media/fixtures.ts';
import { StorageError } from '../src/storage/index.ts';
import { balances, expectError, startTestApp, type TestApp } from './helpers.ts';

function multipart(
  filename: string,
  bytes: Buffer,
  type = 'application/octet-stream',
): { payload: Buffer; headers: Record<string, string> } {
  const boundary = '----gta-test-boundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`;
  const payload = Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]);
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

async function upload(
  t: TestApp,
  key: string,
  file: string,
  name = file.split('/').pop()!,
): Promise<Record<string, unknown> & { id: string; url: string }> {
  const { payload, headers } = multipart(name, fs.readFileSync(file));
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/files',
    payload,
    headers: { ...headers, authorization: `Bearer ${key}` },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

const pathOf = (url: string): string => new URL(url).pathname;

/** The garbage collector, exposed for this test process only. */
function collector(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

describe('POST /v1/files and direct links', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('multipart upload: 201 with a direct link that works without a key; GET and DELETE by the owner', async () => {
    const acct = await t.account();
    const png = await makePng(t.dir, 320, 200);
    const up = await upload(t, acct.key, png, 'photo.png');
    assert.equal(up.filename, 'photo.png');
    assert.equal(up.content_type, 'image/png');
    assert.equal(up.kind, 'image');
    assert.equal(up.size, fs.statSync(png).size);
    assert.deepEqual([up.width, up.height], [320, 200]);
    assert.match(up.url, /^http:\/\/api\.test\/files\/[A-Za-z0-9]{32}\//);
    assert.ok(Date.parse(String(up.expires_at)) > Date.now() + 6 * 24 * HOUR_MS);
    const direct = await t.app.inject({ method: 'GET', url: pathOf(up.url) });
    assert.equal(direct.statusCode, 200);
    assert.equal(direct.headers['content-type'], 'image/png');
    // Opened on its own, the file runs nothing in the service's origin.
    assert.equal(direct.headers['content-security-policy'], "default-src 'none'; sandbox");
    assert.deepEqual(direct.rawPayload, fs.readFileSync(png));
    const part = await t.app.inject({ method: 'GET', url: pathOf(up.url), headers: { range: 'bytes=0-7' } });
    assert.equal(part.statusCode, 206);
    assert.equal(part.rawPayload.length, 8);
    const etag = String(direct.headers.etag);
    const stale = await t.app.inject({
      method: 'GET',
      url: pathOf(up.url),
      headers: { range: 'bytes=0-7', 'if-range': '"older"' },
    });
    assert.equal(stale.statusCode, 200, 'If-Range naming another validator asks for the whole file');
    const fresh = await t.app.inject({
      method: 'GET',
      url: pathOf(up.url),
      headers: { range: 'bytes=0-7', 'if-range': etag },
    });
    assert.equal(fresh.statusCode, 206);
    // If-None-Match naming the link's ETag: 304 without the bytes; another tag: the file.
    const cached = await t.app.inject({
      method: 'GET',
      url: pathOf(up.url),
      headers: { 'if-none-match': etag },
    });
    assert.equal(cached.statusCode, 304);
    assert.equal(cached.rawPayload.length, 0);
    assert.equal(cached.headers.etag, etag);
    // A 304 names no length but the file's own (RFC 9110 §8.6), to a HEAD as well as to a GET.
    for (const method of ['GET', 'HEAD'] as const) {
      const conditional = await t.app.inject({
        method,
        url: pathOf(up.url),
        headers: { 'if-none-match': etag },
      });
      assert.equal(conditional.statusCode, 304, method);
      const length = conditional.headers['content-length'];
      assert.ok(length === undefined || Number(length) === fs.statSync(png).size, `${method}: ${length}`);
    }
    const changed = await t.app.inject({
      method: 'GET',
      url: pathOf(up.url),
      headers: { 'if-none-match': '"older"' },
    });
    assert.equal(changed.statusCode, 200);
    assert.deepEqual(changed.rawPayload, fs.readFileSync(png));
    // If-Match (RFC 9110 §13.1.1): the link's ETag keeps the answer; another tag is 412, even beside an
    // If-None-Match that names the link (If-Match comes first).
    const matched = await t.app.inject({ method: 'GET', url: pathOf(up.url), headers: { 'if-match': etag } });
    assert.equal(matched.statusCode, 200);
    for (const headers of [{ 'if-match': '"older"' }, { 'if-match': '"older"', 'if-none-match': etag }]) {
      expectError(
        await t.app.inject({ method: 'GET', url: pathOf(up.url), headers }),
        412,
        'precondition_failed',
      );
    }
    // Last-Modified is the upload's creation, to the second; the date preconditions read it.
    const modified = String(matched.headers['last-modified']);
    assert.equal(
      modified,
      new Date(Math.floor(Date.parse(String(up.created_at)) / 1000) * 1000).toUTCString(),
    );
    const since = await t.app.inject({
      method: 'GET',
      url: pathOf(up.url),
      headers: { 'if-modified-since': modified },
    });
    assert.equal(since.statusCode, 304);
    const earlier = new Date(Date.parse(modified) - 1000).toUTCString();
    expectError(
      await t.app.inject({ method: 'GET', url: pathOf(up.url), headers: { 'if-unmodified-since': earlier } }),
      412,
      'precondition_failed',
    );
    // HEAD: the same headers, no body, and the file is not read for it.
    const head = await t.app.inject({ method: 'HEAD', url: pathOf(up.url) });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['content-length'], String(up.size));
    assert.equal(head.headers['content-security-policy'], "default-src 'none'; sandbox");
    assert.equal(head.rawPayload.length, 0);
    assert.equal((await t.call(acct.key, 'GET', `/v1/files/${up.id}`)).json().url, up.url);

    const stranger = await t.account();
    expectError(await t.call(stranger.key, 'GET', `/v1/files/${up.id}`), 404, 'file_not_found');
    expectError(await t.call(stranger.key, 'DELETE', `/v1/files/${up.id}`), 404, 'file_not_found');

    assert.equal((await t.call(acct.key, 'DELETE', `/v1/files/${up.id}`)).statusCode, 204);
    expectError(await t.app.inject({ method: 'GET', url: pathOf(up.url) }), 404, 'file_not_found');
    expectError(await t.call(acct.key, 'GET', `/v1/files/${up.id}`), 404, 'file_not_found');
    const row = await t.container.db.db
      .selectFrom('uploads')
      .select('storage_key')
      .where('id', '=', up.id)
      .executeTakeFirst();
    assert.equal(await t.container.storage.stat(row!.storage_key), null, 'bytes removed');
    // Its link in a task says what happened to it, rather than being fetched like a stranger's URL.
    const payer = await t.account({ balanceMinor: 100_000 });
    const task = await t.call(payer.key, 'POST', '/v1/tasks', {
      model: 'model-3d',
      settings: { task_type: 'image_to_model', image_url: [up.url] },
    });
    expectError(task, 422, 'invalid_settings');
    assert.match(
      task.json().error.message,
      /^settings\.image_url\.0: the upload at \S+ was deleted or has expired/,
    );
  });

  test('DELETE twice at once: one 204, the other 404 file_not_found, as one after the other', async () => {
    const acct = await t.account();
    const png = await makePng(t.dir, 16, 16);
    for (let round = 0; round < 5; round++) {
      const up = await upload(t, acct.key, png);
      const answers = await Promise.all(
        Array.from({ length: 4 }, () => t.call(acct.key, 'DELETE', `/v1/files/${up.id}`)),
      );
      const codes = answers.map((a) => a.statusCode).sort();
      assert.deepEqual(codes, [204, 404, 404, 404], `round ${round}`);
      for (const a of answers.filter((a) => a.statusCode === 404)) expectError(a, 404, 'file_not_found');
    }
  });

  test('DELETE while the storage fails: 500, the upload stays whole, and a retry removes its bytes', async () => {
    const acct = await t.account();
    const up = await upload(t, acct.key, await makePng(t.dir, 8, 8));
    const storage = t.container.storage;
    const key = `uploads/${up.id}`;
    const remove = storage.delete;
    storage.delete = async () => {
      throw new StorageError('S3 delete failed: ECONNREFUSED');
    };
    try {
      expectError(await t.call(acct.key, 'DELETE', `/v1/files/${up.id}`), 500, 'internal_error');
    } finally {
      storage.delete = remove;
    }
    // Flagged before its bytes were gone, the record was lost and no sweep would ever remove the object.
    assert.equal((await t.call(acct.key, 'GET', `/v1/files/${up.id}`)).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url: pathOf(up.url) })).statusCode, 200);
    assert.equal((await t.call(acct.key, 'DELETE', `/v1/files/${up.id}`)).statusCode, 204);
    assert.equal(await storage.stat(key), null);
    expectError(await t.app.inject({ method: 'GET', url: pathOf(up.url) }), 404, 'file_not_found');
  });

  test("a browser's escapes in a multipart filename are read back: %22 is a quote, a literal %41 stays", async () => {
    const acct = await t.account();
    const file = await makePng(t.dir, 4, 4);
    // Chromium sends a file named `"q" 100%41.png` as filename="%22q%22 100%41.png" (HTML's multipart encoding).
    const up = await upload(t, acct.key, file, '%22q%22 100%41.png');
    assert.equal(up.filename, '"q" 100%41.png');
    const link = new URL(up.url);
    const got = await t.app.inject({ method: 'GET', url: link.pathname });
    assert.equal(got.statusCode, 200, got.body);
    // CR and LF come back as the line breaks they were, which a stored name never keeps.
    assert.equal((await upload(t, acct.key, file, 'a%0D%0Ab.png')).filename, 'a__b.png');
  });

  test('a long name is cut by whole characters, so its link stays valid', async () => {
    const acct = await t.account();
    const name = `${'a'.repeat(195)}😀${'b'.repeat(10)}.png`;
    const file = await makePng(t.dir, 4, 4);
    const up = await upload(t, acct.key, file, name);
    // 200 characters: the stem cut after the emoji (never inside it), the extension kept.
    assert.equal(up.filename, `${'a'.repeat(195)}😀.png`);
    assert.equal((await t.call(acct.key, 'GET', `/v1/files/${up.id}`)).statusCode, 200);
    // The link itself answers with the bytes, however long its name once percent-encoded (the router
    // refuses a path parameter over 100 characters: such links were 404).
    for (const sent of [up, await upload(t, acct.key, file, `${'я'.repeat(200)}.png`)]) {
      const link = new URL(sent.url);
      assert.ok(link.pathname.length > 200, link.pathname);
      const got = await t.app.inject({ method: 'GET', url: link.pathname });
      assert.equal(got.statusCode, 200, got.body);
      assert.deepEqual(got.rawPayload, fs.readFileSync(file));
    }
    // A raw upload's ?filename= is cut the same way, not refused (`gta upload` and the SDK send it so).
    const raw = await t.call(
      acct.key,
      'POST',
      `/v1/files?filename=${encodeURIComponent(name)}`,
      fs.readFileSync(file),
      { 'content-type': 'image/png' },
    );
    assert.equal(raw.statusCode, 201, raw.body);
    assert.equal(raw.json().filename, up.filename);
  });

  test('raw upload with Content-Type and ?filename; audio gets its duration', async () => {
    const acct = await t.account();
    const mp3 = await makeMp3(t.dir, 3);
    const res = await t.call(acct.key, 'POST', '/v1/files?filename=take.mp3', fs.readFileSync(mp3), {
      'content-type': 'audio/mpeg',
    });
    assert.equal(res.statusCode, 201, res.body);
    const up = res.json();
    // A 201 names what it created (RFC 9110 §15.3.2), as every other creation does.
    assert.equal(res.headers.location, `/v1/files/${up.id}`);
    assert.equal((await t.call(acct.key, 'GET', String(res.headers.location))).statusCode, 200);
    assert.equal(up.filename, 'take.mp3');
    assert.equal(up.kind, 'audio');
    assert.equal(up.content_type, 'audio/mpeg');
    assert.ok(Math.abs(up.duration_seconds - 3) < 0.2, String(up.duration_seconds));
  });

  test('types are recognised by content: 422 file_type, 422 file_empty, 413 file_too_large', async () => {
    const acct = await t.account();
    const text = multipart('photo.png', Buffer.from('this is not a picture at all, just text'));
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/files',
        payload: text.payload,
        headers: { ...text.headers, authorization: `Bearer ${acct.key}` },
      }),
      422,
      'file_type',
    );
    const empty = multipart('empty.png', Buffer.alloc(0));
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/files',
        payload: empty.payload,
        headers: { ...empty.headers, authorization: `Bearer ${acct.key}` },
      }),
      422,
      'file_empty',
    );
    // A raw body of no bytes is empty whether it names a type or not (without one it read as file_type).
    for (const headers of [{}, { 'content-type': 'image/png' }, { 'content-length': '0' }]) {
      expectError(
        await t.app.inject({
          method: 'POST',
          url: '/v1/files',
          headers: { ...headers, authorization: `Bearer ${acct.key}` },
        }),
        422,
        'file_empty',
      );
    }
    // A PNG with a JPEG name is still a PNG.
    const png = await makePng(t.dir, 10, 10);
    assert.equal((await upload(t, acct.key, png, 'looks.jpg')).content_type, 'image/png');
  });

  test('multipart with a second file after "file" is 422 invalid_request, and nothing is stored', async () => {
    const acct = await t.account();
    const png = fs.readFileSync(await makePng(t.dir, 8, 8));
    const boundary = '----gta-two-files';
    const part = (name: string, filename: string): Buffer =>
      Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: image/png\r\n\r\n`,
        ),
        png,
        Buffer.from('\r\n'),
      ]);
    const headers = {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      authorization: `Bearer ${acct.key}`,
    };
    const end = Buffer.from(`--${boundary}--\r\n`);
    for (const second of ['file', 'other']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/files',
        payload: Buffer.concat([part('file', 'a.png'), part(second, 'b.png'), end]),
        headers,
      });
      expectError(res, 422, 'invalid_request');
    }
    const rows = await t.container.db.db
      .selectFrom('uploads')
      .select('id')
      .where('account_id', '=', acct.id)
      .execute();
    assert.equal(rows.length, 0, 'a refused upload keeps no record');
    // One file part with fields around it is still one upload.
    const field = `--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n`;
    const one = await t.app.inject({
      method: 'POST',
      url: '/v1/files',
      payload: Buffer.concat([Buffer.from(field), part('file', 'a.png'), Buffer.from(field), end]),
      headers,
    });
    assert.equal(one.statusCode, 201, one.body);
  });

  test('a 100 MB upload streams through: refused past 100 MB, and the memory barely moves', async () => {
    const acct = await t.account();
    const png = fs.readFileSync(await makePng(t.dir, 16, 16));
    const stream = (total: number): Readable => {
      let sent = 0;
      const chunk = Buffer.alloc(256 * 1024);
      return new Readable({
        read() {
          if (sent === 0) {
            sent += png.length;
            this.push(png);
            return;
          }
          if (sent >= total) return void this.push(null);
          const n = Math.min(chunk.length, total - sent);
          sent += n;
          this.push(n === chunk.length ? chunk : chunk.subarray(0, n));
        },
      });
    };
    // Buffers live outside the V8 heap, and V8 collects them lazily (it waits for tens of MB of external
    // memory before a collection), so the transient peak says little. What matters: the heap stays flat
    // while 100 MB pass, and nothing of the upload is retained afterwards.
    const gc = collector();
    gc();
    const before = process.memoryUsage();
    let heapPeak = before.heapUsed;
    const sampler = setInterval(() => {
      heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
    }, 5);
    const ok = await t.app.inject({
      method: 'POST',
      url: '/v1/files?filename=big.png',
      payload: stream(100 * 1024 * 1024),
      headers: { authorization: `Bearer ${acct.key}`, 'content-type': 'image/png' },
    });
    clearInterval(sampler);
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal(ok.json().size, 100 * 1024 * 1024);
    // V8 frees buffers' memory on a background thread after a collection: a retained buffer stays
    // counted however long we wait, a released one leaves the count within a few rounds.
    let afterwards = process.memoryUsage();
    for (let round = 0; round < 20; round++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 50));
      afterwards = process.memoryUsage();
      if (afterwards.arrayBuffers - before.arrayBuffers < 4 * 1024 * 1024) break;
    }
    const mb = (n: number): string => (n / 1024 / 1024).toFixed(1);
    process.stdout.write(
      `# 100 MB upload: heap peak +${mb(heapPeak - before.heapUsed)} MB, retained after GC: rss ${mb(afterwards.rss - before.rss)} MB, buffers ${mb(afterwards.arrayBuffers - before.arrayBuffers)} MB\n`,
    );
    assert.ok(
      heapPeak - before.heapUsed < 24 * 1024 * 1024,
      `heap grew by ${mb(heapPeak - before.heapUsed)} MB`,
    );
    assert.ok(
      afterwards.arrayBuffers - before.arrayBuffers < 4 * 1024 * 1024,
      `buffers retained ${mb(afterwards.arrayBuffers - before.arrayBuffers)} MB`,
    );
    const tooBig = await t.app.inject({
      method: 'POST',
      url: '/v1/files?filename=huge.png',
      payload: stream(100 * 1024 * 1024 + 1),
      headers: { authorization: `Bearer ${acct.key}`, 'content-type': 'image/png' },
    });
    expectError(tooBig, 413, 'file_too_large');
  });
});

describe('preset voice samples', () => {
  test('each preset has an MP3 sample served without a key, the same bytes every time; others are 404', async () => {
    const t = await startTestApp({ worker: false });
    try {
      const first = await t.app.inject({ method: 'GET', url: '/samples/preset-soft-alto.mp3' });
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(first.headers['content-type'], 'audio/mpeg');
      const head = first.rawPayload;
      assert.ok(head.length > 10_000, `${head.length} bytes`);
      assert.ok(
        head.subarray(0, 3).toString('latin1') === 'ID3' || (head[0] === 0xff && (head[1]! & 0xe0) === 0xe0),
      );
      const again = await t.app.inject({ method: 'GET', url: '/samples/preset-soft-alto.mp3' });
      assert.deepEqual(again.rawPayload, head);
      const other = await t.app.inject({ method: 'GET', url: '/samples/preset-deep-baritone.mp3' });
      assert.notDeepEqual(other.rawPayload, head);
      for (const url of ['/samples/nope.mp3', '/samples/preset-soft-alto.wav', '/samples/..%2fx.mp3'])
        expectError(await t.app.inject({ method: 'GET', url }), 404, 'file_not_found');
    } finally {
      await t.close();
    }
  });
});

describe('upload retention', () => {
  test('an expired upload answers 404 and the sweeper removes its bytes', async () => {
    const clock = new ManualClock(new Date());
    const t = await startTestApp({ clock, env: { UPLOAD_RETENTION: '1h' }, worker: false });
    try {
      const acct = await t.account();
      const up = await upload(t, acct.key, await makePng(t.dir, 8, 8));
      clock.advance(HOUR_MS - 10_000);
      const last = await t.app.inject({ method: 'GET', url: pathOf(up.url) });
      assert.equal(last.statusCode, 200);
      assert.equal(last.headers['cache-control'], 'private, max-age=10', 'no cache keeps it past expires_at');
      clock.advance(10_001);
      expectError(await t.app.inject({ method: 'GET', url: pathOf(up.url) }), 404, 'file_not_found');
      expectError(await t.call(acct.key, 'GET', `/v1/files/${up.id}`), 404, 'file_not_found');
      await t.container.sweeper.sweepOnce();
      const row = await t.container.db.db
        .selectFrom('uploads')
        .selectAll()
        .where('id', '=', up.id)
        .executeTakeFirst();
      assert.ok(row?.deleted_at);
      assert.equal(await t.container.storage.stat(row!.storage_key), null);
    } finally {
      await t.close();
    }
  });
});

describe('URL settings use uploads and safe downloads', () => {
  let t: TestApp;
  let server: http.Server;
  let base = '';
  /** Further files the server answers, by path. */
  const served = new Map<string, Buffer>();
  before(async () => {
    t = await startTestApp({ env: { FETCH_ALLOW_ADDRESSES: '127.0.0.1' } });
    const png = fs.readFileSync(await makePng(t.dir, 64, 48));
    server = http.createServer((req, res) => {
      if (req.url === '/photo.png') return void res.end(png);
      const file = served.get(req.url ?? '');
      if (file) return void res.end(file);
      if (req.url === '/to-private') {
        res.writeHead(302, { location: 'http://10.0.0.1/photo.png' });
        return void res.end();
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.close();
    await t.close();
  });

  const photoTask = (url: string) => ({
    model: 'model-3d',
    settings: { task_type: 'image_to_model', image_url: [url], texture: false, pbr: false },
  });

  test('an own upload link is accepted without a download; a wrong type is 422 file_type', async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const jpeg = await upload(t, acct.key, await makeJpeg(t.dir, 64, 64));
    const res = await t.call(
      acct.key,
      'POST',
      '/v1/tasks',
      photoTask(jpeg.url.replace('http://api.test', 'https://elsewhere.example')),
    );
    assert.equal(res.statusCode, 202, res.body);
    const wav = await upload(t, acct.key, await makeWav(t.dir, 1));
    const wrong = await t.call(acct.key, 'POST', '/v1/tasks', photoTask(wav.url));
    expectError(wrong, 422, 'file_type');
    assert.match(wrong.json().error.message, /settings\.image_url\.0/);
    assert.doesNotMatch(wrong.json().error.message, /settings\.settings/);
  });

  test('a public URL is downloaded and checked; unreachable, private and redirected-to-private URLs are 422 invalid_settings', async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    assert.equal(
      (await t.call(acct.key, 'POST', '/v1/price', photoTask(`${base}/photo.png`))).statusCode,
      200,
    );
    for (const url of [
      `${base}/missing.png`,
      `${base}/to-private`,
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/x.png',
      'http://10.1.2.3/x.png',
    ]) {
      const res = await t.call(acct.key, 'POST', '/v1/tasks', photoTask(url));
      expectError(res, 422, 'invalid_settings');
      assert.match(res.json().error.message, /settings\.image_url/);
    }
    // Russian messages say why in Russian, not with the reason's English code.
    for (const [url, why] of [
      [`${base}/missing.png`, 'сервер ответил ошибкой'],
      ['http://10.1.2.3/x.png', 'его узел — частный, локальный или служебный адрес'],
    ] as const) {
      const res = await t.call(acct.key, 'POST', '/v1/price?lang=ru', photoTask(url));
      expectError(res, 422, 'invalid_settings');
      assert.equal(
        res.json().error.message,
        `settings.image_url.0: файл по адресу ${url} недоступен: ${why}`,
      );
    }
    assert.equal((await balances(t, acct.id)).held_minor, 0);
  });

  test('video lengths enter the rules and the price: reference videos 1–5 s each, price grows with input seconds', async () => {
    const acct = await t.account({ balanceMinor: 1_000_000 });
    const short = await upload(t, acct.key, await makeMp4(t.dir, 2, 320, 240));
    const longer = await upload(t, acct.key, await makeMp4(t.dir, 4, 320, 240));
    const tooLong = await upload(t, acct.key, await makeMp4(t.dir, 6, 320, 240));
    const reference = (url: string) => ({
      model: 'video',
      settings: {
        mode: 'reference',
        prompt: 'the scene from @Video1',
        ref_video_urls: [url],
        quality: '480p',
        duration: '2s',
      },
    });
    const p2 = (await t.call(acct.key, 'POST', '/v1/price', reference(short.url))).json();
    const p4 = (await t.call(acct.key, 'POST', '/v1/price', reference(longer.url))).json();
    assert.equal(p2.amount_minor, 800 * (2 + 2));
    assert.equal(p4.amount_minor, 800 * (2 + 4));
    const refused = await t.call(acct.key, 'POST', '/v1/tasks', reference(tooLong.url));
    expectError(refused, 422, 'invalid_settings');
    assert.match(refused.json().error.message, /ref_video_urls/);
  });

  test('a hostile MP4 still gets its length and size; a video no probe can read is 422 invalid_settings', async () => {
    const acct = await t.account({ balanceMinor: 1_000_000 });
    // A million entries in each sample table: seconds of one synchronous parse for music-metadata.
    const hostile = await makeMp4WithSampleTables(t.dir, 1_000_000);
    const uploaded = await upload(t, acct.key, hostile);
    assert.deepEqual(
      [uploaded.duration_seconds, uploaded.width, uploaded.height, uploaded.content_type],
      [10, 320, 240, 'video/mp4'],
    );
    const ftyp = box('ftyp', Buffer.from('isom'), Buffer.from([0, 0, 2, 0]), Buffer.from('isommp41'));
    served.set('/hostile.mp4', fs.readFileSync(hostile));
    served.set(
      '/no-length.mp4',
      Buffer.concat([ftyp, box('moov', box('free')), box('mdat', Buffer.alloc(64))]),
    );
    const reference = (url: string) => ({
      model: 'video',
      settings: {
        mode: 'reference',
        prompt: 'the scene from @Video1',
        ref_video_urls: [url],
        quality: '480p',
      },
    });
    // 10 s is past the reference's 5 s; a file without a readable length is refused the same way.
    for (const path of ['/hostile.mp4', '/no-length.mp4']) {
      const res = await t.call(acct.key, 'POST', '/v1/price', reference(`${base}${path}`));
      expectError(res, 422, 'invalid_settings');
      assert.match(res.json().error.message, /settings\.ref_video_urls\.0/, path);
    }
  });
});
