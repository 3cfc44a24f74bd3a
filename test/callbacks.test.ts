import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { hashToken } from '../src/generators/adapters/callback-store.ts';
import { MAX_JSON_VALUES } from '../src/http/json-body.ts';
import { CALLBACK_BODY_LIMIT, CALLBACK_BODY_LIMITS } from '../src/http/limits.ts';
import { expectError, startTestApp, type TestApp } from './helpers.ts';
import { writeChannelFile } from './providers-kit.ts';

/** Nobody listens there: the channels below only need to exist for their callbacks. */
const NOWHERE = 'http://127.0.0.1:9';

/** Two Cog channels, a Suno one and a Seedance one (Seedance posts no callbacks: PROVIDERS.md §4). */
const CHANNELS = [
  { name: 'cog-a', provider: 'cog', models: ['image'], base_url: NOWHERE },
  { name: 'cog-b', provider: 'cog', models: ['image'], base_url: NOWHERE },
  { name: 'suno-a', provider: 'suno', models: ['music'], base_url: NOWHERE, api_key_env: 'SUNO_API_KEY' },
  {
    name: 'seedance-a',
    provider: 'seedance',
    models: ['video'],
    base_url: NOWHERE,
    api_key_env: 'ARK_API_KEY',
  },
];

describe('provider callbacks (CONTRACT §11)', () => {
  let t: TestApp;
  before(async () => {
    // No worker: the tasks stay queued until a test finishes them.
    t = await startTestApp({
      worker: false,
      env: { GENERATORS_FILE: writeChannelFile(CHANNELS), SUNO_API_KEY: 'k', ARK_API_KEY: 'k' },
    });
  });
  after(() => t.close());

  async function queuedTask(): Promise<string> {
    const acct = await t.account({ balanceMinor: 10_000 });
    const created = await t.call(acct.key, 'POST', '/v1/tasks', {
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt: 'a chair', texture: false, pbr: false },
    });
    assert.equal(created.statusCode, 202, created.body);
    return created.json().id as string;
  }

  async function addressFor(channel: string, runKey: string): Promise<string> {
    const callbacks = t.container.services.callbacks.forChannel(channel);
    const url = callbacks.urlFor(runKey);
    await callbacks.settled();
    return new URL(url).pathname;
  }

  test('stores the body of a known token, oldest first, and keeps only the hash', async () => {
    const taskId = await queuedTask();
    const runKey = `${taskId}/1`;
    const path = await addressFor('cog-a', runKey);
    assert.match(path, /^\/v1\/callbacks\/cog-a\/[A-Za-z0-9]{32}$/);
    const first = await t.app.inject({ method: 'POST', url: path, payload: { status: 'processing' } });
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json(), { received: true });
    await t.app.inject({ method: 'POST', url: path, payload: { status: 'succeeded', output: ['x'] } });
    const bodies = await t.container.services.callbacks.received(runKey);
    assert.deepEqual(bodies, [{ status: 'processing' }, { status: 'succeeded', output: ['x'] }]);
    const token = path.split('/').pop() as string;
    const rows = await t.container.db.db.selectFrom('callback_tokens').selectAll().execute();
    assert.ok(rows.some((row) => row.token_hash === hashToken(token) && row.run_key === runKey));
    assert.ok(
      rows.every((row) => row.token_hash !== token),
      'the plain token is never stored',
    );
  });

  test('the same run gets the same address from one channel; another run another', async () => {
    const callbacks = t.container.services.callbacks.forChannel('cog-a');
    assert.equal(callbacks.urlFor('t1/1'), callbacks.urlFor('t1/1'));
    assert.notEqual(callbacks.urlFor('t1/1'), callbacks.urlFor('t1/2'));
    await callbacks.settled();
  });

  test('a wrong token or another channel answers 404 not_found and stores nothing', async () => {
    const taskId = await queuedTask();
    const runKey = `${taskId}/1`;
    const path = await addressFor('cog-a', runKey);
    const token = path.split('/').pop() as string;
    const wrongToken = await t.app.inject({
      method: 'POST',
      url: `/v1/callbacks/cog-a/${'A'.repeat(32)}`,
      payload: { status: 'succeeded' },
    });
    expectError(wrongToken, 404, 'not_found');
    assert.ok(!wrongToken.body.includes('AAAAAAAA'), 'the token is not echoed');
    const otherChannel = await t.app.inject({
      method: 'POST',
      url: `/v1/callbacks/cog-b/${token}`,
      payload: { status: 'succeeded' },
    });
    expectError(otherChannel, 404, 'not_found');
    const badShape = await t.app.inject({
      method: 'POST',
      url: '/v1/callbacks/cog-a/not-a-token!',
      payload: {},
    });
    expectError(badShape, 404, 'not_found');
    assert.deepEqual(await t.container.services.callbacks.received(runKey), []);
  });

  test('a token of a channel not in the file, or of a provider that posts none, answers 404', async () => {
    const taskId = await queuedTask();
    for (const channel of ['gone-from-the-file', 'seedance-a']) {
      const runKey = `${taskId}/${channel}`;
      const res = await t.app.inject({
        method: 'POST',
        url: await addressFor(channel, runKey),
        payload: { status: 'succeeded' },
      });
      expectError(res, 404, 'not_found');
      assert.deepEqual(await t.container.services.callbacks.received(runKey), []);
    }
  });

  test('an unknown channel or token answers 404 before its body is read or parsed', async () => {
    const path = await addressFor('suno-a', `${await queuedTask()}/1`);
    const wrong = [
      `/v1/callbacks/cog-a/${'A'.repeat(32)}`,
      `/v1/callbacks/suno-a/${'A'.repeat(32)}`,
      `/v1/callbacks/nowhere/${path.split('/').pop()}`,
    ];
    const overSuno = JSON.stringify({ data: 'x'.repeat(CALLBACK_BODY_LIMITS.suno) });
    const bodies: Array<{ payload: string | Readable; type: string }> = [
      // Parsed, these would be 422 invalid_request, 422 (an unsupported type) and 413.
      { payload: 'this is not JSON at all', type: 'application/json' },
      { payload: '<xml/>', type: 'application/xml' },
      { payload: overSuno, type: 'application/json' },
      // Read, a body that never ends would never be answered.
      { payload: new Readable({ read() {} }), type: 'application/json' },
    ];
    for (const url of wrong) {
      for (const { payload, type } of bodies) {
        const res = await t.app.inject({ method: 'POST', url, payload, headers: { 'content-type': type } });
        expectError(res, 404, 'not_found');
      }
    }
  });

  test("a body over its provider's cap answers 413 request_too_large and stores nothing", async () => {
    const runKey = `${await queuedTask()}/1`;
    const path = await addressFor('suno-a', runKey);
    const cap = CALLBACK_BODY_LIMITS.suno;
    const over = JSON.stringify({ code: 200, data: { callbackType: 'complete', note: 'x'.repeat(cap) } });
    const declared = await t.app.inject({
      method: 'POST',
      url: path,
      payload: over,
      headers: { 'content-type': 'application/json' },
    });
    expectError(declared, 413, 'request_too_large');
    assert.match(declared.json().error.message, /256 KB/);
    // Sent chunked, with no length to check first: counted as it comes.
    const chunked = await t.app.inject({
      method: 'POST',
      url: path,
      payload: Readable.from([over.slice(0, cap / 2), over.slice(cap / 2)]),
      headers: { 'content-type': 'application/json' },
    });
    expectError(chunked, 413, 'request_too_large');
    assert.deepEqual(await t.container.services.callbacks.received(runKey), []);
    const small = { code: 200, data: { callbackType: 'complete', task_id: 'x' } };
    const taken = await t.app.inject({ method: 'POST', url: path, payload: small });
    assert.deepEqual(taken.json(), { received: true });
    const streamed = await t.app.inject({
      method: 'POST',
      url: path,
      payload: Readable.from([JSON.stringify(small)]),
      headers: { 'content-type': 'application/json' },
    });
    assert.deepEqual(streamed.json(), { received: true });
    assert.deepEqual(await t.container.services.callbacks.received(runKey), [small, small]);
  });

  test('a callback is JSON whatever type it names, or none; a body that is not JSON is still refused', async () => {
    const runKey = `${await queuedTask()}/1`;
    const path = await addressFor('cog-a', runKey);
    const body = { id: 'p1', status: 'succeeded', output: 'data:text/plain;base64,aGk=' };
    // What `fetch(url, { method: 'POST', body: JSON.stringify(p) })` sends: text/plain;charset=UTF-8.
    for (const headers of [
      { 'content-type': 'text/plain;charset=UTF-8' },
      { 'content-type': 'application/x-www-form-urlencoded' },
      {},
    ]) {
      const res = await t.app.inject({ method: 'POST', url: path, payload: JSON.stringify(body), headers });
      assert.equal(res.statusCode, 200, `${JSON.stringify(headers)}: ${res.body}`);
      assert.deepEqual(res.json(), { received: true });
    }
    assert.deepEqual(await t.container.services.callbacks.received(runKey), [body, body, body]);
    const broken = await t.app.inject({
      method: 'POST',
      url: path,
      payload: 'not JSON',
      headers: { 'content-type': 'text/plain' },
    });
    expectError(broken, 422, 'invalid_request');
  });

  test('a body of more values than a parse may take answers 422 and stores nothing', async () => {
    const runKey = `${await queuedTask()}/1`;
    const path = await addressFor('cog-a', runKey);
    const res = await t.app.inject({
      method: 'POST',
      url: path,
      payload: `[${'0,'.repeat(MAX_JSON_VALUES)}0]`,
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, 422, 'invalid_request');
    assert.deepEqual(await t.container.services.callbacks.received(runKey), []);
  });

  test('a callback for a finished run answers 200 and has no effect', async () => {
    const taskId = await queuedTask();
    const runKey = `${taskId}/1`;
    const path = await addressFor('cog-a', runKey);
    const acctTask = await t.container.db.db
      .selectFrom('tasks')
      .select('account_id')
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    const key = await t.admin('POST', `/admin/v1/accounts/${acctTask.account_id}/keys`, {});
    const canceled = await t.call(key.json().key as string, 'POST', `/v1/tasks/${taskId}/cancel`);
    assert.equal(canceled.statusCode, 200, canceled.body);
    const late = await t.app.inject({ method: 'POST', url: path, payload: { status: 'succeeded' } });
    assert.equal(late.statusCode, 200, late.body);
    assert.deepEqual(late.json(), { received: false });
    assert.deepEqual(await t.container.services.callbacks.received(runKey), []);
    // Swept once the task has been final a while: the address is then unknown; a live run's stays.
    const livePath = await addressFor('cog-a', `${await queuedTask()}/1`);
    const swept = await t.container.services.callbacks.sweep(new Date(Date.now() + 60_000));
    assert.ok(swept >= 1);
    expectError(await t.app.inject({ method: 'POST', url: path, payload: {} }), 404, 'not_found');
    const live = await t.app.inject({ method: 'POST', url: livePath, payload: { status: 'starting' } });
    assert.deepEqual(live.json(), { received: true });
  });

  test("a Cog body over Cog's cap answers 413 request_too_large and stores nothing", async () => {
    const taskId = await queuedTask();
    const runKey = `${taskId}/1`;
    const path = await addressFor('cog-a', runKey);
    const payload = JSON.stringify({ output: 'x'.repeat(CALLBACK_BODY_LIMITS.cog) });
    const res = await t.app.inject({
      method: 'POST',
      url: path,
      payload,
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, 413, 'request_too_large');
    assert.deepEqual(await t.container.services.callbacks.received(runKey), []);
  });

  test("Cog's completed webhook with its files inside is taken whole", async () => {
    const runKey = `${await queuedTask()}/1`;
    const path = await addressFor('cog-a', runKey);
    assert.equal(CALLBACK_BODY_LIMIT, CALLBACK_BODY_LIMITS.cog, "the route's own cap is Cog's");
    const png = `data:image/png;base64,${Buffer.alloc(6 * 1024 * 1024, 7).toString('base64')}`;
    const completed = { id: 'p1', status: 'succeeded', output: [png], logs: 'step 1, step 2', error: null };
    const res = await t.app.inject({ method: 'POST', url: path, payload: completed });
    assert.equal(res.statusCode, 200, res.body.slice(0, 200));
    assert.deepEqual(await t.container.services.callbacks.received(runKey), [completed]);
  });

  test('over a connection: an unknown address closes it after the 404; the next call works', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const refused = await fetch(`${base}/v1/callbacks/cog-a/${'A'.repeat(32)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat(8 * 1024 * 1024),
    });
    assert.equal(refused.status, 404);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'not_found');
    assert.equal(refused.headers.get('connection'), 'close');
    const health = await fetch(`${base}/healthz`);
    assert.equal(health.status, 200);
    // A callback read whole keeps its connection.
    const path = await addressFor('cog-a', `${await queuedTask()}/1`);
    const taken = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'starting' }),
    });
    assert.deepEqual(await taken.json(), { received: true });
    assert.equal(taken.headers.get('connection'), 'keep-alive');
  });

  test('a stored callback wakes the worker of this process', async () => {
    const taskId = await queuedTask();
    const runKey = `${taskId}/1`;
    const path = await addressFor('cog-a', runKey);
    let woken = 0;
    const worker = t.container.worker;
    const original = worker.wake.bind(worker);
    worker.wake = () => {
      woken += 1;
      original();
    };
    try {
      await t.app.inject({ method: 'POST', url: path, payload: { status: 'processing' } });
    } finally {
      worker.wake = original;
    }
    assert.equal(woken, 1);
  });

  test('a run waiting for its next callback is woken by it, and only by its own', async () => {
    const taskId = await queuedTask();
    const runKey = `${taskId}/1`;
    const path = await addressFor('cog-a', runKey);
    const otherPath = await addressFor('cog-a', `${await queuedTask()}/1`);
    const store = t.container.services.callbacks;
    let woken = false;
    const waiting = store.nextCallback(runKey, AbortSignal.timeout(20_000)).then(() => {
      woken = true;
    });
    await t.app.inject({ method: 'POST', url: otherPath, payload: { status: 'processing' } });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(woken, false, 'not woken by another run');
    await t.app.inject({ method: 'POST', url: path, payload: { status: 'processing' } });
    await waiting;
    assert.equal(woken, true);
    const abort = new AbortController();
    const given = store.nextCallback(runKey, abort.signal);
    abort.abort();
    await given;
  });
});
