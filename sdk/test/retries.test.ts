/** Retries: the same Idempotency-Key on every attempt of a creation, Retry-After honoured, bounded. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, ConnectionError, type FetchLike, RateLimitError, ServerError } from '../src/index.ts';
import { type LiveApp, startLiveApp } from './live-app.ts';

interface Seen {
  method: string;
  url: string;
  key: string | null;
  range: string | null;
}

/** A fetch in front of the real one: `script` decides per attempt what happens instead. */
function scriptedFetch(script: (attempt: number, real: () => Promise<Response>) => Promise<Response>): {
  fetch: FetchLike;
  seen: Seen[];
} {
  const seen: Seen[] = [];
  const fetch: FetchLike = (input, init) => {
    const headers = new Headers(init.headers);
    seen.push({
      method: init.method ?? 'GET',
      url: input,
      key: headers.get('idempotency-key'),
      range: headers.get('range'),
    });
    return script(seen.length, () => globalThis.fetch(input, init));
  };
  return { fetch, seen };
}

const answer = (status: number, headers: Record<string, string> = {}): Response =>
  new Response(
    JSON.stringify({
      error: {
        code: status === 429 ? 'rate_limited' : status === 500 ? 'internal_error' : 'sg_unavailable',
        message: 'x',
      },
    }),
    {
      status,
      headers: { 'content-type': 'application/json', 'x-request-id': `req-${status}`, ...headers },
    },
  );

describe('retries', () => {
  let live: LiveApp;
  before(async () => {
    live = await startLiveApp();
  });
  after(() => live.close());

  const taskCount = async (): Promise<number> =>
    (await new Client({ apiKey: live.account.key, baseUrl: live.baseUrl }).tasks.list({ limit: 100 })).tasks
      .length;
  const noSleep = { sleep: async (): Promise<void> => {} };

  test('a creation whose answer was lost is retried under the same key: one task, one hold', async () => {
    const before = await taskCount();
    // The first attempt reaches the service (the task is made) but its answer never arrives.
    const { fetch, seen } = scriptedFetch(async (attempt, real) => {
      const response = await real();
      if (attempt === 1) throw new TypeError('fetch failed: socket hang up');
      return response;
    });
    const c = new Client({ apiKey: live.account.key, baseUrl: live.baseUrl, fetch, ...noSleep });
    const task = await c.tasks.create({ model: 'image', settings: { prompt: 'retried' } });
    assert.equal(seen.length, 2);
    assert.ok(seen[0]!.key && seen[0]!.key === seen[1]!.key, 'one Idempotency-Key for both attempts');
    assert.equal((await taskCount()) - before, 1);
    assert.equal((await c.tasks.get(task.id)).id, task.id);
  });

  test('an answer whose body breaks off is a network error: a creation is repeated under its key', async () => {
    const before = await taskCount();
    // The status and headers arrive, then the connection drops in the middle of the JSON body.
    const cutBody = async (response: Response): Promise<Response> => {
      const text = await response.text();
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(text.slice(0, 20)));
          controller.error(new TypeError('terminated'));
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const { fetch, seen } = scriptedFetch(async (attempt, real) =>
      attempt === 1 ? cutBody(await real()) : real(),
    );
    const c = new Client({ apiKey: live.account.key, baseUrl: live.baseUrl, fetch, ...noSleep });
    const task = await c.tasks.create({ model: 'image', settings: { prompt: 'cut answer [sim:hang]' } });
    assert.equal(seen.length, 2);
    assert.ok(seen[0]!.key && seen[0]!.key === seen[1]!.key, 'one Idempotency-Key for both attempts');
    assert.equal((await taskCount()) - before, 1);
    assert.equal((await c.tasks.get(task.id)).id, task.id);

    // A call that is not safe to repeat is not repeated: its broken answer is a ConnectionError (the task
    // was canceled all the same).
    const once = scriptedFetch(async (_attempt, real) => cutBody(await real()));
    const other = new Client({
      apiKey: live.account.key,
      baseUrl: live.baseUrl,
      fetch: once.fetch,
      ...noSleep,
    });
    const error = await other.tasks.cancel(task.id).catch((e: unknown) => e);
    assert.ok(error instanceof ConnectionError, String(error));
    assert.match(error.message, /^POST \/v1\/tasks\/[^/]+\/cancel: terminated$/);
    assert.equal(once.seen.length, 1);
    assert.equal((await c.tasks.get(task.id)).status, 'canceled');
  });

  test('503 before the service: retried with the same key, then the task is made once', async () => {
    const before = await taskCount();
    const { fetch, seen } = scriptedFetch(async (attempt, real) =>
      attempt === 1 ? answer(503, { 'retry-after': '0' }) : real(),
    );
    const c = new Client({ apiKey: live.account.key, baseUrl: live.baseUrl, fetch, ...noSleep });
    await c.tasks.create({ model: 'image', settings: { prompt: 'after 503' } }, { idempotencyKey: 'mine-1' });
    assert.deepEqual(
      seen.map((s) => s.key),
      ['mine-1', 'mine-1'],
    );
    assert.equal((await taskCount()) - before, 1);
  });

  test('a 500, or a gateway’s 502/504, is repeated only where that is harmless', async () => {
    const gateway = (status: number): Response =>
      new Response('<html>Bad Gateway</html>', { status, headers: { 'content-type': 'text/html' } });
    // A read after the service's 500 internal_error ("retry later").
    const pauses: number[] = [];
    const read = scriptedFetch(async (attempt, real) =>
      attempt === 1 ? answer(500, { 'x-request-id': 'req-500' }) : real(),
    );
    const c = new Client({
      apiKey: live.account.key,
      baseUrl: live.baseUrl,
      fetch: read.fetch,
      sleep: async (ms) => {
        pauses.push(ms);
      },
    });
    assert.equal((await c.me()).account_id, live.account.id);
    assert.equal(read.seen.length, 2);
    assert.deepEqual(pauses, [500]);

    // A creation the service made, whose answer a gateway replaced by its 504 page: the repeat under the
    // same key finds it.
    const before = await taskCount();
    const lost = scriptedFetch(async (attempt, real) => {
      const response = await real();
      return attempt === 1 ? gateway(504) : response;
    });
    const keyed = new Client({
      apiKey: live.account.key,
      baseUrl: live.baseUrl,
      fetch: lost.fetch,
      ...noSleep,
    });
    const task = await keyed.tasks.create({
      model: 'image',
      settings: { prompt: 'behind a gateway [sim:hang]' },
    });
    assert.equal(lost.seen.length, 2);
    assert.ok(lost.seen[0]!.key && lost.seen[0]!.key === lost.seen[1]!.key, 'one Idempotency-Key');
    assert.equal((await taskCount()) - before, 1);

    // Not a cancel (no key), nor the service's own 502 of a library creation (the generator refused it).
    const cancel = scriptedFetch(async () => gateway(502));
    const plain = new Client({
      apiKey: live.account.key,
      baseUrl: live.baseUrl,
      fetch: cancel.fetch,
      ...noSleep,
    });
    const error = await plain.tasks.cancel(task.id).catch((e: unknown) => e);
    assert.ok(error instanceof ServerError);
    assert.equal(error.code, 'http_502');
    assert.equal(cancel.seen.length, 1);
    const refused = scriptedFetch(async () =>
      Response.json({ error: { code: 'library_create_failed', message: 'x' } }, { status: 502 }),
    );
    const library = new Client({ apiKey: 'k', baseUrl: live.baseUrl, fetch: refused.fetch, ...noSleep });
    await assert.rejects(
      library.libraries('image', 'styles').create({ name: 'S', image_urls: ['https://x/a.png'] }),
      ServerError,
    );
    assert.equal(refused.seen.length, 1);
  });

  test('429 waits the Retry-After seconds before the next attempt', async () => {
    const pauses: number[] = [];
    const { fetch, seen } = scriptedFetch(async (attempt, real) =>
      attempt === 1 ? answer(429, { 'retry-after': '7' }) : real(),
    );
    const c = new Client({
      apiKey: live.account.key,
      baseUrl: live.baseUrl,
      fetch,
      sleep: async (ms) => {
        pauses.push(ms);
      },
    });
    const me = await c.me();
    assert.equal(me.account_id, live.account.id);
    assert.equal(seen.length, 2);
    assert.deepEqual(pauses, [7_000]);
  });

  test('a Retry-After longer than maxRetryDelayMs is thrown at once, not waited for in part', async () => {
    const pauses: number[] = [];
    const { fetch, seen } = scriptedFetch(async () => answer(429, { 'retry-after': '3021' }));
    const c = new Client({
      apiKey: 'k',
      baseUrl: live.baseUrl,
      fetch,
      sleep: async (ms) => {
        pauses.push(ms);
      },
    });
    const error = await c.me().catch((e: unknown) => e);
    assert.ok(error instanceof RateLimitError);
    assert.equal(error.retryAfterSeconds, 3021);
    assert.equal(seen.length, 1);
    assert.deepEqual(pauses, []);
  });

  test('retries stop after maxRetries: the last refusal is thrown, typed, with its request id', async () => {
    const { fetch, seen } = scriptedFetch(async () => answer(503, { 'retry-after': '1' }));
    const c = new Client({ apiKey: 'k', baseUrl: live.baseUrl, fetch, maxRetries: 3, ...noSleep });
    const error = await c.me().catch((e: unknown) => e);
    assert.ok(error instanceof ServerError);
    assert.equal(error.code, 'sg_unavailable');
    assert.equal(error.requestId, 'req-503');
    assert.equal(error.retryAfterSeconds, 1);
    assert.equal(seen.length, 4);

    const limited = scriptedFetch(async () => answer(429, { 'retry-after': '1' }));
    const once = new Client({ apiKey: 'k', baseUrl: live.baseUrl, fetch: limited.fetch, maxRetries: 0 });
    await assert.rejects(once.me(), RateLimitError);
    assert.equal(limited.seen.length, 1);
  });

  test('a network error on a call that is not safe to repeat is not retried', async () => {
    const { fetch, seen } = scriptedFetch(async () => {
      throw new TypeError('fetch failed');
    });
    const c = new Client({ apiKey: 'k', baseUrl: live.baseUrl, fetch, ...noSleep });
    await assert.rejects(c.tasks.cancel('some-task'), ConnectionError);
    assert.equal(seen.length, 1);
    await assert.rejects(c.tasks.get('some-task'), ConnectionError);
    assert.equal(seen.length, 1 + 3, 'a read is tried 1 + maxRetries (2) times');
  });

  test('a download cut in the middle resumes from the bytes received; cuts without progress: ConnectionError', async () => {
    const c = new Client({ apiKey: live.account.key, baseUrl: live.baseUrl });
    const task = await c.tasks.wait(
      (await c.tasks.create({ model: 'image', settings: { prompt: 'cut' } })).id,
    );
    const whole = await c.tasks.download(task.id, 0);
    // The body breaks after its first `at` bytes, as a dropped connection does.
    const cut = (response: Response, at = 1000): Response => {
      const reader = response.body!.getReader();
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done) return controller.close();
          if (sent + value.length > at) {
            if (at > sent) controller.enqueue(value.subarray(0, at - sent));
            controller.error(new TypeError('terminated'));
            return;
          }
          sent += value.length;
          controller.enqueue(value);
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const once = scriptedFetch(async (attempt, real) => (attempt === 1 ? cut(await real()) : real()));
    const resumed = new Client({
      apiKey: live.account.key,
      baseUrl: live.baseUrl,
      fetch: once.fetch,
      ...noSleep,
    });
    assert.deepEqual(await resumed.tasks.download(task.id, 0), whole);
    assert.deepEqual(
      once.seen.map((s) => s.range),
      [null, 'bytes=1000-'],
    );

    const always = scriptedFetch(async (_attempt, real) => cut(await real(), 0));
    const broken = new Client({
      apiKey: live.account.key,
      baseUrl: live.baseUrl,
      fetch: always.fetch,
      ...noSleep,
    });
    await assert.rejects(broken.tasks.download(task.id, 0), ConnectionError);
    assert.equal(always.seen.length, 3, '1 + maxRetries (2) attempts');
  });

  test('a download that breaks after its last byte is whole: the resume’s 416 ends it', async () => {
    const c = new Client({ apiKey: live.account.key, baseUrl: live.baseUrl });
    const task = await c.tasks.wait(
      (await c.tasks.create({ model: 'image', settings: { prompt: 'last byte' } })).id,
    );
    const whole = await c.tasks.download(task.id, 0);
    // Every byte arrives, then the connection fails instead of ending (a lost last chunk).
    const brokenEnd = (response: Response): Response => {
      const reader = response.body!.getReader();
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done) controller.error(new TypeError('terminated'));
          else controller.enqueue(value);
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const once = scriptedFetch(async (attempt, real) => (attempt === 1 ? brokenEnd(await real()) : real()));
    const resumed = new Client({
      apiKey: live.account.key,
      baseUrl: live.baseUrl,
      fetch: once.fetch,
      ...noSleep,
    });
    assert.deepEqual(await resumed.tasks.download(task.id, 0), whole);
    assert.deepEqual(
      once.seen.map((s) => s.range),
      [null, `bytes=${whole.length}-`],
    );
  });
});
