/** The client's own timeout: an answer that never comes ends the call; a slow body or a long-poll does not. */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Client, ConnectionError } from '../src/index.ts';

const TASK = { id: 't1', status: 'running' };

/** A service whose answers come after the delay its address asks for (`/delay/<ms>/...`), or never. */
function slowService(): Promise<{ baseUrl: string; hits: string[]; close: () => Promise<void> }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    const url = new URL(req.url ?? '/', 'http://x');
    const delay = /^\/(\d+|never|stall)\//.exec(url.pathname)?.[1];
    if (delay === 'never') return;
    if (delay === 'stall') {
      // Headers at once, then a JSON body that never ends.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"a":');
      return;
    }
    setTimeout(
      () => {
        if (url.pathname.includes('/artifacts/')) {
          // Headers at once, the body a while later: the timeout must not cut it.
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '4' });
          res.write('ab');
          setTimeout(() => res.end('cd'), 1_500);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(TASK));
      },
      Number(delay ?? 0),
    );
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        baseUrl: `http://127.0.0.1:${port}`,
        hits,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

describe('timeouts', () => {
  let service: Awaited<ReturnType<typeof slowService>>;
  before(async () => {
    service = await slowService();
  });
  after(() => service.close());

  const client = (baseUrl: string, timeoutMs: number | undefined) =>
    new Client({
      apiKey: 'k',
      baseUrl,
      maxRetries: 2,
      sleep: async () => {},
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });

  test('a read with no answer is tried again, then ends in a ConnectionError naming the timeout', async () => {
    service.hits.length = 0;
    // Long enough for each attempt to reach the service on a loaded machine before it is given up.
    const c = client(`${service.baseUrl}/never`, 500);
    await assert.rejects(c.tasks.get('t1'), (error: unknown) => {
      assert.ok(error instanceof ConnectionError);
      assert.match(error.message, /^GET \/v1\/tasks\/t1: no answer within 500 ms$/);
      return true;
    });
    assert.equal(service.hits.length, 3, 'the first attempt and maxRetries more');
  });

  test('a call that is not safe to repeat is not repeated after a timeout', async () => {
    service.hits.length = 0;
    const c = client(`${service.baseUrl}/never`, 500);
    await assert.rejects(c.tasks.cancel('t1'), /POST \/v1\/tasks\/t1\/cancel: no answer within 500 ms/);
    assert.equal(service.hits.length, 1);
  });

  test('an answer slower than the timeout is abandoned; one within it is taken', async () => {
    await assert.rejects(client(`${service.baseUrl}/1000`, 150).tasks.get('t1'), ConnectionError);
    assert.deepEqual(await client(`${service.baseUrl}/50`, 2000).tasks.get('t1'), TASK);
  });

  test('a long-poll may take its wait beyond the timeout', async () => {
    service.hits.length = 0;
    // Answered after 1.2 s: past the 500 ms timeout alone, within it with the wait's second added.
    const c = client(`${service.baseUrl}/1200`, 500);
    assert.deepEqual(await c.tasks.get('t1', { wait: 1 }), TASK);
    assert.deepEqual(service.hits, ['GET /1200/v1/tasks/t1?wait=1']);
  });

  test('a library creation, which waits for the generator, may take five minutes beyond the timeout', async () => {
    // Abandoned at the timeout, its repeat under the same key would only meet the first one still in
    // progress (409 request_in_progress) while the record was being made.
    service.hits.length = 0;
    const c = client(`${service.baseUrl}/600`, 150);
    assert.deepEqual(
      await c.libraries('image', 'styles').create({ name: 'S', image_urls: ['https://x/a.png'] }),
      TASK,
    );
    // So may a helper, which waits for its generator as long.
    assert.deepEqual(await c.helpers.lyrics({ prompt: 'rain' }), TASK);
    assert.deepEqual(service.hits, ['POST /600/v1/models/image/styles', 'POST /600/v1/models/music/lyrics']);
  });

  test("a singing voice's verify and retry wait for the generator as a creation does", async () => {
    // Both ask the generator (a recording check, a new phrase; Suno polls a minute for the phrase) with
    // the service's five-minute bound. Abandoned at the timeout, the step goes on at the service and a
    // repeat meets its 409 voice_not_verifiable or voice_not_retryable.
    service.hits.length = 0;
    const c = client(`${service.baseUrl}/600`, 150);
    const voices = c.singingVoices;
    assert.deepEqual(await voices.verify('v1', { recording_url: 'https://x/r.mp3', name: 'Me' }), TASK);
    assert.deepEqual(await voices.retry('v1'), TASK);
    assert.deepEqual(service.hits, [
      'POST /600/v1/models/music/voices/v1/verify',
      'POST /600/v1/models/music/voices/v1/retry',
    ]);
  });

  test('an upload, which the timeout does not bound, ends with the caller’s signal', async () => {
    service.hits.length = 0;
    const c = client(`${service.baseUrl}/never`, 150);
    const upload = c.files.upload(new Uint8Array([1, 2, 3]), {
      filename: 'a.bin',
      signal: AbortSignal.timeout(300),
    });
    let guard: ReturnType<typeof setTimeout> | undefined;
    const hung = new Promise<never>((_, reject) => {
      guard = setTimeout(() => reject(new Error('the upload was not ended by its signal')), 3_000);
    });
    await assert
      .rejects(Promise.race([upload, hung]), { name: 'TimeoutError' })
      .finally(() => clearTimeout(guard));
    assert.deepEqual(service.hits, ['POST /never/v1/files?filename=a.bin']);
  });

  test('a body that comes after the timeout is not cut: only the headers are timed', async () => {
    // Headers at once, the rest of the body 1.5 s later: well past the 500 ms timeout.
    const bytes = await client(`${service.baseUrl}/0`, 500).tasks.download('t1', 0);
    assert.equal(new TextDecoder().decode(bytes), 'abcd');
  });

  test('a JSON answer whose body stops coming ends in a ConnectionError at the timeout, not minutes later', async () => {
    const started = Date.now();
    await assert.rejects(client(`${service.baseUrl}/stall`, 300).me(), (error: unknown) => {
      assert.ok(error instanceof ConnectionError);
      assert.equal(error.message, "GET /v1/me: the answer's body did not come within 300 ms");
      return true;
    });
    assert.ok(Date.now() - started < 5_000, `${Date.now() - started} ms`);
  });

  test('0 sets no limit; a negative or non-numeric timeout is refused', async () => {
    assert.deepEqual(await client(`${service.baseUrl}/300`, 0).tasks.get('t1'), TASK);
    assert.throws(() => client(service.baseUrl, -1), /timeoutMs/);
    assert.throws(() => client(service.baseUrl, Number.NaN), /timeoutMs/);
  });
});

test('the retry and time options are refused when they are no count or length at all', () => {
  // NaN (an unset variable through Number()) would let a failing call be repeated forever.
  for (const maxRetries of [Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY])
    assert.throws(() => new Client({ apiKey: 'k', maxRetries }), /maxRetries/, String(maxRetries));
  for (const maxRetryDelayMs of [Number.NaN, -1])
    assert.throws(
      () => new Client({ apiKey: 'k', maxRetryDelayMs }),
      /maxRetryDelayMs/,
      String(maxRetryDelayMs),
    );
  assert.throws(() => new Client({ apiKey: 'k', timeoutMs: Number.NaN }), /timeoutMs/);
  assert.equal(new Client({ apiKey: 'k', maxRetries: 0 }).constructor, Client);
});
