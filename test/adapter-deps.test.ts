import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { CallbackStore, hashToken } from '../src/generators/adapters/callback-store.ts';
import { type AdapterRuntime, createAdapterDeps } from '../src/generators/adapters/deps.ts';
import type { AdapterDeps, Channel } from '../src/generators/adapters/index.ts';
import { GenerationError, type GenerationRequest, GeneratorTransientError } from '../src/generators/index.ts';
import { makePng } from '../src/media/fixtures.ts';
import { artifactOfTaskInput } from '../src/tasks/index.ts';
import { type FakeServer, gatewayPage, startFakeServer } from './fakes/server.ts';
import { startTestApp, type TestApp, waitForFinal } from './helpers.ts';

function channel(baseUrl: string): Channel {
  return {
    name: 'deps-test',
    provider: 'cog',
    models: ['image'],
    baseUrl,
    secrets: {},
    priority: 0,
    weight: 1,
    maxConcurrency: 10,
    timeoutMs: 30 * 60_000,
    upstreamModels: {},
  };
}

const GLB = Buffer.concat([Buffer.from('glTF'), Buffer.alloc(16)]);

describe('AdapterDeps of a channel', () => {
  let t: TestApp;
  let fake: FakeServer;
  let png: Buffer;
  let hang = false;
  const runtime = (overrides: Partial<AdapterRuntime> = {}): AdapterRuntime => ({
    clock: t.clock,
    storage: t.container.storage,
    uploads: t.container.services.uploads,
    callbacks: t.container.services.callbacks,
    publicBaseUrl: 'https://api.example.com',
    fetchAllowAddresses: ['127.0.0.1'],
    ...overrides,
  });
  const deps = (overrides: Partial<AdapterRuntime> = {}): AdapterDeps =>
    createAdapterDeps(channel(fake.url), runtime(overrides));
  const signal = (): AbortSignal => AbortSignal.timeout(20_000);

  before(async () => {
    t = await startTestApp({ worker: false });
    png = fs.readFileSync(await makePng(t.dir, 8, 8));
    fake = await startFakeServer(async (request) => {
      if (request.path === '/json') return { status: 201, body: { ok: true, echo: request.body } };
      if (request.path === '/empty') return { status: 204 };
      if (request.path === '/html') return { status: 502, body: '<html>Bad gateway</html>' };
      // JSON without a Content-Type (PROVIDERS.md names none): a string body is sent without one.
      if (request.path === '/untyped-json') return { status: 200, body: ' {"id":"style-1"}' };
      if (request.path === '/html-429') return gatewayPage(429, 7);
      if (request.path === '/html-503') return gatewayPage(503, 3);
      if (request.path === '/bomb') {
        // 64 MB of JSON whitespace in about 64 KB on the wire: fetch inflates what it is sent.
        const body = gzipSync(
          Buffer.concat([Buffer.from('{"a":1'), Buffer.alloc(64 * 1024 * 1024, 32), Buffer.from('}')]),
        );
        return {
          status: 200,
          body,
          headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        };
      }
      if (request.path === '/slow') await new Promise((resolve) => setTimeout(resolve, hang ? 2_000 : 0));
      if (request.path === '/tokens') {
        const rows = await t.container.db.db.selectFrom('callback_tokens').select('token_hash').execute();
        return { status: 200, body: { hashes: rows.map((row) => row.token_hash) } };
      }
      return null;
    });
  });
  after(async () => {
    await fake.close();
    await t.close();
  });

  test('http: JSON bodies parsed, statuses returned, an empty body is null', async () => {
    const http = deps().http;
    const created = await http.request({ method: 'POST', path: '/json', json: { a: 1 }, signal: signal() });
    assert.equal(created.status, 201);
    assert.deepEqual(created.body, { ok: true, echo: { a: 1 } });
    const empty = await http.request({ method: 'DELETE', path: '/empty', signal: signal() });
    assert.deepEqual([empty.status, empty.body], [204, null]);
    const missing = await http.request({ method: 'GET', path: '/nothing', signal: signal() });
    assert.equal(missing.status, 404);
  });

  test('http: a body that is not JSON, a refused connection and a timeout are transient', async () => {
    await assert.rejects(
      deps().http.request({ method: 'GET', path: '/html', signal: signal() }),
      (error) => error instanceof GeneratorTransientError && /not JSON/.test(error.message),
    );
    const closed = createAdapterDeps(channel('http://127.0.0.1:9'), runtime());
    await assert.rejects(
      closed.http.request({ method: 'GET', path: '/json', signal: signal() }),
      GeneratorTransientError,
    );
    hang = true;
    try {
      await assert.rejects(
        deps({ callTimeoutMs: 200 }).http.request({ method: 'GET', path: '/slow', signal: signal() }),
        (error) => error instanceof GeneratorTransientError && /no answer within 200 ms/.test(error.message),
      );
    } finally {
      hang = false;
    }
  });

  test("http: a gateway's HTML page on 429 or 5xx is transient with its status and Retry-After", async () => {
    for (const [path, status, waitMs] of [
      ['/html-429', 429, 7_000],
      ['/html-503', 503, 3_000],
    ] as const) {
      await assert.rejects(
        deps().http.request({ method: 'POST', path, json: {}, signal: signal() }),
        (error) =>
          error instanceof GeneratorTransientError &&
          error.retryAfterMs === waitMs &&
          new RegExp(`HTTP ${status}`).test(error.message),
      );
    }
  });

  test('http raw: bytes and plain text come back as bytes, JSON still parsed (ElevenLabs, Recraft)', async () => {
    const http = deps().http;
    const html = await http.request({ method: 'GET', path: '/html', raw: true, signal: signal() });
    assert.equal(html.status, 502);
    assert.equal(html.body, null);
    assert.equal(html.bytes?.toString('utf8'), '<html>Bad gateway</html>');
    const json = await http.request({
      method: 'POST',
      path: '/json',
      json: { a: 2 },
      raw: true,
      signal: signal(),
    });
    assert.deepEqual(json.body, { ok: true, echo: { a: 2 } });
    assert.equal(json.bytes?.toString('utf8'), JSON.stringify({ ok: true, echo: { a: 2 } }));
    const untyped = await http.request({ method: 'GET', path: '/untyped-json', raw: true, signal: signal() });
    assert.equal(untyped.headers.get('content-type'), null);
    assert.deepEqual(untyped.body, { id: 'style-1' });
  });

  test('http: an answer past the cap is transient, counted after decompression (no gzip bomb)', async () => {
    for (const raw of [false, true]) {
      await assert.rejects(
        deps({ maxOutputBytes: 1024 * 1024 }).http.request({
          method: 'GET',
          path: '/bomb',
          raw,
          signal: signal(),
        }),
        (error) => error instanceof GeneratorTransientError && /larger than/.test(error.message),
      );
    }
    const small = await deps({ maxOutputBytes: 1024 }).http.request({
      method: 'POST',
      path: '/json',
      json: {},
      signal: signal(),
    });
    assert.equal(small.status, 201);
  });

  test("http: the run's own abort is passed on, not turned into a provider failure", async () => {
    const abort = new AbortController();
    abort.abort(new Error('canceled by the caller'));
    await assert.rejects(
      deps().http.request({ method: 'GET', path: '/json', signal: abort.signal }),
      /canceled by the caller/,
    );
  });

  test('http: a callback token is stored before the provider can see its address', async () => {
    // A store whose writes take a while, so a call that did not wait for them would overtake them.
    const db = t.container.db;
    const slowDb = {
      ...db,
      db: {
        insertInto: (table: 'callback_tokens') => ({
          values: (row: Parameters<ReturnType<typeof db.db.insertInto<'callback_tokens'>>['values']>[0]) => ({
            execute: async () => {
              await new Promise((resolve) => setTimeout(resolve, 300));
              return db.db.insertInto(table).values(row).execute();
            },
          }),
        }),
      },
    } as unknown as typeof db;
    const callbacks = new CallbackStore({
      db: slowDb,
      clock: t.clock,
      publicBaseUrl: t.container.config.publicBaseUrl,
      notifyChannel: 'unused',
    });
    const d = deps({ callbacks });
    const url = d.callbacks.urlFor('deps-task/1');
    const token = url.split('/').pop() as string;
    assert.ok(url.startsWith(`${t.container.config.publicBaseUrl}/v1/callbacks/deps-test/`), url);
    const seen = await d.http.request({ method: 'GET', path: '/tokens', signal: signal() });
    assert.ok((seen.body as { hashes: string[] }).hashes.includes(hashToken(token)));
  });

  test('download: a link is fetched into the folder and its type sniffed from the bytes', async () => {
    const dir = fs.mkdtempSync(path.join(t.dir, 'dl-'));
    const link = fake.serveFile(png, 'application/octet-stream', 10_000);
    const got = await deps().download(link, dir, signal());
    assert.equal(got.format, 'png');
    assert.equal(got.contentType, 'image/png');
    assert.equal(got.sizeBytes, png.length);
    assert.ok(fs.readFileSync(got.path).equals(png));
    assert.equal(path.dirname(got.path), dir);
    const mesh = await deps().download(fake.serveFile(GLB, 'text/plain', 10_000), dir, signal());
    assert.deepEqual([mesh.format, mesh.contentType], ['glb', 'model/gltf-binary']);
  });

  test('download: private addresses are refused unless allowed (CONTRACT §6), as transient', async () => {
    const dir = fs.mkdtempSync(path.join(t.dir, 'dl-'));
    const link = fake.serveFile(png, 'image/png', 10_000);
    await assert.rejects(
      deps({ fetchAllowAddresses: [] }).download(link, dir, signal()),
      (error) => error instanceof GeneratorTransientError && /blocked/.test(error.message),
    );
    await assert.rejects(
      deps({ fetchAllowAddresses: [] }).download('http://169.254.169.254/latest/meta-data', dir, signal()),
      (error) => error instanceof GeneratorTransientError && /blocked/.test(error.message),
    );
    assert.deepEqual(fs.readdirSync(dir), []);
  });

  test('download: an expired link is transient; a file over the cap is final generation_failed', async () => {
    const dir = fs.mkdtempSync(path.join(t.dir, 'dl-'));
    const link = fake.serveFile(png, 'image/png', 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await assert.rejects(
      deps().download(link, dir, signal()),
      (error) => error instanceof GeneratorTransientError && /bad_status/.test(error.message),
    );
    // The same file comes back as large from every retry, and a new call bills another run.
    const big = fake.serveFile(png, 'image/png', 10_000);
    const overCap = (error: unknown): boolean =>
      error instanceof GenerationError &&
      error.code === 'generation_failed' &&
      new RegExp(`larger than the service stores \\(${png.length - 1} bytes\\)`).test(error.message);
    await assert.rejects(deps({ maxOutputBytes: png.length - 1 }).download(big, dir, signal()), overCap);
    const dataUrl = `data:image/png;base64,${png.toString('base64')}`;
    await assert.rejects(deps({ maxOutputBytes: png.length - 1 }).download(dataUrl, dir, signal()), overCap);
    assert.deepEqual(fs.readdirSync(dir), []);
  });

  test('download: data URLs are decoded with the same cap and sniffing', async () => {
    const dir = fs.mkdtempSync(path.join(t.dir, 'dl-'));
    // The declared media type is ignored: the bytes decide.
    const url = `data:text/plain;base64,${png.toString('base64')}`;
    const got = await deps().download(url, dir, signal());
    assert.deepEqual([got.format, got.sizeBytes], ['png', png.length]);
    assert.ok(fs.readFileSync(got.path).equals(png));
    await assert.rejects(
      deps({ maxOutputBytes: png.length - 1 }).download(url, dir, signal()),
      (error) => error instanceof GenerationError && /larger than the service stores/.test(error.message),
    );
    await assert.rejects(
      deps().download('data:image/png;base64,@@@', dir, signal()),
      GeneratorTransientError,
    );
    const text = await deps().download('data:,hello%20world', dir, signal());
    assert.deepEqual([text.format, text.contentType], ['bin', 'application/octet-stream']);
  });

  test('publicUrl: our own upload links move under PUBLIC_BASE_URL, other links stay', () => {
    const d = deps();
    const own = `http://10.0.0.5:8080/files/${'a'.repeat(32)}/photo%201.png`;
    assert.equal(d.publicUrl(own), `https://api.example.com/files/${'a'.repeat(32)}/photo%201.png`);
    assert.equal(d.publicUrl('https://cdn.example.org/files/x.png'), 'https://cdn.example.org/files/x.png');
    assert.equal(d.publicUrl('not a url'), 'not a url');
  });

  test("inputLinks, publicLinks: a stranger's link shaped like ours stays at its host", async () => {
    const acct = await t.account({ balanceMinor: 1 });
    const uploaded = await t.app.inject({
      method: 'POST',
      url: '/v1/files?filename=photo.png',
      payload: png,
      headers: { 'content-type': 'image/png', authorization: `Bearer ${acct.key}` },
    });
    assert.equal(uploaded.statusCode, 201, uploaded.body);
    const ownPath = new URL(uploaded.json().url as string).pathname;
    const own = `http://10.0.0.5:8080${ownPath}`;
    // A CDN's address whose path is `/files/<32 hex>/<name>`: no upload of ours has that token, so at
    // acceptance it was downloaded from its host (tasks/inputs.ts), and the provider must fetch it there.
    const cdn = 'https://cdn.example.org/files/5d41402abc4b2a76b9719d911017c592/photo.png';
    const file = (url: string, position: number) => ({
      field: 'ref_image_urls',
      position,
      url,
      format: 'png' as const,
      sizeBytes: png.length,
    });
    const links = await deps().inputLinks(
      {
        taskId: '00000000-0000-7000-8000-000000000000',
        model: 'video',
        mode: 'reference',
        settings: {},
        inputs: { files: [file(own, 0), file(cdn, 1)] },
        plan: { outputs: [], caption: '', texts: [], workSeconds: 1 },
      },
      signal(),
    );
    assert.equal(links(own), `https://api.example.com${ownPath}`);
    assert.equal(links(cdn), cdn);
    // A library step's links (a singing voice's source, an element's pictures) likewise.
    const step = await deps().publicLinks([own, cdn]);
    assert.deepEqual([step(own), step(cdn)], [`https://api.example.com${ownPath}`, cdn]);
    // A preset's stored sample is ours by its path (a Seedance record's voice sends it): made absolute.
    const sample = '/samples/preset-warm-narrator.mp3';
    assert.equal((await deps().publicLinks([sample]))(sample), `https://api.example.com${sample}`);
  });

  test('readInput: an own upload comes from storage, any other link through the guarded download', async () => {
    const acct = await t.account({ balanceMinor: 1 });
    const boundary = '----deps-test';
    const payload = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="photo.png"\r\nContent-Type: image/png\r\n\r\n`,
      ),
      png,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const uploaded = await t.app.inject({
      method: 'POST',
      url: '/v1/files',
      payload,
      headers: {
        'content-type': `multipart/form-data; boundary=${boundary}`,
        authorization: `Bearer ${acct.key}`,
      },
    });
    assert.equal(uploaded.statusCode, 201, uploaded.body);
    // The upload's host (api.test) resolves nowhere: only a read from storage can succeed.
    const own = await deps().readInput(uploaded.json().url as string, signal());
    assert.deepEqual([own.format, own.contentType, own.filename], ['png', 'image/png', 'photo.png']);
    assert.ok(own.bytes.equals(png));
    const remote = await deps().readInput(fake.serveFile(png, 'image/png', 10_000), signal());
    assert.ok(remote.bytes.equals(png));
    assert.equal(remote.format, 'png');
    // A caller's link that cannot be read now is the caller's problem, not the provider's (no transient).
    const unreadable = (error: unknown) =>
      error instanceof GenerationError && error.code === 'input_unavailable';
    await assert.rejects(
      deps({ fetchAllowAddresses: [] }).readInput(fake.serveFile(png, 'image/png', 10_000), signal()),
      unreadable,
    );
    const gone = fake.serveFile(png, 'image/png', 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await assert.rejects(deps().readInput(gone, signal()), unreadable);
    // A cancel of the run stays the run's own reason.
    const abort = new AbortController();
    abort.abort(new Error('canceled by the caller'));
    await assert.rejects(
      deps().readInput(fake.serveFile(png, 'image/png', 10_000), abort.signal),
      /canceled by the caller/,
    );
    const deleted = await t.call(acct.key, 'DELETE', `/v1/files/${uploaded.json().id}`);
    assert.equal(deleted.statusCode, 204);
    // A deleted upload is no longer ours: it is fetched like any link, and its address is refused.
    await assert.rejects(deps().readInput(uploaded.json().url as string, signal()), unreadable);
  });

  test('artifact links: read from storage and lent only for a task of the same account', async () => {
    const owner = await t.account({ balanceMinor: 100_000 });
    const stranger = await t.account({ balanceMinor: 100_000 });
    t.container.worker.start();
    const made = async (key: string, prompt: string): Promise<string> => {
      const created = await t.call(key, 'POST', '/v1/tasks', { model: 'image', settings: { prompt } });
      assert.equal(created.statusCode, 202, created.body);
      const id = created.json().id as string;
      assert.equal((await waitForFinal(t, key, id)).status, 'succeeded');
      return id;
    };
    const source = await made(owner.key, 'a lantern');
    const ownTask = await made(owner.key, 'another lantern');
    const strangerTask = await made(stranger.key, 'not theirs');
    const bytes = (await t.call(owner.key, 'GET', `/v1/tasks/${source}/artifacts/0`)).rawPayload;
    // The link's host (api.test) resolves nowhere: only a read from storage can succeed.
    const link = `http://api.test/v1/tasks/${source}/artifacts/0`;
    const db = t.container.db;
    const d = deps({
      artifactInput: (forTaskId, url) => artifactOfTaskInput(db, forTaskId, url, new Date()),
    });
    const read = await d.readInput(link, signal(), ownTask);
    assert.ok(read.bytes.equals(bytes));
    assert.deepEqual([read.format, read.contentType], ['png', 'image/png']);
    const unreadable = (error: unknown) =>
      error instanceof GenerationError && error.code === 'input_unavailable';
    // Another account's task, or no task at all (a library creation), never reads it.
    await assert.rejects(d.readInput(link, signal(), strangerTask), unreadable);
    await assert.rejects(d.readInput(link, signal()), unreadable);
    const request = (taskId: string): GenerationRequest => ({
      taskId,
      model: 'video',
      mode: 'reference',
      settings: {},
      inputs: {
        files: [{ field: 'ref_image_urls', position: 0, url: link, format: 'png', sizeBytes: bytes.length }],
      },
      plan: { outputs: [], caption: '', texts: [], workSeconds: 1 },
    });
    const links = await d.inputLinks(request(ownTask), signal());
    const lent = links(link);
    assert.match(lent, /^https:\/\/api\.example\.com\/files\/[A-Za-z0-9]{32}\//);
    const served = await t.app.inject({ method: 'GET', url: new URL(lent).pathname });
    assert.equal(served.statusCode, 200);
    assert.ok(served.rawPayload.equals(bytes), 'served without a key, from our storage');
    // Other links are as publicUrl gives them; an artifact link no input file names is not lent.
    const upload = `http://10.0.0.5:8080/files/${'a'.repeat(32)}/x.png`;
    assert.equal(links(upload), d.publicUrl(upload));
    const unnamed = `http://api.test/v1/tasks/${ownTask}/artifacts/0`;
    assert.equal(links(unnamed), unnamed);
    const rows = async () => (await db.db.selectFrom('uploads').select('id').execute()).length;
    const count = await rows();
    await assert.rejects(d.inputLinks(request(strangerTask), signal()), unreadable);
    assert.equal(await rows(), count, 'nothing lent to another account');
  });
});
