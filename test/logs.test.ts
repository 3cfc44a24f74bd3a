/**
 * Logs at LOG_LEVEL=info (CONTRACT §15): a few hundred varied requests into a captured stream, then every
 * request has its one line, task transitions have theirs, errors carry their cause, and no secret that
 * was used (keys, tokens, passwords, webhook secrets, callback tokens, provider keys) appears anywhere.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { describe, test } from 'node:test';
import type { AdapterFactory } from '../src/generators/adapters/index.ts';
import { GeneratorTransientError } from '../src/generators/index.ts';
import { makePng, silentWav } from '../src/media/fixtures.ts';
import { ScriptedUpstream, scriptedAdapters, testChannels } from './channel-adapters.ts';
import { ADMIN_TOKEN, startTestApp, type TestAccount, type TestApp, waitForFinal } from './helpers.ts';
import { Captured } from './log-capture.ts';
import { Browser } from './web-kit.ts';

const METRICS_TOKEN = 'metrics-token-for-the-log-test-42';
const PROVIDER_KEY = 'provider-key-Zq81xKv0pL3mN7';
const TASK = { model: 'model-3d', settings: { task_type: 'text_to_model', prompt: 'a chair' } };
const SECRET_QUERY = ['token', 'api_key', 'access_token', 'password', 'signature'];

const random = (prefix: string): string => `${prefix}${randomBytes(16).toString('hex')}`;

/** The first status read of each run fails transiently with the provider key in its message. */
/**
 * An app without a worker whose info lines are captured, listening on a port of its own (the tests here
 * speak raw HTTP to it): the app, its lines and its port.
 */
async function listeningApp(): Promise<{ t: TestApp; captured: Captured; port: number }> {
  const captured = new Captured();
  const t = await startTestApp({
    env: { LOG_LEVEL: 'info', METRICS_TOKEN },
    logDestination: captured,
    worker: false,
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return { t, captured, port: (t.app.server.address() as { port: number }).port };
}

/**
 * The one line of a request whose client left, once written: 499 on `route`, and no second line 300 ms
 * later (the handler ends after its client left; nothing of it may log again).
 */
async function closedLine(
  captured: Captured,
  requestId: string,
  route: string,
): Promise<Record<string, unknown>> {
  const linesOf = () => captured.lines().filter((l) => l.requestId === requestId && l.status);
  for (let i = 0; i < 100 && linesOf().length === 0; i++)
    await new Promise((resolve) => setTimeout(resolve, 20));
  await new Promise((resolve) => setTimeout(resolve, 300));
  const lines = linesOf();
  assert.equal(lines.length, 1, `${requestId}: ${JSON.stringify(lines)}`);
  const [line] = lines as [Record<string, unknown>];
  assert.equal(line.status, 499);
  assert.equal(line.route, route);
  assert.equal(line.msg, 'request closed by the client');
  return line;
}

/** `/metrics` counts `count` requests on `route` closed by their clients (499). */
async function closedSeries(t: TestApp, route: string, count: number): Promise<void> {
  const metrics = await t.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
  const escaped = route.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  assert.match(
    metrics.body,
    new RegExp(`http_requests_total\\{[^}]*route="${escaped}"[^}]*status="499"[^}]*\\} ${count}\n`),
  );
}

function leakyAdapters(upstream: ScriptedUpstream): Record<string, AdapterFactory> {
  const failed = new Set<string>();
  const leaky: AdapterFactory = (deps) => {
    const inner = upstream.factory(deps);
    return {
      ...inner,
      status: async (handle, request, signal) => {
        if (!failed.has(handle)) {
          failed.add(handle);
          throw new GeneratorTransientError(`upstream refused key ${deps.channel.secrets.api_key}`);
        }
        return inner.status(handle, request, signal);
      },
    };
  };
  return Object.fromEntries(Object.keys(scriptedAdapters(upstream)).map((p) => [p, leaky]));
}

function multipart(bytes: Buffer): { payload: Buffer; headers: Record<string, string> } {
  const boundary = '----gta-log-boundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`;
  const payload = Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]);
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

interface Sent {
  id: string;
  status: number;
  /** The account a good key belongs to. */
  accountId?: string;
}

describe('logs (CONTRACT §15)', () => {
  test('a line per request and transition, errors with their cause, and no secret anywhere', async () => {
    const captured = new Captured();
    const channels = testChannels([
      { name: 'main', provider: 'tripo', models: ['model-3d'], api_key_env: 'TEST_KEY' },
    ]).map((c) => ({ ...c, secrets: { api_key: PROVIDER_KEY } }));
    const t: TestApp = await startTestApp({
      env: { LOG_LEVEL: 'info', METRICS_TOKEN },
      logDestination: captured,
      channels,
      adapters: leakyAdapters(new ScriptedUpstream()),
    });
    const secrets = new Set<string>([ADMIN_TOKEN, METRICS_TOKEN, PROVIDER_KEY]);
    const sent: Sent[] = [];
    let created = 0;
    try {
      // A handler that breaks with a cause: its answer is a 500, its line carries the cause.
      t.app.get('/test-only/broken', async () => {
        throw new Error('the handler broke', { cause: new Error('disk quota exceeded on /var/x') });
      });
      const accounts: TestAccount[] = [];
      for (let i = 0; i < 3; i++) accounts.push(await t.account({ balanceMinor: 10_000_000 }));
      for (const a of accounts) secrets.add(a.key);
      const png = fs.readFileSync(await makePng(t.dir, 8, 8));
      const taskIds: Array<{ id: string; key: string; requestId: string }> = [];

      let n = 0;
      const send = async (
        options: { method: string; url: string; headers?: Record<string, string>; payload?: unknown },
        accountId?: string,
      ): Promise<void> => {
        const id = `log-test-${n++}`;
        const res = await t.app.inject({
          method: options.method as 'GET',
          url: options.url,
          headers: { 'x-request-id': id, ...options.headers },
          ...(options.payload === undefined ? {} : { payload: options.payload as string }),
        });
        assert.equal(res.headers['x-request-id'], id, 'the incoming request id is kept and echoed');
        sent.push({ id, status: res.statusCode, ...(accountId ? { accountId } : {}) });
        if (options.url === '/v1/tasks' && res.statusCode === 202)
          taskIds.push({
            id: res.json().id,
            key: options.headers?.authorization?.slice(7) ?? '',
            requestId: id,
          });
      };

      for (let i = 0; i < 300; i++) {
        const a = accounts[i % accounts.length] as TestAccount;
        const key = { authorization: `Bearer ${a.key}` };
        switch (i % 15) {
          case 0:
            await send({ method: 'GET', url: '/v1/models', headers: key }, a.id);
            break;
          case 1:
            await send({ method: 'POST', url: '/v1/price', headers: key, payload: TASK }, a.id);
            break;
          case 2: {
            const bad = `gta_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x').slice(0, 32)}`;
            secrets.add(bad);
            await send({ method: 'GET', url: '/v1/tasks', headers: { authorization: `Bearer ${bad}` } });
            break;
          }
          case 3:
            await send({
              method: 'GET',
              url: `/admin/v1/accounts/${a.id}`,
              headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
            });
            break;
          case 4: {
            const wrong = random('wrong-admin-');
            secrets.add(wrong);
            await send({
              method: 'GET',
              url: '/admin/v1/accounts',
              headers: { authorization: `Bearer ${wrong}` },
            });
            break;
          }
          case 5: {
            const { payload, headers } = multipart(png);
            await send({ method: 'POST', url: '/v1/files', headers: { ...headers, ...key }, payload }, a.id);
            break;
          }
          case 6: {
            const token = random('cbtoken');
            secrets.add(token);
            await send({ method: 'POST', url: `/v1/callbacks/main/${token}`, payload: { status: 'done' } });
            break;
          }
          case 7: {
            const value = random('qsecret');
            secrets.add(value);
            const name = SECRET_QUERY[i % SECRET_QUERY.length] as string;
            await send({ method: 'GET', url: `/v1/tasks?limit=5&${name}=${value}`, headers: key }, a.id);
            break;
          }
          case 8: {
            const password = random('hunter2-');
            secrets.add(password);
            const basic = Buffer.from(`user:${password}`).toString('base64');
            secrets.add(basic);
            await send({ method: 'GET', url: '/v1/balance', headers: { authorization: `Basic ${basic}` } });
            break;
          }
          case 9: {
            const whsec = `whsec_${randomBytes(24).toString('base64')}`;
            secrets.add(whsec);
            await send(
              {
                method: 'POST',
                url: '/v1/tasks',
                headers: key,
                payload: { model: 'model-3d', settings: { secret: whsec } },
              },
              a.id,
            );
            break;
          }
          case 10:
            await send(
              {
                method: 'POST',
                url: '/v1/tasks',
                headers: { ...key, 'idempotency-key': random('idem-') },
                payload: TASK,
              },
              a.id,
            );
            break;
          case 11:
            await send({ method: 'GET', url: `/v1/no/such/${random('x')}` });
            break;
          case 12: {
            const token = i % 2 === 0 ? METRICS_TOKEN : random('wrong-metrics-');
            secrets.add(token);
            await send({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
            break;
          }
          case 13:
            await send(
              {
                method: 'POST',
                url: '/v1/tasks',
                headers: { ...key, 'content-type': 'application/json' },
                payload: '{"model":',
              },
              a.id,
            );
            break;
          default:
            await send({ method: 'GET', url: '/test-only/broken' });
        }
      }
      created = taskIds.length;
      for (const task of taskIds)
        assert.equal((await waitForFinal(t, task.key, task.id)).status, 'succeeded');
    } finally {
      await t.close();
    }

    const lines = captured.lines();
    const requestLines = new Map<string, Record<string, unknown>[]>();
    for (const line of lines)
      if (line.msg === 'request' || line.msg === 'request failed') {
        const id = String(line.requestId);
        requestLines.set(id, [...(requestLines.get(id) ?? []), line]);
      }
    assert.ok(sent.length >= 300);
    for (const s of sent) {
      const found = requestLines.get(s.id) ?? [];
      assert.equal(found.length, 1, `one line for request ${s.id}`);
      const line = found[0] as Record<string, unknown>;
      assert.equal(line.status, s.status);
      assert.equal(typeof line.method, 'string');
      assert.equal(typeof line.route, 'string');
      assert.equal(typeof line.durationMs, 'number');
      assert.equal(line.level, s.status >= 500 ? 50 : 30);
      if (s.accountId && s.status !== 401) assert.equal(line.accountId, s.accountId, JSON.stringify(line));
      if (s.status >= 400) assert.match(String(line.errorCode), /^[a-z_]+$/, JSON.stringify(line));
    }
    const broken = lines.filter((l) => l.msg === 'request failed');
    assert.ok(broken.length >= 19);
    for (const line of broken) {
      const err = line.err as { message: string; cause?: { message: string } };
      assert.equal(err.message, 'the handler broke');
      assert.equal(err.cause?.message, 'disk quota exceeded on /var/x');
    }
    const callbackLine = lines.find((l) => String(l.url).startsWith('/v1/callbacks/'));
    assert.equal(callbackLine?.route, '/v1/callbacks/:channel/:token');
    assert.equal(callbackLine?.url, '/v1/callbacks/main/[redacted]');

    // Transitions: queued with the creating request's id, then running and succeeded from the worker.
    const transitions = lines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('task '));
    const queued = transitions.filter((l) => l.status === 'queued');
    assert.ok(created >= 3, `${created} tasks created`);
    assert.equal(queued.length, created);
    for (const line of queued) {
      assert.match(String(line.requestId), /^log-test-\d+$/);
      assert.equal(line.model, 'model-3d');
      assert.match(String(line.accountId), /./);
    }
    for (const status of ['running', 'succeeded'])
      assert.equal(transitions.filter((l) => l.status === status).length, created, status);
    assert.ok(
      transitions.filter((l) => l.status === 'succeeded').every((l) => l.channel === 'main'),
      'runs name their channel',
    );
    const retried = lines.filter((l) => l.msg === 'polling the generator failed; asking again');
    assert.ok(retried.length >= created, 'the provider error with the key in its message was logged');

    const text = captured.text;
    assert.ok(secrets.size >= 150, `${secrets.size} secrets checked`);
    for (const secret of secrets)
      assert.ok(!text.includes(secret), `a secret was logged: ${secret.slice(0, 12)}…`);
  });

  test('acceptance and cancel lines carry the id of the request that made them', async () => {
    const captured = new Captured();
    const t = await startTestApp({ env: { LOG_LEVEL: 'info' }, logDestination: captured, worker: false });
    try {
      const a = await t.account({ balanceMinor: 1_000_000 });
      const created = await t.call(a.key, 'POST', '/v1/tasks', TASK, { 'x-request-id': 'create-1' });
      assert.equal(created.statusCode, 202, created.body);
      const id = created.json().id as string;
      const canceled = await t.call(a.key, 'POST', `/v1/tasks/${id}/cancel`, undefined, {
        'x-request-id': 'cancel-1',
      });
      assert.equal(canceled.statusCode, 200, canceled.body);
      const again = await t.call(a.key, 'POST', `/v1/tasks/${id}/cancel`, undefined, {
        'x-request-id': 'cancel-2',
      });
      assert.equal(again.statusCode, 409, 'a cancel that changes nothing is no transition');
    } finally {
      await t.close();
    }
    const transitions = captured.lines().filter((l) => String(l.msg).startsWith('task '));
    assert.deepEqual(
      transitions.map((l) => [l.msg, l.requestId, l.model]),
      [
        ['task queued', 'create-1', 'model-3d'],
        ['task canceled', 'cancel-1', 'model-3d'],
      ],
    );
  });
  test('a long-poll and an event stream the client leaves get their line (499) and their series', async () => {
    const { t, captured, port } = await listeningApp();
    try {
      const base = `http://127.0.0.1:${port}`;
      const a = await t.account({ balanceMinor: 1_000_000 });
      const id = (await t.call(a.key, 'POST', '/v1/tasks', TASK)).json().id as string;
      const leave = async (path: string, requestId: string): Promise<void> => {
        const gone = new AbortController();
        const answer = fetch(`${base}${path}`, {
          headers: { authorization: `Bearer ${a.key}`, 'x-request-id': requestId },
          signal: gone.signal,
        });
        await new Promise((resolve) => setTimeout(resolve, 300));
        gone.abort();
        await answer.then((res) => res.text()).catch(() => undefined);
      };
      await leave(`/v1/tasks/${id}?wait=30`, 'left-long-poll');
      await leave(`/v1/tasks/${id}/events`, 'left-stream');
      for (const [requestId, route] of [
        ['left-long-poll', '/v1/tasks/:id'],
        ['left-stream', '/v1/tasks/:id/events'],
      ] as const) {
        const line = await closedLine(captured, requestId, route);
        assert.ok(Number(line.durationMs) >= 250, String(line.durationMs));
      }
      await closedSeries(t, '/v1/tasks/:id/events', 1);
    } finally {
      await t.close();
    }
  });

  test('an upload whose client leaves mid-body gets its line (499) and its series', async () => {
    const { t, captured, port } = await listeningApp();
    try {
      const a = await t.account();
      const png = fs.readFileSync(await makePng(t.dir, 16, 16));
      for (const [requestId, type, head] of [
        ['left-raw-upload', 'image/png', ''],
        [
          'left-multipart-upload',
          'multipart/form-data; boundary=b',
          '--b\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\n',
        ],
      ] as const) {
        const socket = net.connect(port, '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write(
          `POST /v1/files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${a.key}\r\n` +
            `X-Request-Id: ${requestId}\r\nContent-Type: ${type}\r\nContent-Length: 500000\r\n\r\n${head}`,
        );
        socket.write(png);
        await new Promise((resolve) => setTimeout(resolve, 300));
        socket.destroy();
        await closedLine(captured, requestId, '/v1/files');
      }
      await closedSeries(t, '/v1/files', 2);
    } finally {
      await t.close();
    }
  });

  test('a download whose client leaves mid-file gets its line (499) and its series', async () => {
    const { t, captured, port } = await listeningApp();
    try {
      const a = await t.account();
      // A 24 MB WAV: more than the socket buffers hold, so the answer cannot end while nobody reads it.
      const uploaded = await t.app.inject({
        method: 'POST',
        url: '/v1/files?filename=a.wav',
        headers: { authorization: `Bearer ${a.key}`, 'content-type': 'audio/wav' },
        payload: silentWav(24_000_000, { rate: 44_100 }),
      });
      assert.equal(uploaded.statusCode, 201, uploaded.body);
      const link = new URL(uploaded.json().url as string).pathname;
      const socket = net.connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.pause();
      socket.write(`GET ${link} HTTP/1.1\r\nHost: x\r\nX-Request-Id: left-download\r\n\r\n`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      socket.destroy();
      await closedLine(captured, 'left-download', '/files/:token/*');
      await closedSeries(t, '/files/:token/*', 1);
    } finally {
      await t.close();
    }
  });

  test("a signed-in person's dashboard pages name the account in their lines", async () => {
    const captured = new Captured();
    const t = await startTestApp({ worker: false, env: { LOG_LEVEL: 'info' }, logDestination: captured });
    try {
      const browser = new Browser(t);
      await browser.signUp();
      const me = await browser.get('/v1/me', { 'x-request-id': 'dash-me' });
      const accountId = me.json().account_id;
      assert.ok(accountId);
      await browser.get('/tasks', { 'x-request-id': 'dash-tasks' });
      await browser.get('/keys', { 'x-request-id': 'dash-keys' });
      await new Browser(t).get('/signin', { 'x-request-id': 'dash-signed-out' });
      const lineOf = (requestId: string) =>
        captured.lines().find((l) => l.requestId === requestId && l.msg === 'request');
      for (const requestId of ['dash-me', 'dash-tasks', 'dash-keys'])
        assert.equal(lineOf(requestId)?.accountId, accountId, requestId);
      assert.ok(lineOf('dash-signed-out'));
      assert.equal(lineOf('dash-signed-out')?.accountId, undefined);
    } finally {
      await t.close();
    }
  });
});

test('a path the router refuses (a bad escape, an overlong id) has its line and its series', async () => {
  const captured = new Captured();
  const t = await startTestApp({
    env: { LOG_LEVEL: 'info', METRICS_TOKEN },
    logDestination: captured,
    worker: false,
  });
  try {
    const refused = [
      ['bad-escape', '/%'],
      ['bad-escape-in-id', '/v1/tasks/%zz'],
      ['long-id', `/v1/models/${'m'.repeat(1_001)}`],
    ] as const;
    for (const [requestId, url] of refused) {
      const res = await t.app.inject({ method: 'GET', url, headers: { 'x-request-id': requestId } });
      assert.equal(res.statusCode, 404, `${url}: ${res.body}`);
      assert.equal(res.headers['x-request-id'], requestId);
    }
    for (const [requestId] of refused) {
      const lines = captured.lines().filter((l) => l.requestId === requestId && l.msg === 'request');
      assert.equal(lines.length, 1, `one line for ${requestId}`);
      assert.equal(lines[0]?.route, 'unmatched');
      assert.equal(lines[0]?.status, 404);
      assert.equal(lines[0]?.errorCode, 'not_found');
    }
    const metrics = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    assert.match(
      metrics.body,
      /http_requests_total\{route="unmatched",method="GET",status="404"\} 3\n/,
      'counted as requests no route matched',
    );
  } finally {
    await t.close();
  }
});

test('a request Node refuses before it is read (headers too large, unparsable) has its line and series', async () => {
  const { t, captured, port } = await listeningApp();
  try {
    const raw = (text: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.end(text));
        let answer = '';
        socket.on('data', (chunk) => {
          answer += chunk.toString('latin1');
        });
        socket.on('close', () => resolve(answer));
        socket.on('error', reject);
      });
    const big = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    const bad = await raw('NOT A REQUEST\r\n\r\n');
    const idOf = (answer: string) => /x-request-id: ([0-9a-f-]{36})/i.exec(answer)?.[1];
    for (const [answer, status, code] of [
      [big, 413, 'request_too_large'],
      [bad, 422, 'invalid_request'],
    ] as const) {
      assert.match(answer, new RegExp(`^HTTP/1.1 ${status} `));
      const requestId = idOf(answer);
      assert.ok(requestId, answer);
      const lines = captured.lines().filter((l) => l.requestId === requestId);
      assert.equal(lines.length, 1, `one line for the ${status}`);
      assert.equal(lines[0]?.status, status);
      assert.equal(lines[0]?.route, 'unmatched');
      assert.equal(lines[0]?.errorCode, code);
    }
    const metrics = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    assert.match(metrics.body, /http_requests_total\{route="unmatched",method="unknown",status="413"\} 1\n/);
    assert.match(metrics.body, /http_requests_total\{route="unmatched",method="unknown",status="422"\} 1\n/);
  } finally {
    await t.close();
  }
});
