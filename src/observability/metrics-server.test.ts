import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { test } from 'node:test';
import { Metrics } from './metrics.ts';
import { startMetricsServer } from './metrics-server.ts';

test("a worker's own GET /metrics: 401 without the token, the text format with it, 404 elsewhere", async () => {
  const metrics = new Metrics({ processMetrics: false });
  metrics.tasksFinished.inc({ model: 'music', status: 'succeeded', error_code: '' });
  const token = 'worker-metrics-token-0123';
  const server = await startMetricsServer({ metrics, token, host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${server.port}`;
  try {
    const missing = await fetch(`${base}/metrics`);
    assert.equal(missing.status, 401);
    assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'invalid_admin_token');
    assert.equal(missing.headers.get('www-authenticate'), 'Bearer');
    const wrong = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}x` } });
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
    // Two Authorization lines, the right token first: one credential too many, as on the API's route.
    const twice = await new Promise<number | undefined>((resolve, reject) => {
      const lines = [
        'Host',
        '127.0.0.1',
        'Authorization',
        `Bearer ${token}`,
        'Authorization',
        `Bearer ${token}x`,
      ];
      http
        .get(`${base}/metrics`, { headers: lines }, (res) => resolve(res.resume().statusCode))
        .on('error', reject);
    });
    assert.equal(twice, 401);
    const right = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(right.status, 200);
    assert.match(right.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    assert.match(
      await right.text(),
      /^gta_tasks_finished_total\{model="music",status="succeeded",error_code=""\} 1$/m,
    );
    const elsewhere = await fetch(`${base}/v1/tasks`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(elsewhere.status, 404);
    // It says what this port serves, not the API's pointer to documents this port does not have.
    assert.deepEqual(await elsewhere.json(), {
      error: {
        code: 'not_found',
        message: 'Nothing lives at GET /v1/tasks: this port serves GET /metrics only.',
      },
    });
  } finally {
    await server.close();
  }
});

test("a worker's own GET /metrics: wrong tokens past the address's budget are 429 without a comparison", async () => {
  const metrics = new Metrics({ processMetrics: false });
  const token = 'worker-metrics-token-0123';
  const server = await startMetricsServer({
    metrics,
    token,
    host: '127.0.0.1',
    port: 0,
    wrongTokenLimit: { count: 3, windowMs: 60_000 },
  });
  const base = `http://127.0.0.1:${server.port}`;
  const get = async (sent: string): Promise<Response> => {
    const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${sent}` } });
    await res.body?.cancel();
    return res;
  };
  try {
    for (let i = 0; i < 3; i += 1) assert.equal((await get(`${token}${i}`)).status, 401);
    const over = await get(`${token}x`);
    assert.equal(over.status, 429);
    assert.ok(Number(over.headers.get('retry-after')) >= 1);
    // Past the budget even the right token is not compared, so guessing learns nothing more.
    assert.equal((await get(token)).status, 429);
  } finally {
    await server.close();
  }
});

test("a worker's own GET /metrics: a client that trickles its headers is cut off", async () => {
  const metrics = new Metrics({ processMetrics: false });
  const server = await startMetricsServer({
    metrics,
    token: 'worker-metrics-token-0123',
    host: '127.0.0.1',
    port: 0,
    headersTimeoutMs: 400,
  });
  try {
    const socket = net.connect(server.port, '127.0.0.1');
    const started = Date.now();
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString('latin1');
      });
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      // Headers begun and never finished: one header line every 100 ms, forever.
      socket.write('GET /metrics HTTP/1.1\r\nhost: x\r\n');
      const trickle = setInterval(() => socket.writable && socket.write('x-slow: 1\r\n'), 100);
      socket.on('close', () => clearInterval(trickle));
    });
    assert.match(answer, /^HTTP\/1\.1 408 /);
    // Cut off near its limit, not after Node's default minute (a bound of this test, not a benchmark).
    assert.ok(Date.now() - started < 5_000, `closed after ${Date.now() - started} ms`);
  } finally {
    await server.close();
  }
});
