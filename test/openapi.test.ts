import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import swagger from '@fastify/swagger';
import { Ajv2020 } from 'ajv/dist/2020.js';
import Fastify from 'fastify';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { type OpenApiDocument, publicDocument, swaggerOptions } from '../src/http/index.ts';
import { eventStreamResponse } from '../src/http/routes/schemas.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { ResponseValidator } from './openapi-validator.ts';
import { ROOT } from './processes.ts';

type Json = Record<string, unknown>;

function operations(doc: OpenApiDocument): { path: string; method: string; op: Json }[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method, op: op as Json })),
  );
}

function refsOf(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsOf(item, found);
  else if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') found.push(child);
      else refsOf(child, found);
    }
  }
  return found;
}

function resolve(doc: OpenApiDocument, ref: string): unknown {
  let node: unknown = doc;
  for (const part of ref.slice(2).split('/')) {
    node = (node as Json | undefined)?.[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return node;
}

describe('OpenAPI documents (CONTRACT §16)', () => {
  let t: TestApp;
  let open: OpenApiDocument;
  let operator: OpenApiDocument;
  before(async () => {
    t = await startTestApp({ worker: false });
    open = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    operator = (await t.admin('GET', '/admin/openapi.json')).json();
  });
  after(() => t.close());

  test('every operation has a unique camelCase operationId, the usual ones by their names', () => {
    const ids = [...operations(open), ...operations(operator)].map(({ path, method, op }) => {
      assert.equal(typeof op.operationId, 'string', `${method} ${path} has no operationId`);
      assert.match(op.operationId as string, /^[a-z][a-zA-Z0-9]+$/, `${method} ${path}`);
      return op.operationId as string;
    });
    assert.equal(new Set(ids).size, ids.length, 'operationIds repeat');
    for (const id of [
      'createTask',
      'getTask',
      'listTasks',
      'cancelTask',
      'priceTask',
      'downloadArtifact',
      'uploadFile',
      'listModels',
      'createMusicStyle',
      'listMusicStyles',
      'verifySingingVoice',
    ]) {
      assert.ok(ids.includes(id), id);
    }
  });

  test('docs/api-document.md names every operation id and shared component of both documents', () => {
    const page = fs.readFileSync(path.join(ROOT, 'docs/api-document.md'), 'utf8');
    const all = [...operations(open), ...operations(operator)];
    const paths = new Set(all.map((o) => o.path));
    // A library's four operations are named by the page's pattern (`list<Title>s`, `create<Title>`, …).
    const library = (p: string) =>
      p.startsWith('/v1/models/') &&
      (paths.has(`${p}/{id}`) || (p.endsWith('/{id}') && paths.has(p.slice(0, -5))));
    const ids = all.filter((o) => !library(o.path)).map((o) => String(o.op.operationId));
    assert.deepEqual(
      ids.filter((id) => !page.includes(`\`${id}\``)),
      [],
      'operation ids the page does not name',
    );
    const components = Object.keys({ ...open.components?.schemas, ...operator.components?.schemas }).filter(
      (name) => !/^(Settings|TaskSettings|TaskRequest)\./.test(name) && name !== 'TaskRequest',
    );
    assert.deepEqual(
      components.filter((name) => !page.includes(`\`${name}\``)),
      [],
      'components the page does not name',
    );
  });

  test("every operation's tags are declared in its document's tags, and every declared tag is used", () => {
    for (const doc of [open, operator]) {
      const declared = (doc.tags ?? []).map((tag) => String(tag.name));
      const used = new Set(operations(doc).flatMap(({ op }) => op.tags as string[]));
      for (const { path, method, op } of operations(doc)) {
        assert.ok((op.tags as string[]).length > 0, `${method} ${path} has no tag`);
        for (const tag of op.tags as string[]) assert.ok(declared.includes(tag), `${method} ${path}: ${tag}`);
      }
      assert.deepEqual(
        declared.filter((tag) => !used.has(tag)),
        [],
      );
    }
  });

  test('summaries take "an" before a vowel: "Create an element", "An image style"', () => {
    const summaries = operations(open).map(({ op }) => String(op.summary));
    const wrong = summaries.filter((summary) => /\ba [aeiou]/i.test(summary));
    assert.deepEqual(wrong, []);
    for (const summary of ['Create an element', 'An image style', 'Delete an omni voice']) {
      assert.ok(
        summaries.some((s) => s.startsWith(summary)),
        summary,
      );
    }
  });

  test('the public document has no operator path; the operator document only those', () => {
    const publicPaths = Object.keys(open.paths);
    assert.ok(publicPaths.length > 20);
    assert.deepEqual(
      publicPaths.filter((p) => p.startsWith('/admin')),
      [],
    );
    assert.ok(Object.keys(operator.paths).length >= 10);
    assert.ok(Object.keys(operator.paths).every((p) => p.startsWith('/admin/')));
    assert.ok(!JSON.stringify(open).includes('/admin/v1'));
    for (const hidden of ['/openapi.json', '/llms.txt', '/docs', '/healthz', '/readyz', '/files/{token}']) {
      assert.equal(open.paths[hidden], undefined, hidden);
    }
  });

  test('the rendered reference at /docs shows the public document', async () => {
    const shown = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json() as OpenApiDocument;
    assert.deepEqual(Object.keys(shown.paths), Object.keys(open.paths));
  });

  test('the upload takes multipart and raw bodies of any type', () => {
    const upload = open.paths['/v1/files']?.post;
    const content = upload?.requestBody?.content ?? {};
    const multipart = content['multipart/form-data']?.schema as Json;
    assert.deepEqual((multipart.properties as Json).file, {
      type: 'string',
      format: 'binary',
      description: 'the file, with its filename',
    });
    assert.equal(content['application/octet-stream']?.schema?.format, 'binary');
    assert.equal(content['*/*']?.schema?.format, 'binary');
    assert.ok(upload?.responses['201']);
  });

  test('a POST that takes no body declares an optional empty object, and only those', () => {
    const optional: string[] = [];
    for (const [path, operations] of Object.entries(open.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (operation.requestBody?.required === false) optional.push(`${method} ${path}`);
      }
    }
    assert.deepEqual(optional.sort(), [
      'post /v1/models/music/voices/{id}/retry',
      'post /v1/tasks/{id}/cancel',
      'post /v1/webhook-deliveries/{id}/retry',
      'post /v1/webhooks/{id}/rotate-secret',
    ]);
    const schema =
      open.paths['/v1/tasks/{id}/cancel']?.post?.requestBody?.content['application/json']?.schema;
    assert.deepEqual(schema, {
      anyOf: [{ type: 'object', properties: {}, additionalProperties: false }, { type: 'null' }],
    });
  });

  test('downloads are binary with 200 and 206; 416 and other refusals share one Error', () => {
    const download = open.paths['/v1/tasks/{id}/artifacts/{index}']?.get;
    assert.ok(download);
    for (const status of ['200', '206']) {
      const content: Record<string, { schema: Json }> = (
        download.responses[status] as { content: Record<string, { schema: Json }> }
      ).content;
      assert.ok(!('application/json' in content), status);
      assert.ok(Object.keys(content).length > 0);
      for (const media of Object.values(content)) {
        assert.deepEqual(media.schema, { type: 'string', format: 'binary' });
      }
    }
    assert.ok((download.responses['206'] as { headers: Json }).headers['Content-Range']);
    // Every header the download sends is declared where it is sent.
    for (const status of ['200', '206', '304']) {
      const headers = (download.responses[status] as { headers: Json }).headers;
      for (const name of ['ETag', 'Accept-Ranges', 'Content-Disposition'])
        assert.ok(headers[name], `${status} ${name}`);
    }
    assert.ok((download.responses['416'] as { headers: Json }).headers['Content-Range']);
    // Every refusal of every operation is the Error component, directly or through a shared response.
    for (const doc of [open, operator]) {
      for (const { path, method, op } of operations(doc)) {
        for (const [status, answer] of Object.entries(op.responses as Record<string, Json>)) {
          if (Number(status) < 400) continue;
          const declared = (typeof answer.$ref === 'string' ? resolve(doc, answer.$ref) : answer) as Json;
          const schema = (declared.content as Record<string, { schema: Json }>)['application/json']?.schema;
          assert.deepEqual(schema, { $ref: '#/components/schemas/Error' }, `${method} ${path} ${status}`);
        }
      }
    }
  });

  test('creations declare Location: 202 for tasks, 201 for library records; 204 has no body', () => {
    const created = open.paths['/v1/tasks']?.post?.responses['202'] as { headers: Json; content: Json };
    assert.ok(created.headers.Location);
    assert.deepEqual((created.content['application/json'] as Json).schema, {
      $ref: '#/components/schemas/Task',
    });
    const style = open.paths['/v1/models/music-styles/styles']?.post?.responses['201'] as {
      headers: Json;
      content: Json;
    };
    assert.ok(style.headers.Location);
    assert.deepEqual((style.content['application/json'] as Json).schema, {
      $ref: '#/components/schemas/MusicStyle',
    });
    const deleted = open.paths['/v1/files/{id}']?.delete?.responses['204'] as Json;
    assert.equal(deleted.content, undefined);
  });

  test('every operation takes lang, Accept-Language and X-Request-Id; every answer declares X-Request-Id', () => {
    for (const doc of [open, operator]) {
      for (const { path, method, op } of operations(doc)) {
        const names = (op.parameters as Json[]).map((p) => {
          const param = (typeof p.$ref === 'string' ? resolve(doc, p.$ref) : p) as Json;
          return `${String(param.in)}:${String(param.name).toLowerCase()}`;
        });
        for (const name of ['query:lang', 'header:accept-language', 'header:x-request-id']) {
          assert.equal(names.filter((n) => n === name).length, 1, `${method} ${path} ${name}`);
        }
        for (const [status, answer] of Object.entries(op.responses as Record<string, Json>)) {
          const declared = (typeof answer.$ref === 'string' ? resolve(doc, answer.$ref) : answer) as Json;
          assert.ok((declared.headers as Json)['X-Request-Id'], `${method} ${path} ${status}`);
        }
      }
    }
  });

  test('answers declare the RateLimit and WWW-Authenticate headers they send', async () => {
    const { key } = await t.account();
    const declaredHeaders = (path: string, method: string, status: number): string[] => {
      const responses = (open.paths[path]?.[method]?.responses ?? {}) as Record<string, Json>;
      const answer = responses[String(status)] ?? {};
      const declared = (typeof answer.$ref === 'string' ? resolve(open, answer.$ref) : answer) as Json;
      return Object.keys(declared.headers as Json).map((name) => name.toLowerCase());
    };
    for (const [path, method, res] of [
      ['/v1/me', 'get', await t.call(key, 'GET', '/v1/me')],
      ['/v1/tasks/{id}', 'get', await t.call(key, 'GET', '/v1/tasks/no-such-task')],
      ['/v1/tasks', 'post', await t.call(key, 'POST', '/v1/tasks', { model: 'image' })],
      ['/v1/me', 'get', await t.call('gta_wrong', 'GET', '/v1/me')],
    ] as const) {
      const declared = declaredHeaders(path, method, res.statusCode);
      for (const name of ['ratelimit-policy', 'ratelimit', 'www-authenticate']) {
        if (res.headers[name] === undefined) continue;
        assert.ok(declared.includes(name), `${method} ${path} ${res.statusCode} sends ${name} undeclared`);
      }
    }
    for (const { path, method, op } of operations(operator)) {
      const answers = Object.values(op.responses as Record<string, Json>);
      const all = answers.map((a) => (typeof a.$ref === 'string' ? resolve(operator, a.$ref) : a) as Json);
      assert.ok(
        !all.some((a) => (a.headers as Json).RateLimit),
        `${method} ${path}: operator answers are not metered`,
      );
    }
  });

  test('every public POST, PUT, PATCH and DELETE lists csrf_failed among its 403 refusals', () => {
    for (const { path, method, op } of operations(open)) {
      if (!['post', 'put', 'patch', 'delete'].includes(method)) continue;
      const answer = (op.responses as Record<string, Json>)['403'] as Json;
      const declared = (typeof answer.$ref === 'string' ? resolve(open, answer.$ref) : answer) as Json;
      assert.match(String(declared.description), /csrf_failed/, `${method} ${path}`);
    }
  });

  test('every public refusal names its error codes', () => {
    for (const { path, method, op } of operations(open)) {
      for (const [status, answer] of Object.entries(op.responses as Record<string, Json>)) {
        if (Number(status) < 400) continue;
        const declared = (typeof answer.$ref === 'string' ? resolve(open, answer.$ref) : answer) as Json;
        assert.match(String(declared.description), /[a-z]+_[a-z_]+/, `${method} ${path} ${status}`);
      }
    }
  });

  test('a 404 names what the operation looks up: the model filter of the list, the task of a persona only', () => {
    const described = (path: string, method: 'get' | 'post') => {
      const answer = open.paths[path]?.[method]?.responses['404'] as Json;
      return String(
        ((typeof answer.$ref === 'string' ? resolve(open, answer.$ref) : answer) as Json).description,
      );
    };
    assert.match(described('/v1/tasks', 'get'), /model_not_found/);
    assert.match(described('/v1/models/music/personas', 'post'), /task_not_found/);
    assert.doesNotMatch(described('/v1/models/image/styles', 'post'), /task_not_found/);
  });

  test('every operation declares 408 and 413: headers too slow or too large meet a GET as well', async () => {
    for (const doc of [open, operator]) {
      for (const { path, method, op } of operations(doc)) {
        const responses = op.responses as Record<string, Json>;
        for (const status of ['408', '413']) assert.ok(status in responses, `${method} ${path} ${status}`);
      }
    }
    // Node refuses a header block past 16 KB before any route runs; the answer is still GET /v1/me's.
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as net.AddressInfo;
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.write(`GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    await new Promise((done) => socket.on('close', done));
    const [head = '', body = ''] = Buffer.concat(chunks).toString().split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 413 /, head);
    const violation = new ResponseValidator({ public: open }).check({
      method: 'GET',
      url: '/v1/me',
      status: 413,
      contentType: /content-type: ([^\r]+)/i.exec(head)?.[1],
      body,
      headers: head
        .split('\r\n')
        .slice(1)
        .map((line) => line.split(':')[0] ?? ''),
    });
    assert.equal(violation, null);
  });

  test('a price lists only what pricing refuses; both list the refusals of library items', () => {
    const price = open.paths['/v1/price']?.post?.responses as Record<string, { description?: string }>;
    const create = open.paths['/v1/tasks']?.post?.responses as Record<string, { description?: string }>;
    // POST /v1/price holds nothing and takes no Idempotency-Key (CONTRACT §5): never 402, 409 or a limit.
    for (const status of ['402', '409']) assert.equal(price[status], undefined, status);
    assert.equal(price['403']?.description, 'model_not_allowed_for_key, csrf_failed');
    assert.equal(price['503']?.description, 'model_unavailable');
    assert.ok(create['402'] && create['409']);
    assert.match(String(create['403']?.description), /key_daily_limit_exceeded/);
    assert.match(String(create['503']?.description), /sg_unavailable/);
    for (const responses of [price, create]) {
      for (const code of ['element_not_found', 'persona_not_found', 'voice_not_ready', 'character_not_found'])
        assert.match(String(responses['422']?.description), new RegExp(code));
    }
  });

  test('every $ref resolves, in both documents', () => {
    for (const doc of [open, operator]) {
      const refs = refsOf(doc);
      assert.ok(refs.length > 50);
      for (const ref of new Set(refs)) assert.ok(resolve(doc, ref) !== undefined, ref);
    }
  });

  test("a list's element tags and voice presets are declared with their fields", () => {
    const itemsOf = (path: string, field: string): Json => {
      const operation = open.paths[path]?.get as unknown as { responses: Record<string, Json> } | undefined;
      const ok = operation?.responses['200'];
      let schema = (ok as { content: Record<string, { schema: Json }> }).content['application/json']?.schema;
      if (typeof schema?.$ref === 'string') schema = resolve(open, schema.$ref) as Json;
      return (
        (schema as { properties: Record<string, { items: Json }> }).properties[field] as { items: Json }
      ).items;
    };
    const tag = itemsOf('/v1/models/video-elements/elements', 'tags') as { properties: Record<string, Json> };
    assert.deepEqual(Object.keys(tag.properties).sort(), ['key', 'name', 'views']);
    assert.equal((tag.properties.views as { type: string }).type, 'array');
    const preset = itemsOf('/v1/models/video-omni/voices', 'presets') as { properties: Record<string, Json> };
    assert.deepEqual(Object.keys(preset.properties).sort(), ['id', 'language', 'name', 'status']);
  });

  test('a result download declares the Range, If-Range, If-None-Match and If-Match headers it reads', () => {
    const download = open.paths['/v1/tasks/{id}/artifacts/{index}']?.get as unknown as { parameters: Json[] };
    const headers = download.parameters
      .filter((p) => p.in === 'header')
      .map((p) => String(p.name).toLowerCase());
    for (const name of ['range', 'if-range', 'if-none-match', 'if-match']) {
      assert.ok(headers.includes(name), name);
    }
  });

  test('every Idempotency-Key parameter declares the form the service takes: 1–255 printable', () => {
    const declared = Object.entries(open.paths).flatMap(([path, operations]) =>
      Object.entries(operations as Record<string, { parameters?: Json[] }>).flatMap(([method, operation]) =>
        (operation.parameters ?? [])
          .filter((p) => String(p.name).toLowerCase() === 'idempotency-key')
          .map((p) => ({ where: `${method.toUpperCase()} ${path}`, schema: p.schema as Json })),
      ),
    );
    assert.ok(declared.length >= 4, 'tasks, webhooks, top-ups and library creations take one');
    for (const { where, schema } of declared) {
      const pattern = new RegExp(String(schema.pattern), 'u');
      const taken = (value: string) =>
        value.length >= Number(schema.minLength) &&
        value.length <= Number(schema.maxLength) &&
        pattern.test(value);
      assert.ok(taken('order 42') && taken('x'.repeat(255)), `${where} takes a printable key`);
      for (const refused of ['', 'x'.repeat(256), 'tab\there', 'ключ']) {
        assert.ok(!taken(refused), `${where} declares ${JSON.stringify(refused.slice(0, 20))} refused`);
      }
    }
  });

  test('the waiting parameter and the webhook event types are declared as the service reads them', () => {
    const getTask = open.paths['/v1/tasks/{id}']?.get as unknown as { parameters: Json[] };
    const wait = getTask.parameters.find((p) => p.name === 'wait') as { schema: Json };
    assert.deepEqual(
      { type: wait.schema.type, minimum: wait.schema.minimum, maximum: wait.schema.maximum },
      { type: 'integer', minimum: 0, maximum: 60 },
    );
    const create = open.paths['/v1/webhooks']?.post as unknown as {
      requestBody: { content: Record<string, { schema: { properties: Record<string, { items: Json }> } }> };
    };
    const events = create.requestBody.content['application/json']?.schema.properties.events;
    assert.deepEqual(events?.items.enum, [
      'task.started',
      'task.progress',
      'task.succeeded',
      'task.failed',
      'task.canceled',
      'library.ready',
      'library.failed',
    ]);
  });

  test('webhook addresses are declared as URIs, as every other link field is', () => {
    const create = open.paths['/v1/webhooks']?.post as unknown as {
      requestBody: { content: Record<string, { schema: { properties: Record<string, Json> } }> };
    };
    const url = create.requestBody.content['application/json']?.schema.properties.url;
    assert.equal(url?.format, 'uri');
    const schemas = open.components.schemas ?? {};
    const taskWebhooks = Object.entries(schemas).flatMap(([name, schema]) => {
      const webhookUrl = (schema as { properties?: Record<string, Json> }).properties?.webhook_url;
      return webhookUrl === undefined ? [] : [[name, webhookUrl.format] as const];
    });
    assert.ok(taskWebhooks.length > 0, 'the task requests declare webhook_url');
    for (const [name, format] of taskWebhooks) assert.equal(format, 'uri', name);
  });

  test('settings are discriminated by model, then by the model mode selector', async () => {
    const body = open.paths['/v1/tasks']?.post?.requestBody?.content['application/json']?.schema;
    assert.deepEqual(body, { $ref: '#/components/schemas/TaskRequest' });
    const price = open.paths['/v1/price']?.post?.requestBody?.content['application/json']?.schema;
    assert.deepEqual(price, body);
    const schemas = open.components.schemas ?? {};
    const request = schemas.TaskRequest as { discriminator: { propertyName: string; mapping: Json } };
    assert.equal(request.discriminator.propertyName, 'model');
    const models = (await t.call((await t.account()).key, 'GET', '/v1/models')).json().models as {
      key: string;
      mode_field: string | null;
      modes: { name: string }[];
    }[];
    assert.deepEqual(Object.keys(request.discriminator.mapping).sort(), models.map((m) => m.key).sort());
    for (const model of models) {
      const variant = schemas[`TaskRequest.${model.key}`] as { properties: Record<string, Json> };
      assert.deepEqual(variant.properties.settings, {
        $ref: `#/components/schemas/TaskSettings.${model.key}`,
      });
      const settings = schemas[`TaskSettings.${model.key}`] as Json;
      if (model.mode_field !== null && model.modes.length > 1) {
        const discriminator = settings.discriminator as { propertyName: string; mapping: Json };
        assert.equal(discriminator.propertyName, model.mode_field);
        assert.deepEqual(Object.keys(discriminator.mapping).sort(), model.modes.map((m) => m.name).sort());
      }
      for (const mode of model.modes) assert.ok(schemas[`Settings.${model.key}.${mode.name}`], mode.name);
    }
  });

  test('every timestamp field (`…_at`) is declared as a date-time, in both documents', () => {
    const found: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (Array.isArray(node)) {
        for (const [i, item] of node.entries()) walk(item, `${where}/${i}`);
      } else if (typeof node === 'object' && node !== null) {
        const properties = (node as { properties?: Record<string, Json> }).properties ?? {};
        for (const [name, schema] of Object.entries(properties)) {
          if (!name.endsWith('_at')) continue;
          found.push(name);
          const text = JSON.stringify(schema);
          assert.ok(text.includes('"format":"date-time"'), `${where}.${name}: ${text}`);
        }
        for (const [key, value] of Object.entries(node)) walk(value, `${where}/${key}`);
      }
    };
    walk(open, 'public');
    walk(operator, 'operator');
    for (const name of ['created_at', 'started_at', 'finished_at', 'files_expire_at', 'expires_at'])
      assert.ok(found.includes(name), name);
  });

  test('a step of two decimals is published so that standard validators take what the service takes', async () => {
    const key = (await t.account({ balanceMinor: 100_000 })).key;
    const published = JSON.stringify(open) + (await t.call(key, 'GET', '/v1/models')).body;
    // JSON Schema validators check multipleOf by floating-point division: 0.07 / 0.01 is not whole.
    assert.equal(/"multipleOf":\s*[0-9]*\.[0-9]/.test(published), false, 'a fractional multipleOf');
    assert.ok(published.includes('"x-multipleOf":0.01'));
    const ajv = new Ajv2020({ strict: false });
    const settings = ajv.compile(open.components.schemas?.['Settings.music.generate'] as object);
    const body = { mode: 'generate', customMode: true, title: 't', style: 's', prompt: 'p' };
    for (const styleWeight of [0.07, 0.29, 0.57, 0.94]) {
      const sent = { ...body, styleWeight };
      assert.ok(settings(sent), `${styleWeight}: ${JSON.stringify(settings.errors)}`);
      const priced = await t.call(key, 'POST', '/v1/price', { model: 'music', settings: sent });
      assert.equal(priced.statusCode, 200, priced.body);
    }
    // The service still refuses a third decimal.
    const refused = await t.call(key, 'POST', '/v1/price', {
      model: 'music',
      settings: { ...body, styleWeight: 0.075 },
    });
    assert.equal(refused.statusCode, 422, refused.body);
  });

  test('the response validator refuses undeclared statuses, media types and bodies', () => {
    const validator = new ResponseValidator({ public: open });
    const task = '/v1/tasks/00000000-0000-0000-0000-000000000000';
    const json = 'application/json; charset=utf-8';
    const error = JSON.stringify({ error: { code: 'task_not_found', message: 'no' } });
    assert.equal(
      validator.check({ method: 'GET', url: task, status: 404, contentType: json, body: error }),
      null,
    );
    assert.match(
      validator.check({ method: 'GET', url: task, status: 418, contentType: json, body: error }) ?? '',
      /does not declare/,
    );
    assert.match(
      validator.check({ method: 'GET', url: task, status: 404, contentType: 'text/html', body: '<p>' }) ?? '',
      /not declared/,
    );
    assert.match(
      validator.check({ method: 'GET', url: task, status: 200, contentType: json, body: '{"id":"x"}' }) ?? '',
      /schema refuses/,
    );
    assert.equal(
      validator.check({ method: 'GET', url: '/healthz', status: 200, contentType: json, body: '{}' }),
      null,
    );
    const notFound = { method: 'GET', url: task, status: 404, contentType: json, body: error };
    assert.match(
      validator.check({ ...notFound, headers: ['x-request-id', 'retry-after'] }) ?? '',
      /undeclared header\(s\) retry-after/,
    );
  });

  test('refusals that send Retry-After declare it: 409 request_in_progress, 502 of library creations', () => {
    const declared = (path: string, status: string): Json => {
      const answer = open.paths[path]?.post?.responses[status] as Json;
      const resolved = (typeof answer.$ref === 'string' ? resolve(open, answer.$ref) : answer) as Json;
      return resolved.headers as Json;
    };
    for (const path of ['/v1/tasks', '/v1/models/image/styles', '/v1/webhooks', '/v1/topups'])
      assert.ok(declared(path, '409')['Retry-After'], `${path} 409`);
    assert.equal(declared('/v1/tasks/{id}/cancel', '409')['Retry-After'], undefined, 'task_not_cancelable');
    for (const path of ['/v1/models/video-elements/elements', '/v1/models/music/personas'])
      assert.ok(declared(path, '502')['Retry-After'], `${path} 502`);
  });
});

test('a route declaring an event stream is documented as text/event-stream', async () => {
  const app = Fastify();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  await app.register(swagger, swaggerOptions('http://api.test', { schemas: {}, modeField: () => null }));
  app.withTypeProvider<ZodTypeProvider>().get(
    '/v1/tasks/:id/events',
    {
      schema: {
        operationId: 'streamTaskEvents',
        response: { 200: eventStreamResponse('task states as they change', 'data: a Task') },
      },
    },
    async () => '',
  );
  await app.ready();
  const doc = publicDocument(app.swagger() as unknown as OpenApiDocument);
  const answer = doc.paths['/v1/tasks/{id}/events']?.get?.responses['200'] as {
    content: Record<string, { schema: Json }>;
  };
  assert.deepEqual(Object.keys(answer.content), ['text/event-stream']);
  assert.equal(answer.content['text/event-stream']?.schema.type, 'string');
  await app.close();
});
