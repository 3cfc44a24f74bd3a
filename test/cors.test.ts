/**
 * Cross-origin calls to the API (CONTRACT §16: the client kit runs in browsers): preflights answered
 * before any key is asked for, the headers a script may send and read, nothing for the dashboard, and
 * nothing changed for callers that name no origin.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectError, startTestApp, type TestApp } from './helpers.ts';

const ORIGIN = 'https://tools.example.com';

describe('CORS on the API', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ worker: false });
  });
  after(() => t.close());

  test('a preflight of a creation is 204 with what the client kit sends, without a key', async () => {
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: '/v1/tasks',
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, idempotency-key, prefer',
      },
    });
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    const methods = String(res.headers['access-control-allow-methods']).split(/,\s*/);
    for (const method of ['GET', 'POST', 'PATCH', 'DELETE']) assert.ok(methods.includes(method), method);
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/);
    for (const header of [
      'authorization',
      'content-type',
      'idempotency-key',
      'prefer',
      'last-event-id',
      'if-match',
    ])
      assert.ok(allowed.includes(header), header);
    assert.equal(res.headers['access-control-max-age'], '600');
    assert.equal(res.headers['access-control-allow-credentials'], undefined, 'keys, never cookies');
    assert.equal(res.headers.ratelimit, undefined, 'a preflight counts against no account');
  });

  test('answers to a page of another origin can be read, refusals included', async () => {
    const acct = await t.account();
    const listed = await t.call(acct.key, 'GET', '/v1/tasks', undefined, { origin: ORIGIN });
    assert.equal(listed.statusCode, 200, listed.body);
    assert.equal(listed.headers['access-control-allow-origin'], '*');
    const exposed = String(listed.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/);
    for (const header of [
      'x-request-id',
      'retry-after',
      'ratelimit',
      'idempotent-replayed',
      'content-disposition',
    ])
      assert.ok(exposed.includes(header), header);
    const refused = await t.app.inject({ method: 'GET', url: '/v1/tasks', headers: { origin: ORIGIN } });
    expectError(refused, 401, 'invalid_api_key');
    assert.equal(refused.headers['access-control-allow-origin'], '*');
    // The reference puts a 405's allowed methods in Allow, which a page reads only when it is exposed.
    const wrongMethod = await t.call(acct.key, 'DELETE', '/v1/tasks', undefined, { origin: ORIGIN });
    expectError(wrongMethod, 405, 'method_not_allowed');
    assert.equal(wrongMethod.headers.allow, 'GET, HEAD, POST');
    const readable = String(wrongMethod.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/);
    assert.ok(readable.includes('allow'), 'Allow is exposed');
  });

  test('an address the router cannot read still passes its preflight and shows its 404', async () => {
    const acct = await t.account();
    for (const url of ['/v1/tasks/%E0%A4%A', `/v1/tasks/${'a'.repeat(1200)}`]) {
      const preflight = await t.app.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: ORIGIN, 'access-control-request-method': 'GET' },
      });
      assert.equal(preflight.statusCode, 204, url);
      assert.equal(preflight.headers['access-control-allow-origin'], '*', url);
      assert.match(String(preflight.headers['access-control-allow-headers']), /Authorization/, url);
      const refused = await t.call(acct.key, 'GET', url, undefined, { origin: ORIGIN });
      expectError(refused, 404, 'not_found');
      assert.equal(refused.headers['access-control-allow-origin'], '*', url);
      assert.match(String(refused.headers['access-control-expose-headers']), /X-Request-Id/, url);
    }
    const plain = await t.call(acct.key, 'GET', '/v1/tasks/%E0%A4%A');
    assert.equal(plain.headers['access-control-allow-origin'], undefined, 'no Origin, no CORS headers');
  });

  test('without an Origin nothing changes: no CORS headers, OPTIONS is still 405 with Allow', async () => {
    const acct = await t.account();
    const listed = await t.call(acct.key, 'GET', '/v1/tasks');
    assert.equal(listed.headers['access-control-allow-origin'], undefined);
    const options = await t.app.inject({ method: 'OPTIONS', url: '/v1/tasks' });
    expectError(options, 405, 'method_not_allowed');
    assert.match(String(options.headers.allow), /GET/);
  });

  test('an OPTIONS request of another origin that is no preflight gets the 405 with Allow, readable', async () => {
    // No Access-Control-Request-Method: a page's own OPTIONS call, not a browser's preflight. The plugin's
    // strict check answered it 400 "Invalid Preflight Request" in plain text, outside the error table.
    for (const url of ['/v1/tasks', '/v1/tasks?lang=ru', '/v1/me']) {
      const res = await t.app.inject({ method: 'OPTIONS', url, headers: { origin: ORIGIN } });
      expectError(res, 405, 'method_not_allowed');
      assert.match(String(res.headers.allow), /^GET, HEAD/, url);
      assert.equal(res.headers['access-control-allow-origin'], '*', url);
      assert.match(String(res.headers['access-control-expose-headers']), /Allow/, url);
      assert.equal(res.headers['access-control-allow-methods'], undefined, 'no preflight answer');
    }
    const nowhere = await t.app.inject({ method: 'OPTIONS', url: '/v1/nope', headers: { origin: ORIGIN } });
    expectError(nowhere, 404, 'not_found');
  });

  test('the dashboard and the other pages allow no other origin', async () => {
    for (const url of ['/', '/sign-in', '/admin', '/openapi.json']) {
      const preflight = await t.app.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
      });
      assert.notEqual(preflight.statusCode, 204, url);
      assert.equal(preflight.headers['access-control-allow-origin'], undefined, url);
      const page = await t.app.inject({ method: 'GET', url, headers: { origin: ORIGIN } });
      assert.equal(page.headers['access-control-allow-origin'], undefined, url);
    }
  });
});
