import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { drawPicture, encodePng } from '../src/generators/simulator/media/png.ts';
import { ADMIN_TOKEN, expectError, startTestApp, type TestApp } from './helpers.ts';

/** A refusal that went through the error table: the usual body, a JSON type and a request id. */
function expectTableError(
  res: Awaited<ReturnType<TestApp['app']['inject']>>,
  status: number,
  code: string,
): void {
  expectError(res, status, code);
  assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/, 'X-Request-Id');
  assert.equal(res.headers['x-content-type-options'], 'nosniff', 'never sniffed into another type');
  assert.doesNotMatch(res.body, /FST_|statusCode|stack/, res.body);
}

/** Sends raw bytes to a listening app and returns everything it answers until it closes. */
async function rawExchange(port: number, text: string | Buffer): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.write(text);
  await new Promise((resolve) => socket.on('close', resolve));
  return Buffer.concat(chunks).toString();
}

describe('the HTTP edge', () => {
  let t: TestApp;
  let key = '';
  before(async () => {
    t = await startTestApp({ worker: false });
    key = (await t.account({ balanceMinor: 100_000 })).key;
  });
  after(() => t.close());

  const post = (url: string, payload: string | Buffer, contentType = 'application/json') =>
    t.app.inject({
      method: 'POST',
      url,
      payload,
      headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
    });

  test('[10.22] deeply nested JSON is 422 invalid_request on every route, never a 500', async () => {
    const deep = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const task = (inner: string): string =>
      `{"model":"model-3d","settings":{"task_type":"text_to_model","prompt":"a chair","x":${inner}}}`;
    for (const url of ['/v1/tasks', '/v1/price']) {
      expectTableError(await post(url, task(deep(20_000))), 422, 'invalid_request');
    }
    const admin = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/accounts',
      payload: `{"name":${deep(5_000)}}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    });
    expectTableError(admin, 422, 'invalid_request');
    assert.match(admin.json().error.message, /nest/i);
    // Ordinary nesting (shots of a video, lists of URLs) stays well inside the limit.
    const ok = await post('/v1/price', task(deep(8)));
    expectError(ok, 422, 'unknown_setting');
  });

  test('[10.23] framework errors go through the error table with X-Request-Id', async () => {
    const auth = { authorization: `Bearer ${key}` };
    // Multipart without a boundary, and a multipart body cut short.
    expectTableError(await post('/v1/files', 'abc', 'multipart/form-data'), 422, 'invalid_request');
    expectTableError(
      await post('/v1/files', '--x\r\nfoo', 'multipart/form-data; boundary=x'),
      422,
      'invalid_request',
    );
    const fields = Array.from(
      { length: 8 },
      (_, i) => `--x\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nv\r\n`,
    );
    expectTableError(
      await post('/v1/files', `${fields.join('')}--x--\r\n`, 'multipart/form-data; boundary=x'),
      422,
      'invalid_request',
    );
    // The static files of /docs: a refused path and a missing file are plain 404s; a NUL is refused as in
    // every request (422).
    expectTableError(await t.app.inject({ method: 'GET', url: '/docs/static/%00' }), 422, 'invalid_request');
    for (const url of ['/docs/static/..%2f..%2fpackage.json', '/docs/static/nope.js']) {
      const res = await t.app.inject({ method: 'GET', url });
      expectTableError(res, 404, 'not_found');
      assert.equal(res.json().docs, 'http://api.test/docs');
    }
    // An over-long id and bad percent-encoding: no such address, without echoing the whole path.
    const long = await t.app.inject({ method: 'GET', url: `/v1/tasks/${'a'.repeat(5_000)}`, headers: auth });
    expectTableError(long, 404, 'not_found');
    assert.ok(long.body.length < 1_000, `body of ${long.body.length} bytes`);
    expectTableError(
      await t.app.inject({ method: 'GET', url: '/v1/tasks/%E0%A4%A', headers: auth }),
      404,
      'not_found',
    );
    // An empty id (a trailing slash) names nothing either.
    for (const url of ['/v1/tasks/', '/v1/models/image/styles/', '/v1/files/', '/v1/tasks//cancel']) {
      const method = url.endsWith('/cancel') ? 'POST' : 'GET';
      expectTableError(await t.app.inject({ method, url, headers: auth }), 404, 'not_found');
    }
    const ru = await t.app.inject({ method: 'GET', url: '/files/%zz?lang=ru' });
    expectTableError(ru, 404, 'not_found');
    assert.match(ru.json().error.message, /[а-я]/i);
    // Invalid JSON, unsupported media types, a wrong length.
    expectTableError(await post('/v1/tasks', '{'), 422, 'invalid_request');
    // Valid JSON with a key the parser refuses says which key, not "not valid JSON".
    for (const body of ['{"__proto__":{"a":1}}', '{"settings":{"constructor":{"prototype":{}}}}']) {
      const poisoned = await post('/v1/tasks', body);
      expectTableError(poisoned, 422, 'invalid_request');
      assert.match(poisoned.json().error.message, /__proto__/);
    }
    assert.match((await post('/v1/tasks', '{"a":')).json().error.message, /not valid JSON/);
    for (const type of ['text/plain', 'text/xml', 'application/x-www-form-urlencoded']) {
      const res = await post('/v1/tasks', 'model=x', type);
      expectTableError(res, 422, 'invalid_request');
      assert.match(res.json().error.message, /application\/json/);
    }
  });

  test('a body with two Content-Type lines is refused, whichever comes first; its key is asked first', async () => {
    // Node keeps the first line, where a proxy in front may have read the other: JSON then text was read
    // as JSON, text then JSON refused for its type.
    const price = JSON.stringify({ model: 'image', settings: { prompt: 'a fox' } });
    const send = (types: string[], authorization = `Bearer ${key}`, url = '/v1/price') =>
      t.app.inject({
        method: 'POST',
        url,
        payload: price,
        headers: { authorization, 'Content-Type': types },
      });
    for (const types of [
      ['application/json', 'text/plain'],
      ['text/plain', 'application/json'],
      ['application/json', 'application/json'],
    ]) {
      const res = await send(types);
      expectTableError(res, 422, 'invalid_request');
      assert.equal(res.json().error.message, 'Send one Content-Type header, not several.', types.join(' | '));
      expectTableError(await send(types, 'Bearer gta_unknown'), 401, 'invalid_api_key');
      // An address nobody serves is 404 or 405 whatever its body, as before.
      expectTableError(await send(types, `Bearer ${key}`, '/v1/me'), 405, 'method_not_allowed');
    }
    assert.equal((await send(['application/json'])).statusCode, 200);
    // A request whose body is not read is not refused for its type: a cancel without a body, a GET's.
    const task = (await post('/v1/tasks', price)).json().id;
    const headers = { authorization: `Bearer ${key}`, 'Content-Type': ['application/json', 'text/plain'] };
    const cancel = await t.app.inject({ method: 'POST', url: `/v1/tasks/${task}/cancel`, headers });
    assert.equal(cancel.statusCode, 200, cancel.body);
    const get = await t.app.inject({ method: 'GET', url: `/v1/tasks/${task}`, headers, payload: '{}' });
    assert.equal(get.statusCode, 200, get.body);
  });

  test('a JSON body with a Content-Encoding is refused, compressed or not, never read as plain text', async () => {
    const price = JSON.stringify({
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt: 'a chair' },
    });
    const send = (payload: string | Buffer, encoding: string) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/price',
        payload,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-encoding': encoding,
        },
      });
    // A compressed body was "not valid JSON"; an uncompressed one under the header was priced (200).
    for (const [payload, encoding] of [
      [gzipSync(price), 'gzip'],
      [price, 'gzip'],
      [price, 'br'],
      [price, 'x-unknown'],
      [price, 'identity, deflate'],
    ] as const) {
      const res = await send(payload, encoding);
      expectTableError(res, 422, 'invalid_request');
      assert.match(res.json().error.message, /Content-Encoding/, encoding);
    }
    for (const encoding of ['identity', 'IDENTITY', '']) {
      assert.equal((await send(price, encoding)).statusCode, 200, encoding);
    }
    // A body-less call (a cancel) is no body, whatever it says of its encoding.
    const task = await post('/v1/tasks', price);
    const cancel = await t.app.inject({
      method: 'POST',
      url: `/v1/tasks/${task.json().id}/cancel`,
      payload: '',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      },
    });
    assert.equal(cancel.statusCode, 200, cancel.body);
    // A raw upload under the header would be stored compressed and refused as an unknown file type.
    const png = encodePng(2, 2, drawPicture(2, 2, 'coded'));
    const upload = await t.app.inject({
      method: 'POST',
      url: '/v1/files?filename=a.png',
      payload: gzipSync(png),
      headers: { authorization: `Bearer ${key}`, 'content-type': 'image/png', 'content-encoding': 'gzip' },
    });
    expectTableError(upload, 422, 'invalid_request');
    assert.match(upload.json().error.message, /Content-Encoding/);
  });

  test('a JSON body that is not UTF-8 is refused, not stored with replacement characters', async () => {
    const price = (prompt: Buffer) =>
      post(
        '/v1/price',
        Buffer.concat([
          Buffer.from('{"model":"model-3d","settings":{"task_type":"text_to_model","prompt":"'),
          prompt,
          Buffer.from('"}}'),
        ]),
      );
    for (const bytes of [Buffer.from([0x61, 0xff, 0xfe, 0x62]), Buffer.from('caf\u00e9', 'latin1')]) {
      const res = await price(bytes);
      expectTableError(res, 422, 'invalid_request');
      assert.match(res.json().error.message, /UTF-8/);
    }
    assert.equal((await price(Buffer.from('caf\u00e9 \ufffd', 'utf8'))).statusCode, 200);
  });

  test('an empty body sent as application/json is no body: a cancel works, a creation asks for its fields', async () => {
    const created = await post(
      '/v1/tasks',
      JSON.stringify({ model: 'model-3d', settings: { task_type: 'text_to_model', prompt: 'a chair' } }),
    );
    assert.equal(created.statusCode, 202, created.body);
    const canceled = await post(`/v1/tasks/${created.json().id}/cancel`, '');
    assert.equal(canceled.statusCode, 200, canceled.body);
    assert.equal(canceled.json().status, 'canceled');
    const empty = await post('/v1/tasks', '');
    expectTableError(empty, 422, 'invalid_request');
    assert.match(empty.json().error.message, /body/);
  });

  test('an empty body of any type is no body: a cancel or a delete is served, not refused for its type', async () => {
    const created = await post(
      '/v1/tasks',
      JSON.stringify({ model: 'model-3d', settings: { task_type: 'text_to_model', prompt: 'a chair' } }),
    );
    assert.equal(created.statusCode, 202, created.body);
    // What `curl -d ''` and `fetch(url, { body: '' })` send.
    for (const type of ['application/x-www-form-urlencoded', 'text/plain;charset=UTF-8']) {
      const headers = { authorization: `Bearer ${key}`, 'content-type': type, 'content-length': '0' };
      const unknown = await t.app.inject({ method: 'DELETE', url: '/v1/webhooks/wh_nope', headers });
      expectTableError(unknown, 404, 'webhook_not_found');
      const empty = await t.app.inject({ method: 'POST', url: '/v1/tasks', headers });
      expectTableError(empty, 422, 'invalid_request');
      assert.match(empty.json().error.message, /body/);
    }
    const canceled = await t.app.inject({
      method: 'POST',
      url: `/v1/tasks/${created.json().id}/cancel`,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain', 'content-length': '0' },
    });
    assert.equal(canceled.statusCode, 200, canceled.body);
    assert.equal(canceled.json().status, 'canceled');
    // A body that is there keeps its type, and is refused for it.
    const typed = await t.app.inject({
      method: 'POST',
      url: `/v1/tasks/${created.json().id}/cancel`,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' },
      payload: 'x',
    });
    expectTableError(typed, 422, 'invalid_request');
  });

  test('an empty chunked body of any type, or of none, is no body; a chunked body with bytes keeps its type', async () => {
    if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as net.AddressInfo;
    const exchange = async (type: string | null, chunks: string) => {
      const created = await post(
        '/v1/tasks',
        JSON.stringify({ model: 'model-3d', settings: { task_type: 'text_to_model', prompt: 'a chair' } }),
      );
      assert.equal(created.statusCode, 202, created.body);
      const id: string = created.json().id;
      return rawExchange(
        port,
        `POST /v1/tasks/${id}/cancel HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
          `${type === null ? '' : `Content-Type: ${type}\r\n`}Transfer-Encoding: chunked\r\n` +
          `Connection: close\r\n\r\n${chunks}0\r\n\r\n`,
      );
    };
    // What a client streaming an empty body sends (a generator in Python's requests, a ReadableStream).
    for (const type of [null, 'application/x-www-form-urlencoded', 'text/plain']) {
      const answer = await exchange(type, '');
      assert.match(answer, /^HTTP\/1\.1 200 /, `${type}: ${answer.slice(0, 400)}`);
      assert.match(answer, /"status":"canceled"/);
    }
    for (const type of [null, 'text/plain']) {
      const answer = await exchange(type, '1\r\nx\r\n');
      assert.match(answer, /^HTTP\/1\.1 422 /, `${type}: ${answer.slice(0, 400)}`);
      assert.match(answer, /"code":"invalid_request"/);
      assert.match(answer, /Content-Type: application\/json/);
    }
  });

  test('a typed request without Content-Length or Transfer-Encoding has no body: a cancel is served', async () => {
    if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as net.AddressInfo;
    // What `curl -X POST -H 'Content-Type: …'` sends: no body at all (RFC 9112 §6.3), as `Content-Length: 0`.
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ]) {
      const created = await post(
        '/v1/tasks',
        JSON.stringify({ model: 'model-3d', settings: { task_type: 'text_to_model', prompt: 'a chair' } }),
      );
      assert.equal(created.statusCode, 202, created.body);
      const answer = await rawExchange(
        port,
        `POST /v1/tasks/${created.json().id}/cancel HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
          `Content-Type: ${type}\r\nConnection: close\r\n\r\n`,
      );
      assert.match(answer, /^HTTP\/1\.1 200 /, `${type}: ${answer.slice(0, 400)}`);
      assert.match(answer, /"status":"canceled"/);
    }
  });

  test("a refusal echoes an unknown field's name clipped to 100 characters, and lists at most 10", async () => {
    const long = 'k'.repeat(60_000);
    const clipped = `${'k'.repeat(100)}…`;
    const settings = { task_type: 'text_to_model', prompt: 'a chair' };
    const many = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, 1]));
    const refusals = [
      [
        'invalid_request',
        await post('/v1/price', JSON.stringify({ model: 'model-3d', settings, [long]: 1 })),
      ],
      [
        'unknown_setting',
        await post('/v1/tasks', JSON.stringify({ model: 'model-3d', settings: { ...settings, [long]: 1 } })),
      ],
      ['invalid_request', await t.call(key, 'GET', `/v1/tasks?${'k'.repeat(6_000)}=1`)],
    ] as const;
    for (const [code, res] of refusals) {
      expectTableError(res, 422, code);
      const message: string = res.json().error.message;
      assert.ok(message.includes(clipped), message.slice(0, 300));
      assert.ok(message.length < 300, `${message.length} characters`);
    }
    for (const lang of ['en', 'ru']) {
      const res = await post(
        `/v1/price?lang=${lang}`,
        JSON.stringify({ model: 'model-3d', settings: { ...settings, ...many } }),
      );
      expectTableError(res, 422, 'unknown_setting');
      const message: string = res.json().error.message;
      assert.match(message, /^settings\.k0: .*"k9", "…"$/, message);
      assert.ok(message.length < 300, `${message.length} characters`);
    }
  });

  test('a POST that takes no body refuses fields sent to it, and takes none or {}', async () => {
    const create = () =>
      post(
        '/v1/tasks',
        JSON.stringify({ model: 'model-3d', settings: { task_type: 'text_to_model', prompt: 'a chair' } }),
      );
    const task = (await create()).json().id;
    for (const body of ['{"reason":"duplicate"}', '[]', '"x"', '1']) {
      const res = await post(`/v1/tasks/${task}/cancel?lang=ru`, body);
      expectTableError(res, 422, 'invalid_request');
    }
    assert.match((await post(`/v1/tasks/${task}/cancel`, '{"reason":"x"}')).json().error.message, /reason/);
    assert.equal((await t.call(key, 'GET', `/v1/tasks/${task}`)).json().status, 'queued', 'not canceled');
    assert.equal((await post(`/v1/tasks/${task}/cancel`, '{}')).statusCode, 200);
    for (const route of ['/v1/webhook-deliveries/msg_x/retry', '/v1/models/music/voices/x/retry']) {
      expectTableError(await post(route, '{"now":true}'), 422, 'invalid_request');
      expectTableError(
        await post(route, '{}'),
        404,
        route.includes('voices') ? 'record_not_found' : 'delivery_not_found',
      );
    }
  });

  test('an address nobody serves is 404 or 405 whatever its body, JSON, of another type or of none', async () => {
    // A text/plain body already got the 404 or 405; a JSON one was parsed first and refused for its shape.
    const bodies: Array<[string | Buffer, Record<string, string>]> = [
      ['{', {}],
      [Buffer.from([0x7b, 0xff, 0x7d]), {}],
      [`{"a":${'['.repeat(40)}${']'.repeat(40)}}`, {}],
      ['{}', { 'content-encoding': 'gzip' }],
      // A type that names no media type, which Fastify refuses before any parser looks at the body.
      ['x', { 'content-type': 'foo' }],
      ['x', { 'content-type': '' }],
    ];
    for (const [payload, headers] of bodies) {
      const send = (method: 'POST' | 'DELETE' | 'OPTIONS', url: string) =>
        t.app.inject({
          method,
          url,
          payload,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
        });
      expectTableError(await send('POST', '/v1/nope'), 404, 'not_found');
      const notAllowed = await send('POST', '/v1/me?lang=ru');
      expectTableError(notAllowed, 405, 'method_not_allowed');
      assert.equal(notAllowed.headers.allow, 'GET, HEAD');
      expectTableError(await send('DELETE', '/v1/tasks'), 405, 'method_not_allowed');
      expectTableError(await send('POST', '/v1/models/nope/elements'), 404, 'model_not_found');
      // OPTIONS reaches the CORS plugin's catch-all route, which serves nothing of its own: no preflight
      // here (no Origin), so the address's 405 or 404, its body unread, as for any other method.
      for (const url of ['/v1/tasks', '/healthz', '/admin/v1/accounts']) {
        const options = await send('OPTIONS', url);
        expectTableError(options, 405, 'method_not_allowed');
        assert.match(String(options.headers.allow), /^GET, HEAD/, url);
      }
      expectTableError(await send('OPTIONS', '/v1/nope'), 404, 'not_found');
    }
    // An address that exists still reads its body, and refuses a type that is none.
    expectTableError(await post('/v1/price', '{'), 422, 'invalid_request');
    expectTableError(await post('/v1/price', 'x', 'foo'), 422, 'invalid_request');
  });

  test("[10.23] requests Node cannot parse are answered in the error table's shape", async () => {
    if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as net.AddressInfo).port;
    const answer = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 422 /);
    assert.match(answer, /\r\nX-Request-Id: [0-9a-f-]{36}\r\n/i);
    assert.match(answer, /\{"error":\{"code":"invalid_request","message":"[^"]+"\}\}$/);
  });

  test('a body under a transfer coding other than chunked is refused, never read as plain', async () => {
    if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as net.AddressInfo).port;
    const chunked = (body: string) => `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const send = (path: string, coding: string, type: string, body: string, auth = `Bearer ${key}`) =>
      rawExchange(
        port,
        `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Type: ${type}\r\n` +
          `Transfer-Encoding: ${coding}\r\nConnection: close\r\n\r\n${chunked(body)}`,
      );
    const price = JSON.stringify({
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt: 'a chair' },
    });
    // Node took the chunks apart and the rest was read as plain JSON: an account was created from it.
    for (const answer of [
      await send(
        '/admin/v1/accounts',
        'gzip, chunked',
        'application/json',
        '{"name":"coded"}',
        `Bearer ${ADMIN_TOKEN}`,
      ),
      await send('/v1/price', 'GZIP , chunked', 'application/json', price),
      await send('/v1/price', 'x-custom, chunked', 'application/json', price),
      await send('/v1/files?filename=a.png', 'deflate, chunked', 'image/png', 'plain bytes'),
    ]) {
      assert.match(answer, /^HTTP\/1\.1 422 /, answer);
      assert.match(answer, /"code":"invalid_request"/);
      assert.match(answer, /Transfer-Encoding other than chunked/);
      assert.match(answer, /\r\nx-request-id: [0-9a-f-]{36}\r\n/i);
    }
    // Without a key, the key is what is wrong; plain chunks are read as ever.
    assert.match(
      await send('/v1/price', 'gzip, chunked', 'application/json', price, 'Bearer x'),
      /^HTTP\/1\.1 401 /,
    );
    assert.match(await send('/v1/price', 'chunked', 'application/json', price), /^HTTP\/1\.1 200 /);
  });

  test("an HTTP/1.1 request without Host is refused in the error table's shape and closed", async () => {
    if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as net.AddressInfo).port;
    const answer = await rawExchange(port, `GET /v1/me HTTP/1.1\r\nAuthorization: Bearer ${key}\r\n\r\n`);
    assert.match(answer, /^HTTP\/1\.1 422 /, answer);
    assert.match(answer, /\r\nx-request-id: [0-9a-f-]{36}\r\n/i);
    assert.match(answer, /\r\nconnection: close\r\n/i);
    assert.match(answer, /\{"error":\{"code":"invalid_request","message":"[^"]*Host[^"]*"\}\}$/);
    // HTTP/1.0 has no Host requirement: such a request is served as before.
    const old = await rawExchange(port, 'GET /healthz HTTP/1.0\r\n\r\n');
    assert.match(old, /^HTTP\/1\.1 200 /, old);
  });

  test("a request with two Host headers or one naming no host is refused in the error table's shape", async () => {
    if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as net.AddressInfo).port;
    for (const hosts of [
      'Host: a.example\r\nHost: b.example',
      'Host: a.example\r\nhost: a.example',
      'Host: a b',
      'Host: a.example/x',
    ]) {
      const answer = await rawExchange(
        port,
        `GET /healthz HTTP/1.1\r\n${hosts}\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`,
      );
      assert.match(answer, /^HTTP\/1\.1 422 /, answer);
      assert.match(answer, /\r\nx-request-id: [0-9a-f-]{36}\r\n/i);
      assert.match(answer, /\r\nconnection: close\r\n/i);
      assert.match(answer, /\{"error":\{"code":"invalid_request","message":"[^"]*Host[^"]*"\}\}$/);
    }
    // One Host of any form a client writes is served.
    for (const host of ['127.0.0.1:8080', '[::1]:8080', 'api.example.', 'xn--80ak6aa92e.com']) {
      const answer = await rawExchange(
        port,
        `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
      );
      assert.match(answer, /^HTTP\/1\.1 200 /, answer);
    }
  });

  test('an Expect other than 100-continue is ignored: the request is served with its request id', async () => {
    if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as net.AddressInfo).port;
    const me = await rawExchange(
      port,
      `GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nExpect: foo\r\nConnection: close\r\n\r\n`,
    );
    assert.match(me, /^HTTP\/1\.1 200 /, me);
    assert.match(me, /\r\nx-request-id: [0-9a-f-]{36}\r\n/i);
    const refused = await rawExchange(
      port,
      'GET /v1/me HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nConnection: close\r\n\r\n',
    );
    assert.match(refused, /^HTTP\/1\.1 401 /, refused);
    assert.match(refused, /\{"error":\{"code":"invalid_api_key","message":"[^"]+"\}\}$/);
  });

  test('Expect: 100-continue is answered 100 only once the key and the declared length pass', async () => {
    if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as net.AddressInfo).port;
    const head = (path: string, type: string, length: number, auth: string | null) =>
      `POST ${path} HTTP/1.1\r\nHost: x\r\n${auth === null ? '' : `Authorization: ${auth}\r\n`}` +
      `Content-Type: ${type}\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;
    // Node said 100 Continue at once: a caller without a key was asked for its body, then refused.
    for (const [path, type, length, auth, status, code] of [
      ['/v1/tasks', 'application/json', 60_000, null, 401, 'invalid_api_key'],
      ['/v1/files?filename=a.png', 'image/png', 50_000_000, 'Bearer gta_wrong', 401, 'invalid_api_key'],
      ['/v1/tasks', 'application/json', 10_000_000, `Bearer ${key}`, 413, 'request_too_large'],
      ['/v1/files?filename=a.png', 'image/png', 104_900_000, `Bearer ${key}`, 413, 'file_too_large'],
      ['/admin/v1/accounts', 'application/json', 100, 'Bearer wrong-token', 401, 'invalid_admin_token'],
      // The query is validated after the body is parsed: an upload it refuses was still asked for its body.
      ['/v1/files?filenam=a.png', 'image/png', 50_000_000, `Bearer ${key}`, 422, 'invalid_request'],
      ['/v1/files?filename=a&filename=b', 'image/png', 50_000_000, `Bearer ${key}`, 422, 'invalid_request'],
    ] as const) {
      // The body never comes: the answer must come, and the connection close, without it.
      const answer = await rawExchange(port, head(path, type, length, auth));
      assert.match(answer, new RegExp(`^HTTP/1\\.1 ${status} `), answer);
      assert.match(answer, new RegExp(`"code":"${code}"`));
      assert.doesNotMatch(answer, /100 Continue/);
    }
    // An upload whose query passes is asked for its body.
    const upload = net.connect(port, '127.0.0.1');
    upload.write(head('/v1/files?filename=a.png&lang=ru', 'image/png', 50_000_000, `Bearer ${key}`));
    const first = await new Promise<string>((resolve) =>
      upload.once('data', (chunk) => resolve(String(chunk))),
    );
    upload.destroy();
    assert.equal(first, 'HTTP/1.1 100 Continue\r\n\r\n');
    // A request that passes is asked for its body, then served.
    const price = JSON.stringify({
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt: 'a chair' },
    });
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString();
      if (answer === 'HTTP/1.1 100 Continue\r\n\r\n') socket.write(price);
    });
    socket.write(
      head('/v1/price', 'application/json', Buffer.byteLength(price), `Bearer ${key}`).replace(
        '\r\n\r\n',
        '\r\nConnection: close\r\n\r\n',
      ),
    );
    await new Promise((resolve) => socket.on('close', resolve));
    assert.match(answer, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /, answer);
    // A dashboard form past the default 16 KB but within the form's 64 KB is asked for too, not left
    // waiting for a 100 that never comes.
    const body = `email=a%40b.c&password=${'x'.repeat(20_000)}`;
    const form = net.connect(port, '127.0.0.1');
    let formAnswer = '';
    form.on('data', (chunk: Buffer) => {
      formAnswer += chunk.toString();
      if (formAnswer === 'HTTP/1.1 100 Continue\r\n\r\n') form.write(body);
    });
    form.write(
      head('/signin', 'application/x-www-form-urlencoded', body.length, null).replace(
        '\r\n\r\n',
        '\r\nConnection: close\r\n\r\n',
      ),
    );
    await new Promise((resolve) => form.on('close', resolve));
    // Then the page's own answer (here the CSRF refusal of a form without its token), not a stall.
    assert.match(formAnswer, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 403 /, formAnswer.slice(0, 300));
  });

  test('an absolute-form request target is served as its path, by the API and the dashboard alike', async () => {
    if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as net.AddressInfo).port;
    const send = (line: string, headers = '') =>
      rawExchange(port, `${line} HTTP/1.1\r\nHost: x\r\n${headers}Connection: close\r\n\r\n`);
    // The router found the route, but what read the URL saw `http://…`: a preflight was 405, the sign-in
    // page redirected to itself, a 404 quoted the host.
    const preflight = await send(
      'OPTIONS http://x/v1/tasks',
      'Origin: https://app.example\r\nAccess-Control-Request-Method: POST\r\n',
    );
    assert.match(preflight, /^HTTP\/1\.1 204 /, preflight);
    assert.match(preflight, /\r\naccess-control-allow-origin: \*\r\n/i);
    const signin = await send('GET http://x/signin?next=/tasks', 'Accept: text/html\r\n');
    assert.match(signin, /^HTTP\/1\.1 200 /, signin.slice(0, 300));
    const missing = await send('GET HTTP://x:8080/v1/nothing?lang=ru');
    assert.match(missing, /^HTTP\/1\.1 404 /, missing);
    assert.match(missing, /GET \/v1\/nothing /);
    const models = await send('GET http://x/v1/models', `Authorization: Bearer ${key}\r\n`);
    assert.match(models, /^HTTP\/1\.1 200 /);
    // An authority that names no host was served as sent: the route answered, the sign-in page redirected
    // to itself, a preflight was 405.
    for (const line of ['GET http://u@x/v1/models', 'GET http://x:1@evil/v1/models']) {
      const refused = await send(line, `Authorization: Bearer ${key}\r\n`);
      assert.match(refused, /^HTTP\/1\.1 422 [\s\S]*"code":"invalid_request"[\s\S]*must name a host/, line);
    }
    assert.match(
      await send(
        'OPTIONS http://u@x/v1/tasks',
        'Origin: https://app.example\r\nAccess-Control-Request-Method: POST\r\n',
      ),
      /^HTTP\/1\.1 422 /,
    );
    // An empty one (`http:///`) is left to the router, which finds no address in it.
    assert.match(
      await send('GET http:///v1/models', `Authorization: Bearer ${key}\r\n`),
      /^HTTP\/1\.1 404 [\s\S]*"code":"not_found"/,
    );
    // The asterisk form asks about the server (OPTIONS only, RFC 9112 §3.2.4); a path that starts with two
    // slashes is no address of ours.
    const server = await send('OPTIONS *');
    assert.match(server, /^HTTP\/1\.1 204 /, server);
    // Every method some address answers: the operator's PATCH (/admin/v1/models/{key}) too.
    assert.match(server, /\r\nallow: GET, HEAD, POST, PATCH, DELETE, OPTIONS\r\n/i);
    for (const method of ['GET', 'DELETE', 'POST'])
      assert.match(await send(`${method} *`), /^HTTP\/1\.1 422 [\s\S]*is for OPTIONS only/, method);
    // A query after the asterisk took the router to `/` again: the sign-in redirect, the root's 405.
    assert.match(await send('OPTIONS *?lang=ru'), /^HTTP\/1\.1 204 [\s\S]*\r\nallow: GET, HEAD, POST, /i);
    assert.match(await send('GET *?a=1'), /^HTTP\/1\.1 422 [\s\S]*is for OPTIONS only/);
    assert.match(await send('POST *?'), /^HTTP\/1\.1 422 [\s\S]*is for OPTIONS only/);
    assert.match(await send('GET //v1/models'), /^HTTP\/1\.1 404 [\s\S]*"code":"not_found"/);
  });

  test('a CONNECT is answered in the error table (405 with Allow, or 404) and closed, not dropped', async () => {
    if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as net.AddressInfo).port;
    const tunnel = await rawExchange(
      port,
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
    );
    assert.match(tunnel, /^HTTP\/1\.1 404 /, tunnel);
    assert.match(tunnel, /\r\nx-request-id: [0-9a-f-]{36}\r\n/i);
    assert.match(tunnel, /"code":"not_found"/);
    const tasks = await rawExchange(port, 'CONNECT /v1/tasks HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.match(tasks, /^HTTP\/1\.1 405 /, tasks);
    assert.match(tasks, /\r\nallow: GET, HEAD, POST\r\n/i);
    assert.match(tasks, /\r\nconnection: close\r\n/i);
    assert.match(tasks, /"code":"method_not_allowed"/);
  });

  test('a query parameter given twice is refused naming it, whatever its value or the route', async () => {
    const get = (url: string, lang = 'en') =>
      t.app.inject({ url, headers: { authorization: `Bearer ${key}`, 'accept-language': lang } });
    for (const [url, name] of [
      ['/v1/tasks?limit=1&limit=2', 'limit'],
      ['/v1/tasks?status=queued&status=running', 'status'],
      ['/v1/tasks?lang=ru&lang=en', 'lang'],
      ['/v1/tasks/some-task?wait=1&wait=2', 'wait'],
      ['/v1/webhook-deliveries?cursor=a&cursor=a', 'cursor'],
      ['/v1/topups?limit=5&limit=5', 'limit'],
      // Routes without a query schema of their own read ?lang= all the same.
      ['/v1/models?lang=ru&lang=en', 'lang'],
      ['/v1/me?lang=ru&lang=ru', 'lang'],
      ['/v1/models/model-3d?lang=en&lang=ru', 'lang'],
    ] as const) {
      const res = await get(url);
      expectTableError(res, 422, 'invalid_request');
      assert.equal(res.json().error.message, `querystring.${name}: given more than once; send it once`);
      const ru = await get(url, 'ru');
      assert.equal(
        ru.json().error.message,
        `querystring.${name}: задан больше одного раза; передайте его один раз`,
      );
    }
    const admin = await t.app.inject({
      url: '/admin/v1/accounts?q=a&q=b',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expectTableError(admin, 422, 'invalid_request');
    assert.match(admin.json().error.message, /^querystring\.q: given more than once/);
    const { id: accountId } = await t.account();
    const account = await t.app.inject({
      url: `/admin/v1/accounts/${accountId}?lang=ru&lang=en`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expectTableError(account, 422, 'invalid_request');
    assert.match(account.json().error.message, /^querystring\.lang: given more than once/);
    // Without a key, the key is what is wrong.
    expectTableError(await t.app.inject({ url: '/v1/models?lang=ru&lang=en' }), 401, 'invalid_api_key');
    // Given once, each is read as before.
    assert.equal((await get('/v1/tasks?limit=1&status=queued&lang=ru')).statusCode, 200);
    assert.equal((await get('/v1/models?lang=ru')).statusCode, 200);
    // A route that reads only ?lang= does not read other parameters, given twice or not.
    assert.equal((await get('/v1/models?foo=1&foo=2')).statusCode, 200);
    assert.equal((await get('/v1/me?lang=ru&foo=1')).statusCode, 200);
    // Its lang is documented as the shared parameter, as before it had a schema.
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    assert.deepEqual(doc.paths['/v1/me'].get.parameters[0], { $ref: '#/components/parameters/Lang' });
  });

  test('a query parameter a route does not know is refused naming it, on every route that reads one', async () => {
    const { id: accountId } = await t.account();
    const get = (url: string) => t.app.inject({ url, headers: { authorization: `Bearer ${key}` } });
    const admin = (url: string) => t.app.inject({ url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    // A mistyped filter (`statuss`) used to be dropped: the whole unfiltered list came back as if it applied.
    for (const res of [
      await get('/v1/tasks?statuss=queued'),
      await get('/v1/tasks/some-task?statuss=5'),
      await get('/v1/webhook-deliveries?statuss=queued'),
      await get('/v1/topups?statuss=queued'),
      await admin(`/admin/v1/accounts/${accountId}/ledger?statuss=queued`),
      await admin('/admin/v1/accounts?statuss=queued'),
    ]) {
      expectTableError(res, 422, 'invalid_request');
      assert.match(res.json().error.message, /^querystring\.statuss: /);
    }
    // ?lang= is known everywhere, as are each route's own parameters.
    for (const res of [
      await get('/v1/tasks?status=queued&lang=ru'),
      await get('/v1/webhook-deliveries?limit=5&lang=ru'),
      await admin(`/admin/v1/accounts/${accountId}/ledger?limit=5&lang=ru`),
    ]) {
      assert.equal(res.statusCode, 200, res.body);
    }
  });

  test('a limit refused for any reason names the bounds, as the range check does, in both languages', async () => {
    const { id: accountId } = await t.account();
    const get = (url: string, lang: string) =>
      t.app.inject({ url, headers: { authorization: `Bearer ${key}`, 'accept-language': lang } });
    const admin = (url: string, lang: string) =>
      t.app.inject({ url, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'accept-language': lang } });
    // `abc` and `-1` used to read "expected number, received NaN"; `0` and `101` named one bound only.
    for (const limit of ['abc', '-1', '0', '101', '1e1', '+']) {
      for (const path of ['/v1/tasks', '/v1/webhook-deliveries', '/v1/topups']) {
        const en = await get(`${path}?limit=${limit}`, 'en');
        expectTableError(en, 422, 'invalid_request');
        assert.equal(en.json().error.message, 'querystring.limit: expected a whole number from 1 to 100');
        const ru = await get(`${path}?limit=${limit}`, 'ru');
        assert.equal(ru.json().error.message, 'querystring.limit: ожидается целое число от 1 до 100');
      }
    }
    const ledger = await admin(`/admin/v1/accounts/${accountId}/ledger?limit=abc`, 'en');
    expectTableError(ledger, 422, 'invalid_request');
    assert.equal(ledger.json().error.message, 'querystring.limit: expected a whole number from 1 to 1000');
    assert.equal((await get('/v1/tasks?limit=100', 'en')).statusCode, 200);
    assert.equal((await get('/v1/tasks?limit=1', 'en')).statusCode, 200);
  });

  test('a request that cannot be parsed after one still being served waits for its answer', async () => {
    if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as net.AddressInfo).port;
    // A Content-Length shorter than the body sent: the rest reads as a next request that does not
    // parse. Its 422 went out first, so the client read it as the upload's answer (and the upload, stored
    // all the same, was lost to it), or as the answer to a task created and charged.
    const png = encodePng(8, 8, drawPicture(8, 8, 'a pipelined upload'));
    const answer = await rawExchange(
      port,
      Buffer.concat([
        Buffer.from(
          `POST /v1/files?filename=a.png HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
            `Content-Type: image/png\r\nContent-Length: ${png.length}\r\n\r\n`,
        ),
        png,
        Buffer.from('not a request\r\n\r\n'),
      ]),
    );
    assert.match(answer, /^HTTP\/1\.1 201 /, answer);
    // Then the refusal, and the connection closes.
    const statuses = answer.match(/HTTP\/1\.1 \d{3}/g) ?? [];
    assert.deepEqual(statuses, ['HTTP/1.1 201', 'HTTP/1.1 422'], answer);
  });

  test('a bodyless request answered at once keeps its connection: the pipelined request is answered', async () => {
    if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as net.AddressInfo).port;
    // A preflight, a refused query and a NUL in a path are answered in the turn their headers arrive.
    const first = [
      'OPTIONS /v1/tasks HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: POST\r\n\r\n',
      `GET /v1/tasks?limit=abc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`,
      `GET /v1/tasks/%00 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`,
    ];
    // The key is looked up once first, so the refusals below come from its cache, at once.
    await rawExchange(
      port,
      `GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`,
    );
    for (const request of first) {
      const answer = await rawExchange(
        port,
        `${request}GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      );
      const statuses = answer.match(/HTTP\/1\.1 \d{3}/g) ?? [];
      assert.equal(statuses.length, 2, answer);
      assert.equal(statuses[1], 'HTTP/1.1 200', answer);
      assert.doesNotMatch(answer.split('HTTP/1.1 200')[0] ?? '', /\r\nconnection: close\r\n/i, answer);
    }
  });

  test('[10.25] 401 answers carry WWW-Authenticate: Bearer', async () => {
    const missing = await t.app.inject({ method: 'GET', url: '/v1/models' });
    expectTableError(missing, 401, 'invalid_api_key');
    assert.equal(missing.headers['www-authenticate'], 'Bearer');
    const wrong = await t.app.inject({
      method: 'GET',
      url: '/v1/models',
      headers: { authorization: 'Bearer gta_wrong' },
    });
    expectTableError(wrong, 401, 'invalid_api_key');
    assert.equal(wrong.headers['www-authenticate'], 'Bearer error="invalid_token"');
    const operator = await t.app.inject({
      method: 'GET',
      url: '/admin/v1/accounts/x',
      headers: { authorization: 'Bearer not-the-admin-token' },
    });
    expectTableError(operator, 401, 'invalid_admin_token');
    assert.equal(operator.headers['www-authenticate'], 'Bearer error="invalid_token"');
    // RFC 6750 §3.1: another scheme or an empty header brought no token, so no error code.
    for (const authorization of ['Basic dXNlcjpwYXNz', `Token gta_wrong`, '', 'Bearer']) {
      for (const url of ['/v1/models', '/admin/v1/accounts/x']) {
        const other = await t.app.inject({ method: 'GET', url, headers: { authorization } });
        assert.equal(other.statusCode, 401, `${url} with "${authorization}"`);
        assert.equal(other.headers['www-authenticate'], 'Bearer', `${url} with "${authorization}"`);
      }
    }
  });

  test('[10.25] a balance past 2^53 kopecks is refused with 422, never rounded', async () => {
    const acct = await t.account();
    const credit = (amount: number | string, reference: string) =>
      t.app.inject({
        method: 'POST',
        url: `/admin/v1/accounts/${acct.id}/credits`,
        payload: `{"amount_minor":${amount},"reference":"${reference}"}`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      });
    // One amount past the safe range, written as JSON digits: refused, not rounded to 2^53.
    expectTableError(await credit('9007199254740993', 'too-big'), 422, 'invalid_request');
    assert.equal((await credit(Number.MAX_SAFE_INTEGER - 10, 'first')).statusCode, 201);
    const over = await credit(11, 'second');
    expectTableError(over, 422, 'invalid_request');
    assert.match(over.json().error.message, /9007199254740991/);
    assert.equal((await credit(10, 'third')).statusCode, 201);
    const account = (await t.admin('GET', `/admin/v1/accounts/${acct.id}`)).json();
    assert.equal(account.balance_minor, Number.MAX_SAFE_INTEGER);
    assert.equal(account.available_minor, Number.MAX_SAFE_INTEGER);
    const ledger = (await t.admin('GET', `/admin/v1/accounts/${acct.id}/ledger`)).json();
    assert.deepEqual(
      ledger.entries.map((e: { amount_minor: number }) => e.amount_minor).sort(),
      [10, Number.MAX_SAFE_INTEGER - 10].sort(),
    );
  });

  test('a lone surrogate in a body is refused: two references never become one credit', async () => {
    const acct = await t.account();
    const credit = (reference: string) =>
      t.app.inject({
        method: 'POST',
        url: `/admin/v1/accounts/${acct.id}/credits`,
        payload: `{"amount_minor":100,"reference":"${reference}"}`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      });
    // Text columns stored both as "r\uFFFD": the second was answered 200 as a replay of the first and
    // its 100 kopecks were never credited.
    for (const reference of ['r\\ud800', 'r\\udc00']) {
      const refused = await credit(reference);
      expectTableError(refused, 422, 'invalid_request');
      assert.match(refused.json().error.message, /surrogate/);
    }
    // A pair is a character, escaped or not; so is U+FFFD itself.
    assert.equal((await credit('r\\ud83d\\ude00')).statusCode, 201);
    assert.equal((await credit('r\uFFFD')).statusCode, 201);
    assert.equal((await t.admin('GET', `/admin/v1/accounts/${acct.id}`)).json().balance_minor, 200);
    // In a property name and deep in task settings alike, before anything is priced or held.
    const settings = '"task_type":"text_to_model","prompt":"a chair"';
    for (const inner of [`${settings},"x\\udfff":1`, `${settings},"x":[["\\uDBFF"]]`]) {
      expectTableError(
        await post('/v1/price', `{"model":"model-3d","settings":{${inner}}}`),
        422,
        'invalid_request',
      );
    }
  });
});

describe('TRUST_PROXY', () => {
  test('a trusted proxy’s X-Forwarded-For is the client for the wrong-key limit; anyone else’s is not', async () => {
    const t = await startTestApp({
      worker: false,
      env: { TRUST_PROXY: '10.9.8.7' },
      limits: { accountRequests: 10_000, wrongKeyAttempts: 2, windowSeconds: 60 },
    });
    try {
      const guess = (remoteAddress: string, client: string) =>
        t.app.inject({
          method: 'GET',
          url: '/v1/models',
          headers: {
            authorization: 'Bearer gta_wrongwrongwrongwrongwrongwrongwrong',
            'x-forwarded-for': client,
          },
          remoteAddress,
        });
      // Through the proxy: each client has its own budget.
      expectError(await guess('10.9.8.7', '203.0.113.5'), 401, 'invalid_api_key');
      expectError(await guess('10.9.8.7', '203.0.113.5'), 401, 'invalid_api_key');
      expectError(await guess('10.9.8.7', '203.0.113.5'), 429, 'rate_limited');
      expectError(await guess('10.9.8.7', '203.0.113.6'), 401, 'invalid_api_key');
      // Not a trusted proxy: its X-Forwarded-For changes nothing, every guess is its own address's.
      expectError(await guess('10.9.8.6', '203.0.113.7'), 401, 'invalid_api_key');
      expectError(await guess('10.9.8.6', '203.0.113.8'), 401, 'invalid_api_key');
      expectError(await guess('10.9.8.6', '203.0.113.9'), 429, 'rate_limited');
      // An IPv6 client is counted by its /64: another address of the same /64 brings no fresh budget.
      expectError(await guess('10.9.8.7', '2001:db8:1:2::1'), 401, 'invalid_api_key');
      expectError(await guess('10.9.8.7', '2001:db8:1:2::2'), 401, 'invalid_api_key');
      expectError(await guess('10.9.8.7', '2001:db8:1:2:ffff::3'), 429, 'rate_limited');
      expectError(await guess('10.9.8.7', '2001:db8:1:3::1'), 401, 'invalid_api_key');
    } finally {
      await t.close();
    }
  });
});

describe('operator token guesses', () => {
  test('[10.21] wrong operator tokens are limited per address; past the budget nothing is checked', async () => {
    const t = await startTestApp({
      worker: false,
      limits: { accountRequests: 10_000, wrongKeyAttempts: 3, windowSeconds: 60 },
    });
    try {
      const attempt = (token: string, remoteAddress = '10.9.8.7') =>
        t.app.inject({
          method: 'POST',
          url: '/admin/v1/accounts',
          payload: { name: 'Guess' },
          headers: { authorization: `Bearer ${token}` },
          remoteAddress,
        });
      for (let i = 0; i < 3; i++)
        expectError(await attempt(`guess-number-${i}-xxxxxx`), 401, 'invalid_admin_token');
      const limited = await attempt('guess-number-3-xxxxxx');
      expectError(limited, 429, 'rate_limited');
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      // The right token is not even compared from that address now: a guess cannot be confirmed.
      expectError(await attempt(ADMIN_TOKEN), 429, 'rate_limited');
      // Other addresses, and API keys, have their own budgets.
      assert.equal((await attempt(ADMIN_TOKEN, '10.9.8.6')).statusCode, 201);
      const apiKey = await t.app.inject({ method: 'GET', url: '/v1/models', remoteAddress: '10.9.8.7' });
      expectError(apiKey, 401, 'invalid_api_key');
    } finally {
      await t.close();
    }
  });
});

/**
 * Opens a connection, sends `head`, then one byte every `everyMs` for at most `forMs`; returns what the
 * server answered and whether it closed the connection before the trickle ran out.
 */
async function trickle(
  port: number,
  head: string,
  { everyMs = 200, forMs = 6_000 } = {},
): Promise<{ answer: string; closedByServer: boolean }> {
  const socket = net.connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  let closed = false;
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => {});
  const done = new Promise<void>((resolve) =>
    socket.on('close', () => {
      closed = true;
      resolve();
    }),
  );
  socket.write(head);
  const started = Date.now();
  while (!closed && Date.now() - started < forMs) {
    await new Promise((resolve) => setTimeout(resolve, everyMs));
    if (!closed) socket.write('x');
  }
  const closedByServer = closed;
  socket.destroy();
  await done;
  return { answer: Buffer.concat(chunks).toString(), closedByServer };
}

describe('slow requests', () => {
  let t: TestApp;
  let key = '';
  let port = 0;
  before(async () => {
    t = await startTestApp({ worker: false, env: { BODY_TIMEOUT: '1s' } });
    key = (await t.account()).key;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  after(() => t.close());

  test('[10.20] the server bounds headers and whole requests', () => {
    assert.equal(t.app.server.requestTimeout, 10 * 60_000);
    assert.equal(t.app.server.headersTimeout, 10_000);
  });

  const expectTimedOut = (result: { answer: string; closedByServer: boolean }): void => {
    assert.match(result.answer, /^HTTP\/1\.1 408 /, result.answer || '(no answer)');
    assert.match(result.answer, /\r\nx-request-id: [0-9a-f-]{36}\r\n/i);
    assert.match(result.answer, /"code":"request_timeout"/);
    assert.ok(result.closedByServer, 'the server closes the connection');
  };

  test("[10.20] headers sent a line at a time are answered 408 in the error table's shape", async () => {
    // Node's default would wait a minute (and check only every 30 s); ours is 10 s, checked every 2 s.
    const result = await trickle(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ', {
      everyMs: 500,
      forMs: 20_000,
    });
    assert.match(result.answer, /^HTTP\/1\.1 408 /, result.answer || '(no answer)');
    assert.match(result.answer, /"code":"request_timeout"/);
    assert.match(result.answer, /\r\nX-Request-Id: [0-9a-f-]{36}\r\n/i);
    assert.ok(result.closedByServer);
  });

  test('[10.20] a raw upload that trickles one byte at a time is answered 408 and closed', async () => {
    const head =
      'POST /v1/files?filename=a.png HTTP/1.1\r\nHost: x\r\n' +
      `Authorization: Bearer ${key}\r\nContent-Type: image/png\r\nContent-Length: 100000\r\n\r\n`;
    expectTimedOut(await trickle(port, head));
  });

  test('an upload declared larger than 100 MB is 413 file_too_large before its body comes', async () => {
    for (const type of ['image/png', 'multipart/form-data; boundary=b']) {
      const head =
        'POST /v1/files?filename=a.png HTTP/1.1\r\nHost: x\r\n' +
        `Authorization: Bearer ${key}\r\nContent-Type: ${type}\r\nContent-Length: 999999999999\r\n\r\n`;
      const { answer } = await trickle(port, head, { forMs: 2_000 });
      assert.match(answer, /^HTTP\/1\.1 413 /, answer.slice(0, 200));
      assert.match(answer, /file_too_large/);
    }
  });

  test('[10.20] a multipart upload that stalls after its part header is answered 408 and closed', async () => {
    const body =
      '--b\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n' +
      'Content-Type: image/png\r\n\r\n';
    const head =
      'POST /v1/files HTTP/1.1\r\nHost: x\r\n' +
      `Authorization: Bearer ${key}\r\nContent-Type: multipart/form-data; boundary=b\r\n` +
      `Content-Length: 100000\r\n\r\n${body}`;
    expectTimedOut(await trickle(port, head));
  });

  test('[10.20] a JSON body that trickles is answered 408 and closed', async () => {
    const head =
      'POST /v1/tasks HTTP/1.1\r\nHost: x\r\n' +
      `Authorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"model":"`;
    expectTimedOut(await trickle(port, head));
    // A body that arrives at a normal pace is unaffected.
    const res = await fetch(`http://127.0.0.1:${port}/v1/price`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'model-3d', settings: { task_type: 'text_to_model', prompt: 'a cup' } }),
    });
    assert.equal(res.status, 200, await res.text());
  });
});
