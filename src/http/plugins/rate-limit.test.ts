import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import pg from 'pg';
import { FixedWindows, integerText, RequestLimiter } from './rate-limit.ts';

test('integerText writes whole numbers exactly as String() does', () => {
  for (const n of [0, 1, 7, 119, 120, 999_999_999, 1e9, 2 ** 31, Number.MAX_SAFE_INTEGER, -1, -120]) {
    assert.equal(integerText(n), String(n));
  }
  for (const n of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60])
    assert.equal(integerText(n), String(n));
});

test('FixedWindows: a key’s window opens at its first request; past the points the rest are refused until it ends', () => {
  let now = 1_000;
  const windows = new FixedWindows(3, 60_000, () => now);
  assert.deepEqual(windows.take('a'), { remaining: 2, msBeforeNext: 60_000 });
  now += 10_000;
  assert.deepEqual(windows.take('a'), { remaining: 1, msBeforeNext: 50_000 });
  assert.deepEqual(windows.take('a'), { remaining: 0, msBeforeNext: 50_000 });
  // The fourth is refused, and a refused request still counts (as rate-limiter-flexible counts it).
  assert.deepEqual(windows.take('a'), { remaining: -1, msBeforeNext: 50_000 });
  assert.deepEqual(windows.take('a'), { remaining: -2, msBeforeNext: 50_000 });
  // Another key has a budget and a window of its own.
  assert.deepEqual(windows.take('b'), { remaining: 2, msBeforeNext: 60_000 });
  // The window ends 60 s after a's first request, not after its last: then a full budget again.
  now = 61_000;
  assert.deepEqual(windows.take('a'), { remaining: 2, msBeforeNext: 60_000 });
});

test('FixedWindows: ended windows are swept, so memory follows the keys still sending', () => {
  let now = 0;
  const windows = new FixedWindows(5, 1_000, () => now);
  for (let i = 0; i < 100; i++) windows.take(`key-${i}`);
  assert.equal(windows.size, 100);
  now = 1_500;
  windows.take('late');
  assert.equal(windows.size, 1);
});

test('RequestLimiter in memory counts exactly the budget, with or without waiting, and says so in RateLimit', async () => {
  const limiter = new RequestLimiter({ accountRequests: 4, wrongKeyAttempts: 30, windowSeconds: 60 });
  const headers: Record<string, string> = {};
  const reply = { header: (name: string, value: string) => (headers[name] = value) } as never;
  assert.equal(limiter.takeAccountRequestHere('acc', reply), true);
  assert.equal(headers.ratelimit, '"account";r=3;t=60');
  assert.equal(headers['ratelimit-policy'], '"account";q=4;w=60');
  await limiter.takeAccountRequest('acc', reply);
  assert.equal(headers.ratelimit, '"account";r=2;t=60');
  limiter.takeAccountRequestHere('acc', reply);
  await limiter.takeAccountRequest('acc', reply);
  assert.equal(headers.ratelimit, '"account";r=0;t=60');
  assert.throws(
    () => limiter.takeAccountRequestHere('acc', reply),
    (error: { code?: string; status?: number }) => error.code === 'rate_limited' && error.status === 429,
  );
  await assert.rejects(limiter.takeAccountRequest('acc', reply), { code: 'rate_limited' });
  // Another account is untouched.
  assert.equal(limiter.takeAccountRequestHere('other', reply), true);
  assert.equal(headers.ratelimit, '"account";r=3;t=60');
});

test('the operator token budget is counted in this process while PostgreSQL is away, never failing', async () => {
  // Nothing listens on port 1: every query is refused at once, as by a stopped server. A scrape of
  // /metrics reads this budget first and must still answer then (docs/observability.md).
  const pool = new pg.Pool({
    connectionString: 'postgres://gta@127.0.0.1:1/gta',
    connectionTimeoutMillis: 2_000,
  });
  try {
    const limiter = new RequestLimiter({ accountRequests: 4, wrongKeyAttempts: 2, windowSeconds: 60 }, pool);
    assert.equal(await limiter.takeAdminTokenAttempt('192.0.2.1'), null);
    // A right token gives its attempt back.
    await limiter.adminTokenRight('192.0.2.1');
    assert.equal(await limiter.takeAdminTokenAttempt('192.0.2.1'), null);
    assert.equal(await limiter.takeAdminTokenAttempt('192.0.2.1'), null);
    // Past the budget the address waits, as it would with the database there.
    assert.equal(await limiter.takeAdminTokenAttempt('192.0.2.1'), 60);
    assert.equal(await limiter.takeAdminTokenAttempt('192.0.2.2'), null);
  } finally {
    await pool.end();
  }
});

test('the operator token budget does not wait for a PostgreSQL that takes connections and never answers', async () => {
  // A stopped (SIGSTOP) or partitioned server: the socket opens, nothing comes back. /metrics reads this
  // budget before it scrapes, and must answer in time for the scraper (docs/observability.md).
  const sockets: net.Socket[] = [];
  const silent = net.createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const { port } = silent.address() as net.AddressInfo;
  const pool = new pg.Pool({
    connectionString: `postgres://gta@127.0.0.1:${port}/gta`,
    connectionTimeoutMillis: 30_000,
  });
  try {
    const limiter = new RequestLimiter({ accountRequests: 4, wrongKeyAttempts: 1, windowSeconds: 60 }, pool);
    const started = performance.now();
    assert.equal(await limiter.takeAdminTokenAttempt('192.0.2.1'), null);
    // Past the budget the address waits (the window opened a few bounded waits ago).
    assert.ok(((await limiter.takeAdminTokenAttempt('192.0.2.1')) ?? 0) > 50);
    assert.ok(performance.now() - started < 5_000, `took ${Math.round(performance.now() - started)} ms`);
  } finally {
    for (const socket of sockets) socket.destroy();
    silent.close();
    await pool.end();
  }
});
