/**
 * The calls whose endpoints this service version may lack (webhooks, CONTRACT §12) or that need a
 * provider's state (singing voices): each method sends the contract's method, path and body.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client, type FetchLike } from '../src/index.ts';

interface Sent {
  method: string;
  path: string;
  body: unknown;
  headers: Headers;
}

function recording(answers: Record<string, unknown>): { c: Client; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetch: FetchLike = async (input, init) => {
    const url = new URL(input);
    const method = init.method ?? 'GET';
    sent.push({
      method,
      path: url.pathname + url.search,
      body: typeof init.body === 'string' ? JSON.parse(init.body) : init.body,
      headers: new Headers(init.headers),
    });
    const answer = answers[`${method} ${url.pathname}`];
    return answer === undefined
      ? new Response(null, { status: 204 })
      : new Response(JSON.stringify(answer), {
          status: 200,
          headers: { 'content-type': 'application/json' },
        });
  };
  return { c: new Client({ apiKey: 'gta_key', baseUrl: 'https://api.example/', fetch, lang: 'ru' }), sent };
}

test('webhook endpoints: create, list, delete, rotate-secret, default secret', async () => {
  const endpoint = {
    id: 'wh1',
    url: 'https://hooks.example/x',
    events: ['task.succeeded'],
    created_at: 'now',
  };
  const { c, sent } = recording({
    'POST /v1/webhooks': { ...endpoint, secret: 'whsec_a' },
    'GET /v1/webhooks': { webhooks: [endpoint] },
    'POST /v1/webhooks/wh1/rotate-secret': { secret: 'whsec_b' },
    'GET /v1/webhooks/default/secret': { secret: 'whsec_d' },
  });
  assert.equal(
    (await c.webhooks.create({ url: endpoint.url, events: ['task.succeeded'] })).secret,
    'whsec_a',
  );
  assert.deepEqual(await c.webhooks.list(), [endpoint]);
  await c.webhooks.delete('wh1');
  assert.equal(await c.webhooks.rotateSecret('wh1'), 'whsec_b');
  assert.equal(await c.webhooks.defaultSecret(), 'whsec_d');
  assert.deepEqual(
    sent.map((s) => `${s.method} ${s.path}`),
    [
      'POST /v1/webhooks',
      'GET /v1/webhooks',
      'DELETE /v1/webhooks/wh1',
      'POST /v1/webhooks/wh1/rotate-secret',
      'GET /v1/webhooks/default/secret',
    ],
  );
  assert.deepEqual(sent[0]!.body, { url: endpoint.url, events: ['task.succeeded'] });
  for (const s of sent) {
    assert.equal(s.headers.get('authorization'), 'Bearer gta_key');
    assert.equal(s.headers.get('accept-language'), 'ru');
  }
});

test('singing voice steps, a task with a webhook and Prefer: wait, ids escaped in paths', async () => {
  const { c, sent } = recording({});
  await c.singingVoices.verify('v/1', { recording_url: 'https://x/r.mp3', name: 'Me' });
  await c.singingVoices.retry('v1');
  await c.tasks.create(
    {
      model: 'image',
      settings: { prompt: 'x' },
      webhook_url: 'https://hooks.example/t',
      webhook_events: ['task.failed'],
    },
    { wait: 30, idempotencyKey: 'k-1' },
  );
  assert.deepEqual(
    sent.map((s) => `${s.method} ${s.path}`),
    ['POST /v1/models/music/voices/v%2F1/verify', 'POST /v1/models/music/voices/v1/retry', 'POST /v1/tasks'],
  );
  assert.equal(sent[2]!.headers.get('prefer'), 'wait=30');
  assert.equal(sent[2]!.headers.get('idempotency-key'), 'k-1');
  assert.deepEqual(sent[2]!.body, {
    model: 'image',
    settings: { prompt: 'x' },
    webhook_url: 'https://hooks.example/t',
    webhook_events: ['task.failed'],
  });
});

test('a wait is sent as the service takes it, whole seconds 1–60, by get as by create', async () => {
  const { c, sent } = recording({ 'GET /v1/tasks/t1': { id: 't1', status: 'running' } });
  for (const wait of [2.5, 90, 0.4]) {
    await c.tasks.get('t1', { wait });
    await c.tasks.create({ model: 'image', settings: { prompt: 'x' } }, { wait });
  }
  assert.deepEqual(
    sent.map((s) => (s.method === 'GET' ? s.path : s.headers.get('prefer'))),
    ['/v1/tasks/t1?wait=3', 'wait=3', '/v1/tasks/t1?wait=60', 'wait=60', '/v1/tasks/t1?wait=1', 'wait=1'],
  );
});

test('every creation carries a UUID Idempotency-Key, also where crypto.randomUUID is missing', async () => {
  const { c, sent } = recording({});
  await c.tasks.create({ model: 'image', settings: { prompt: 'x' } });
  // As in a browser page served over plain http: getRandomValues only.
  Object.defineProperty(crypto, 'randomUUID', { value: undefined, configurable: true });
  try {
    await c.tasks.create({ model: 'image', settings: { prompt: 'x' } });
    await c.libraries('image', 'styles').create({ name: 'S', image_urls: ['https://x/a.png'] });
  } finally {
    Reflect.deleteProperty(crypto, 'randomUUID');
  }
  const keys = sent.map((s) => s.headers.get('idempotency-key') ?? '');
  for (const key of keys)
    assert.match(key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(new Set(keys).size, 3);
  assert.equal(typeof crypto.randomUUID, 'function');
});
