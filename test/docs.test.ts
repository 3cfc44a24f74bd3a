import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from './helpers.ts';

describe('documentation endpoints', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('GET /openapi.json is OpenAPI 3.1 covering the routes, with request and response schemas', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.equal(doc.openapi, '3.1.0');
    for (const path of ['/v1/models', '/v1/me', '/v1/tasks', '/v1/files']) assert.ok(doc.paths[path], path);
    assert.ok(doc.paths['/v1/models'].get.responses['200']);
    assert.equal(doc.components.securitySchemes.bearer.scheme, 'bearer');
  });

  test('GET /admin/openapi.json is the operator document, behind the admin token', async () => {
    assert.equal((await t.app.inject({ method: 'GET', url: '/admin/openapi.json' })).statusCode, 401);
    const res = await t.admin('GET', '/admin/openapi.json');
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    for (const path of ['/admin/v1/accounts', '/admin/v1/accounts/{id}/credits', '/admin/v1/keys/{id}']) {
      assert.ok(doc.paths[path], path);
    }
    const credit = doc.paths['/admin/v1/accounts/{id}/credits'].post;
    assert.ok(credit.requestBody.content['application/json'].schema.properties.amount_minor);
    assert.equal(doc.components.securitySchemes.adminToken.scheme, 'bearer');
  });

  test('GET /docs renders a reference page and GET /llms.txt lists the endpoints', async () => {
    const docs = await t.app.inject({ method: 'GET', url: '/docs' });
    assert.equal(docs.statusCode, 200);
    assert.match(String(docs.headers['content-type']), /text\/html/);
    assert.match(docs.body, /<html/i);
    const llms = await t.app.inject({ method: 'GET', url: '/llms.txt' });
    assert.equal(llms.statusCode, 200);
    assert.match(String(llms.headers['content-type']), /text\/plain/);
    assert.match(llms.body, /GET \/v1\/models/);
    assert.match(llms.body, /http:\/\/api\.test\/openapi\.json/);
  });
});
