/**
 * The client's waiting and webhooks against the real service (CONTRACT §12): `run` follows the real event
 * stream, `stream` yields every state to the final one, `wait` long-polls, and the webhook calls manage real
 * endpoints whose signed deliveries `webhooks.verify` accepts.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { AuthenticationError, Client, verify } from '../src/index.ts';
import { type LiveApp, startLiveApp } from './live-app.ts';

describe('Client waiting and webhooks against the service', () => {
  let live: LiveApp;
  const urls: string[] = [];
  let c: Client;
  before(async () => {
    live = await startLiveApp(10_000_000, { FETCH_ALLOW_ADDRESSES: '127.0.0.1' });
    live.t.container.webhookSender.start();
    const recording: typeof fetch = (input, init) => {
      urls.push(String(input instanceof Request ? input.url : input));
      return fetch(input, init);
    };
    c = new Client({ apiKey: live.account.key, baseUrl: live.baseUrl, fetch: recording });
  });
  after(async () => {
    await live.t.container.webhookSender.stop();
    await live.close();
  });

  test('run follows the event stream to the final task', async () => {
    urls.length = 0;
    const states: string[] = [];
    const task = await c.tasks.run(
      { model: 'image', settings: { prompt: 'a red fox' } },
      { timeoutMs: 60_000, onUpdate: (s) => states.push(s.status) },
    );
    assert.equal(task.status, 'succeeded');
    assert.ok(
      urls.some((u) => u.endsWith(`/v1/tasks/${task.id}/events`)),
      'the event stream was used',
    );
    assert.equal(states.at(-1), 'succeeded');
    assert.deepEqual(await c.tasks.get(task.id), task);
  });

  test('stream yields the states in order, ending with the final task', async () => {
    const created = await c.tasks.create({ model: 'image', settings: { prompt: 'a blue bird' } });
    const seen = [];
    for await (const state of c.tasks.stream(created.id)) seen.push(state);
    assert.ok(seen.length >= 1);
    assert.equal(seen.at(-1)?.status, 'succeeded');
    const progress = seen.map((s) => s.progress);
    assert.deepEqual(
      progress,
      [...progress].sort((a, b) => a - b),
    );
  });

  test('wait long-polls with ?wait=', async () => {
    urls.length = 0;
    const created = await c.tasks.create({ model: 'image', settings: { prompt: 'a green frog' } });
    const final = await c.tasks.wait(created.id, { timeoutMs: 60_000 });
    assert.equal(final.status, 'succeeded');
    assert.ok(urls.some((u) => /\/v1\/tasks\/[^/]+\?wait=\d+/.test(u)));
  });

  test('webhook endpoints: create, list without secrets, deliveries verified, rotate, delete', async () => {
    const received: Array<{ body: string; headers: http.IncomingHttpHeaders }> = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        body += chunk;
      });
      req.on('end', () => {
        received.push({ body, headers: req.headers });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    try {
      const endpoint = await c.webhooks.create(
        { url, events: ['task.succeeded'] },
        { idempotencyKey: 'hook-a' },
      );
      // A retry under the same key answers the same endpoint and secret; get reads it without the secret.
      const again = await c.webhooks.create(
        { url, events: ['task.succeeded'] },
        { idempotencyKey: 'hook-a' },
      );
      assert.deepEqual(again, endpoint);
      const { secret: _secret, ...shown } = endpoint;
      assert.deepEqual(await c.webhooks.get(endpoint.id), shown);
      assert.match(endpoint.secret ?? '', /^whsec_/);
      const listed = await c.webhooks.list();
      assert.deepEqual(
        listed.map((w) => w.id),
        [endpoint.id],
      );
      assert.equal('secret' in listed[0]!, false);
      const defaultSecret = await c.webhooks.defaultSecret();
      const task = await c.tasks.run(
        { model: 'image', settings: { prompt: 'a hook' }, webhook_url: url },
        { timeoutMs: 60_000 },
      );
      const deadline = Date.now() + 30_000;
      while (received.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(received.length, 2, 'one delivery to the endpoint, one to the task webhook');
      const verified = received.map(({ body, headers }) => {
        const flat = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)]));
        try {
          return verify(body, flat, endpoint.secret!);
        } catch {
          return verify(body, flat, defaultSecret);
        }
      });
      for (const event of verified) {
        assert.equal(event.type, 'task.succeeded');
        assert.deepEqual(event.data, task);
      }
      assert.throws(() =>
        verify(
          received[0]!.body.replace('succeeded', 'failed'),
          flatten(received[0]!.headers),
          defaultSecret,
        ),
      );
      const rotated = await c.webhooks.rotateSecret(endpoint.id);
      assert.notEqual(rotated, endpoint.secret);
      await c.webhooks.delete(endpoint.id);
      assert.deepEqual(await c.webhooks.list(), []);
    } finally {
      receiver.close();
    }
  });
});

function flatten(headers: http.IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)]));
}

describe('Client.run when the account holds all its waiting places, or loses its key', () => {
  let live: LiveApp;
  before(async () => {
    live = await startLiveApp(10_000_000, { STREAMS_PER_ACCOUNT: '1' });
  });
  after(() => live.close());

  test('a refused stream and long-poll fall back to plain polls: the run ends, no second task', async () => {
    const urls: string[] = [];
    const recording: typeof fetch = (input, init) => {
      urls.push(String(input instanceof Request ? input.url : input));
      return fetch(input, init);
    };
    // The client's usual retries: a 429 for the waiting places is not waited out (5 s a retry) but answered
    // by plain polls at once.
    const c = new Client({ apiKey: live.account.key, baseUrl: live.baseUrl, fetch: recording });
    // The account's only place, held by a stream of a task that never ends.
    const hung = await c.tasks.create({ model: 'image', settings: { prompt: 'hold [sim:hang]' } });
    const holder = new AbortController();
    const held = await fetch(`${live.baseUrl}/v1/tasks/${hung.id}/events`, {
      headers: { authorization: `Bearer ${live.account.key}` },
      signal: holder.signal,
    });
    assert.equal(held.status, 200);
    try {
      const task = await c.tasks.run(
        { model: 'image', settings: { prompt: 'a fox by polls' } },
        { timeoutMs: 60_000 },
      );
      assert.equal(task.status, 'succeeded');
      assert.ok(
        urls.some((u) => u.endsWith(`/v1/tasks/${task.id}`)),
        'plain polls, which take no place',
      );
      assert.equal(
        urls.filter((u) => u.endsWith('/v1/tasks')).length,
        2,
        'two creations: the hung one and this',
      );
      assert.equal(
        urls.filter((u) => u.endsWith(`/v1/tasks/${task.id}/events`)).length,
        1,
        'one refused stream',
      );
      assert.equal(
        urls.filter((u) => u.includes(`/v1/tasks/${task.id}?wait=`)).length,
        1,
        'one refused long-poll',
      );
    } finally {
      holder.abort();
      await c.tasks.cancel(hung.id);
    }
  });

  test('an error after the creation carries the created task', async () => {
    const c = new Client({ apiKey: live.account.key, baseUrl: live.baseUrl, maxRetries: 0 });
    const running = c.tasks.run(
      { model: 'image', settings: { prompt: 'lost key [sim:hang]' } },
      { timeoutMs: 60_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const revoked = await live.t.admin('DELETE', `/admin/v1/keys/${live.account.keyId}`);
    assert.equal(revoked.statusCode, 204);
    const error = await running.then(
      () => assert.fail('the run cannot end with its key revoked'),
      (reason: unknown) => reason as AuthenticationError,
    );
    assert.ok(error instanceof AuthenticationError, String(error));
    assert.match(String(error.task?.id), /^[0-9a-f-]{36}$/);
  });
});
