import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { READY_TIMEOUT_MS } from '../src/http/routes/health.ts';
import { makePng } from '../src/media/fixtures.ts';
import { ADMIN_TOKEN, errorOf, expectError, startTestApp, type TestApp } from './helpers.ts';

describe('errors, languages and framework edges', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('unknown paths: 404 not_found with docs, openapi and llms links', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v2/whatever' });
    expectError(res, 404, 'not_found');
    assert.deepEqual(
      { docs: res.json().docs, openapi: res.json().openapi, llms: res.json().llms },
      {
        docs: 'http://api.test/docs',
        openapi: 'http://api.test/openapi.json',
        llms: 'http://api.test/llms.txt',
      },
    );
  });

  test('a known path with another method: 405 method_not_allowed with Allow and links', async () => {
    const res = await t.app.inject({ method: 'PUT', url: '/v1/models' });
    expectError(res, 405, 'method_not_allowed');
    assert.equal(res.headers.allow, 'GET, HEAD');
    assert.equal(res.json().openapi, 'http://api.test/openapi.json');
    const admin = await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/a1/credits' });
    expectError(admin, 405, 'method_not_allowed');
    assert.equal(admin.headers.allow, 'POST');
  });

  test('a HEAD refused 404 or 405 carries the headers of the GET, Content-Length included, and no body', async () => {
    for (const url of [
      '/v2/whatever',
      '/v1/price',
      '/v1/tasks/x/cancel',
      '/v1/tasks/%ZZ',
      `/v1/tasks/${'a'.repeat(1_100)}`,
    ]) {
      const get = await t.app.inject({ method: 'GET', url });
      const head = await t.app.inject({ method: 'HEAD', url });
      assert.equal(head.statusCode, get.statusCode, url);
      assert.equal(head.headers['content-length'], get.headers['content-length'], url);
      assert.equal(head.headers.allow, get.headers.allow, url);
      assert.equal(head.body, '', url);
    }
  });

  test('an empty path segment names nothing under any method: 404, never 405 with an Allow that 404s', async () => {
    const { key } = await t.account();
    for (const [method, url] of [
      ['POST', '/v1/tasks/'],
      ['DELETE', '/v1/tasks/'],
      ['GET', '/v1/tasks//cancel'],
      ['POST', '/v1/tasks//artifacts/0'],
      ['POST', '/v1/models/image/styles/'],
      ['PUT', '/v1/models/'],
      ['GET', '/v1/models/'],
    ] as const) {
      const res = await t.app.inject({ method, url, headers: { authorization: `Bearer ${key}` } });
      expectError(res, 404, 'not_found');
      assert.equal(res.headers.allow, undefined, `${method} ${url}`);
    }
  });

  test('messages follow ?lang first, then Accept-Language, default English', async () => {
    const en = errorOf(await t.app.inject({ method: 'GET', url: '/v1/models' }));
    const ru = errorOf(
      await t.app.inject({
        method: 'GET',
        url: '/v1/models',
        headers: { 'accept-language': 'ru-RU,ru;q=0.9' },
      }),
    );
    const query = errorOf(
      await t.app.inject({ method: 'GET', url: '/v1/models?lang=en', headers: { 'accept-language': 'ru' } }),
    );
    const q = errorOf(
      await t.app.inject({
        method: 'GET',
        url: '/v1/models',
        headers: { 'accept-language': 'en;q=0.3, ru;q=0.8' },
      }),
    );
    assert.equal(en.code, 'invalid_api_key');
    assert.match(en.message, /API key/);
    assert.match(ru.message, /ключ/);
    assert.equal(query.message, en.message);
    assert.equal(q.message, ru.message);
    // A ?lang= we do not speak, or an empty one, is no choice: the header decides, as the document says.
    for (const lang of ['de', 'xx', '']) {
      const other = errorOf(
        await t.app.inject({
          method: 'GET',
          url: `/v1/models?lang=${lang}`,
          headers: { 'accept-language': 'ru' },
        }),
      );
      assert.equal(other.message, ru.message, `?lang=${lang}`);
    }
    const parameters = (await t.app.inject({ url: '/openapi.json' })).json().components.parameters;
    assert.match(parameters.Lang.description, /other value.*Accept-Language/);
    assert.match(parameters.AcceptLanguage.description, /not en or ru/);
  });

  test('malformed JSON and wrong body shapes are 422 invalid_request, in both languages', async () => {
    const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    expectError(
      await t.app.inject({ method: 'POST', url: '/admin/v1/accounts', payload: '{"name":', headers }),
      422,
      'invalid_request',
    );
    expectError(
      await t.app.inject({ method: 'POST', url: '/admin/v1/accounts', payload: '', headers }),
      422,
      'invalid_request',
    );
    expectError(
      await t.app.inject({ method: 'POST', url: '/admin/v1/accounts', payload: '[1,2]', headers }),
      422,
      'invalid_request',
    );
    const wrongType = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/accounts?lang=ru',
      payload: { name: 42 },
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expectError(wrongType, 422, 'invalid_request');
    assert.match(errorOf(wrongType).message, /body\.name/);
    assert.match(errorOf(wrongType).message, /[а-я]/i);
    assert.match(errorOf(wrongType).message, /получено число/, 'the message says what was received');
    const english = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/accounts',
      payload: { name: 42 },
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    assert.equal(errorOf(english).message, 'body.name: Invalid input: expected string, received number');
    const array = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/accounts',
      payload: '[1,2]',
      headers,
    });
    assert.equal(errorOf(array).message, 'body: Invalid input: expected object, received array');
    const text = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/accounts',
      payload: 'name=x',
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
    });
    expectError(text, 422, 'invalid_request');
  });

  test('JSON bodies over 16 KB outside tasks and price: 413 request_too_large', async () => {
    const res = await t.admin('POST', '/admin/v1/accounts', { name: 'x'.repeat(17 * 1024) });
    expectError(res, 413, 'request_too_large');
    assert.equal((await t.admin('POST', '/admin/v1/accounts', { name: 'x'.repeat(150) })).statusCode, 201);
  });

  test('a body over 16 KB sent where none is expected (cancel, DELETE) is 413 too, and nothing changes', async () => {
    const acct = await t.account({ balanceMinor: 1_000_000 });
    const created = await t.call(acct.key, 'POST', '/v1/tasks', {
      model: 'image',
      settings: { prompt: 'a cat' },
    });
    assert.equal(created.statusCode, 202, created.body);
    const id = created.json().id as string;
    const big = { note: 'x'.repeat(17 * 1024) };
    expectError(await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`, big), 413, 'request_too_large');
    assert.notEqual((await t.call(acct.key, 'GET', `/v1/tasks/${id}`)).json().status, 'canceled');
    // Refused before the route: the record need not exist, and its DELETE is never reached.
    const gone = `/v1/models/image/styles/${id}`;
    expectError(await t.call(acct.key, 'DELETE', gone, big), 413, 'request_too_large');
    expectError(await t.call(acct.key, 'DELETE', gone), 404, 'record_not_found');
    // An upload's GET and DELETE are JSON routes like the others, outside the upload's stream parser.
    const upload = await t.call(
      acct.key,
      'POST',
      '/v1/files?filename=a.png',
      fs.readFileSync(await makePng(t.dir, 4, 4)),
      {
        'content-type': 'image/png',
      },
    );
    assert.equal(upload.statusCode, 201, upload.body);
    const file = `/v1/files/${upload.json().id}`;
    expectError(await t.call(acct.key, 'DELETE', file, big), 413, 'request_too_large');
    expectError(
      await t.call(acct.key, 'DELETE', file, '{bad', { 'content-type': 'application/json' }),
      422,
      'invalid_request',
    );
    assert.equal((await t.call(acct.key, 'GET', file)).statusCode, 200, 'the upload is still there');
  });

  test('every response carries X-Request-Id; a printable one of at most 128 characters is kept', async () => {
    for (const given of ['abc-123', 'req 42/retry #2', 'x'.repeat(128)]) {
      const own = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': given } });
      assert.equal(own.headers['x-request-id'], given);
    }
    for (const res of [
      await t.app.inject({ method: 'GET', url: '/healthz' }),
      await t.app.inject({ method: 'GET', url: '/nope' }),
      await t.app.inject({ method: 'GET', url: '/v1/models' }),
      await t.app.inject({
        method: 'GET',
        url: '/healthz',
        headers: { 'x-request-id': 'x'.repeat(129) },
      }),
      await t.app.inject({
        method: 'GET',
        url: '/healthz',
        headers: { 'x-request-id': Buffer.from('номер', 'utf8').toString('latin1') },
      }),
    ]) {
      assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    }
  });

  test('/healthz and /readyz answer 200 without a key', async () => {
    assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
  });
});

describe('unexpected failures', () => {
  test('a broken database gives 500 internal_error with no internal detail, and /readyz 503', async () => {
    const t = await startTestApp({ worker: false });
    const acct = await t.account();
    await t.container.db.db.schema.dropTable('model_settings').execute();
    const res = await t.call(acct.key, 'GET', '/v1/models');
    expectError(res, 500, 'internal_error');
    assert.doesNotMatch(res.body, /model_settings|sqlite|SQL|stack|at /i);
    await t.container.db.close();
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expectError(ready, 503, 'not_ready');
    await t.app.close();
  });

  test('/readyz answers 503 in time when the storage or the database never answers', {
    timeout: 20_000,
  }, async () => {
    const t = await startTestApp({ worker: false });
    try {
      // A bucket or a database server that takes the connection and never answers (a stopped process, a
      // cut network): a probe must hear "not ready", not wait for the clients' own 35 to 60 s timeouts.
      t.container.storage.ping = () => new Promise<void>(() => {});
      const started = performance.now();
      const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
      expectError(ready, 503, 'not_ready');
      assert.ok(performance.now() - started < READY_TIMEOUT_MS + 1_000);
    } finally {
      // The whole app, its database included: a PostgreSQL pool left open keeps the file's process alive.
      await t.close();
    }
  });
});
