import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ADMIN_TOKEN, expectError, startTestApp } from './helpers.ts';

// The reference's limits are 120 requests a minute per account and 30 wrong-key attempts a minute per
// address; the window and budgets are configurable so the rules are tested with small numbers.
const limits = { accountRequests: 5, wrongKeyAttempts: 3, windowSeconds: 60 };

describe('request limits', () => {
  test('the per-account budget is shared by all keys of the account; past it 429 rate_limited with Retry-After', async () => {
    const t = await startTestApp({ limits });
    try {
      const acct = await t.account();
      const other = (await t.admin('POST', `/admin/v1/accounts/${acct.id}/keys`, {})).json().key as string;
      const stranger = await t.account();
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await t.call(i % 2 ? other : acct.key, 'GET', '/v1/me'));
      assert.deepEqual(
        answers.map((r) => r.statusCode),
        [200, 200, 200, 200, 200],
      );
      assert.equal(answers[0]?.headers['ratelimit-policy'], '"account";q=5;w=60');
      assert.match(String(answers[0]?.headers.ratelimit), /^"account";r=4;t=\d+$/);
      assert.match(String(answers[4]?.headers.ratelimit), /^"account";r=0;t=\d+$/);
      const over = await t.call(other, 'GET', '/v1/models');
      expectError(over, 429, 'rate_limited');
      assert.ok(Number(over.headers['retry-after']) >= 1);
      assert.ok(over.headers.ratelimit);
      // Another account is not affected.
      assert.equal((await t.call(stranger.key, 'GET', '/v1/me')).statusCode, 200);
    } finally {
      await t.close();
    }
  });

  test('wrong keys: past the budget an address gets 429, while valid keys from that address still work', async () => {
    const t = await startTestApp({ limits: { ...limits, accountRequests: 100 } });
    try {
      const acct = await t.account();
      const wrong = () =>
        t.app.inject({
          method: 'GET',
          url: '/v1/models',
          headers: { authorization: 'Bearer gta_wrong' },
          remoteAddress: '10.1.1.1',
        });
      for (let i = 0; i < 3; i++) expectError(await wrong(), 401, 'invalid_api_key');
      const limited = await wrong();
      expectError(limited, 429, 'rate_limited');
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      const valid = await t.app.inject({
        method: 'GET',
        url: '/v1/models',
        headers: { authorization: `Bearer ${acct.key}` },
        remoteAddress: '10.1.1.1',
      });
      assert.equal(valid.statusCode, 200);
      const elsewhere = await t.app.inject({
        method: 'GET',
        url: '/v1/models',
        headers: { authorization: 'Bearer gta_wrong' },
        remoteAddress: '10.2.2.2',
      });
      expectError(elsewhere, 401, 'invalid_api_key');
    } finally {
      await t.close();
    }
  });

  test('requests with no key guess nothing: always 401, never counted among wrong keys (API and operator)', async () => {
    const t = await startTestApp({ limits: { ...limits, accountRequests: 100 } });
    try {
      const from = (authorization: string | undefined, url = '/v1/models') =>
        t.app.inject({
          method: 'GET',
          url,
          headers: authorization === undefined ? {} : { authorization },
          remoteAddress: '10.3.3.3',
        });
      // Many more than the budget of 3, as a client probing every route without a key sends.
      for (let i = 0; i < 10; i++) {
        expectError(await from(undefined), 401, 'invalid_api_key');
        expectError(await from('Bearer '), 401, 'invalid_api_key');
        expectError(await from('Basic dXNlcjpwYXNz'), 401, 'invalid_api_key');
        expectError(await from(undefined, '/admin/v1/accounts'), 401, 'invalid_admin_token');
      }
      // The budget is untouched: three wrong keys still get their 401, the fourth its 429.
      for (let i = 0; i < 3; i++) expectError(await from('Bearer gta_wrong'), 401, 'invalid_api_key');
      expectError(await from('Bearer gta_wrong'), 429, 'rate_limited');
      for (let i = 0; i < 3; i++)
        expectError(await from('Bearer wrong-token-xxxx', '/admin/v1/accounts'), 401, 'invalid_admin_token');
      expectError(await from('Bearer wrong-token-xxxx', '/admin/v1/accounts'), 429, 'rate_limited');
      // Past both budgets, a request with no key or token is still told what is wrong with it.
      expectError(await from(undefined), 401, 'invalid_api_key');
      expectError(await from(undefined, '/admin/v1/accounts'), 401, 'invalid_admin_token');
    } finally {
      await t.close();
    }
  });

  test('operator tokens sent together are each counted before compared: a burst guesses no faster', async () => {
    const t = await startTestApp({ limits, env: { METRICS_TOKEN: 'test-metrics-token-0123456789' } });
    try {
      for (const [url, right] of [
        ['/admin/v1/accounts', ADMIN_TOKEN],
        ['/metrics', 'test-metrics-token-0123456789'],
      ] as const) {
        // Twenty guesses at once from one address, the right one among them: with the budget read before
        // the comparison and counted after it, every guess of the burst was compared (on PostgreSQL, whose
        // counts arrive later), and the right one answered 200 past a budget of 3. Which three are
        // compared is the store's order, not the array's; that no more than three are is the rule.
        const guesses = Array.from({ length: 20 }, (_, i) => (i === 10 ? right : `wrong-token-${i}-xxxx`));
        const answers = await Promise.all(
          guesses.map((token) =>
            t.app.inject({
              method: 'GET',
              url,
              headers: { authorization: `Bearer ${token}` },
              remoteAddress: url === '/metrics' ? '10.4.4.5' : '10.4.4.4',
            }),
          ),
        );
        const compared = answers.filter((answer) => answer.statusCode !== 429).length;
        assert.ok(compared <= limits.wrongKeyAttempts, `${url}: ${compared} of the burst were compared`);
      }
      // Alone and within its budget, the right token is answered as always.
      const alone = await t.app.inject({
        method: 'GET',
        url: '/admin/v1/accounts',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        remoteAddress: '10.4.4.6',
      });
      assert.equal(alone.statusCode, 200);
    } finally {
      await t.close();
    }
  });

  test('wrong keys behind a trusted proxy: a port it writes beside the client address is the same address', async () => {
    const t = await startTestApp({ limits, env: { TRUST_PROXY: 'loopback' } });
    try {
      const wrong = (client: string) =>
        t.app.inject({
          method: 'GET',
          url: '/v1/models',
          headers: { authorization: 'Bearer gta_wrong', 'x-forwarded-for': client },
          remoteAddress: '127.0.0.1',
        });
      for (let port = 50001; port <= 50003; port++) {
        expectError(await wrong(`203.0.113.7:${port}`), 401, 'invalid_api_key');
      }
      expectError(await wrong('203.0.113.7:50004'), 429, 'rate_limited');
      expectError(await wrong('203.0.113.7'), 429, 'rate_limited');
      expectError(await wrong('[2001:db8::1]:50001'), 401, 'invalid_api_key');
      expectError(await wrong('[2001:db8::2]:50002'), 401, 'invalid_api_key');
      expectError(await wrong('2001:db8::3'), 401, 'invalid_api_key');
      expectError(await wrong('[2001:db8::4]'), 429, 'rate_limited');
      expectError(await wrong('198.51.100.1'), 401, 'invalid_api_key');
    } finally {
      await t.close();
    }
  });

  test('the window resets: after it the account may send again', async () => {
    const t = await startTestApp({ limits: { accountRequests: 2, wrongKeyAttempts: 2, windowSeconds: 1 } });
    try {
      const acct = await t.account();
      await t.call(acct.key, 'GET', '/v1/me');
      await t.call(acct.key, 'GET', '/v1/me');
      expectError(await t.call(acct.key, 'GET', '/v1/me'), 429, 'rate_limited');
      await new Promise((resolve) => setTimeout(resolve, 1100));
      assert.equal((await t.call(acct.key, 'GET', '/v1/me')).statusCode, 200);
    } finally {
      await t.close();
    }
  });
});
