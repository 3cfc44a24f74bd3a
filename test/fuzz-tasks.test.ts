/**
 * Fuzzing of task creation, prices and task reads with random bodies, headers and ids: never a 5xx,
 * always the error shape (reference "Errors"). The worker is off, so accepted tasks stay queued and the
 * run stays short; the ledger check of `close()` still runs at the end.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { PNG } from 'pngjs';
import { z } from 'zod';
import { MODELS } from '../src/catalog/index.ts';
import { makeWav } from '../src/media/fixtures.ts';
import {
  anyJson,
  anyLanguage,
  anyNumber,
  anyText,
  assertWellFormed,
  fuzzParameters,
  objectOf,
  segmentOf,
  valueFor,
} from './fuzz-shape.ts';
import { expectError, startTestApp, type TestAccount, type TestApp } from './helpers.ts';

/** Every setting name of every mode, with the values its JSON Schema lists (enums, constants). */
function settingsKeys(): Map<string, Map<string, unknown[]>> {
  const byModel = new Map<string, Map<string, unknown[]>>();
  for (const model of MODELS) {
    const keys = new Map<string, unknown[]>();
    for (const mode of model.modes) {
      const schema = z.toJSONSchema(mode.schema, { io: 'input' }) as {
        properties?: Record<string, { enum?: unknown[]; const?: unknown; items?: { enum?: unknown[] } }>;
      };
      for (const [key, property] of Object.entries(schema.properties ?? {})) {
        const values = keys.get(key) ?? [];
        values.push(...(property.enum ?? []), ...(property.items?.enum ?? []));
        if (property.const !== undefined) values.push(property.const);
        keys.set(key, values);
      }
    }
    byModel.set(model.key, keys);
  }
  return byModel;
}

/** Valid settings of every model and mode that needs no outside download, the start of most bodies. */
function baseSettings(png: string, wav: string, voice: string): Array<[string, Record<string, unknown>]> {
  return [
    ['model-3d', { task_type: 'text_to_model', prompt: 'a chair', face_limit: 500 }],
    ['model-3d', { task_type: 'image_to_model', image_url: [png] }],
    ['model-3d', { task_type: 'multiview_to_model', front_url: [png], left_url: [png] }],
    ['video', { mode: 'frames', prompt: 'a boat', image_urls: [png, png] }],
    ['video', { mode: 'reference', prompt: 'the cat of @Image1 jumps', ref_image_urls: [png] }],
    ['video', { mode: 'omni', prompt: 'sing along @Audio1', ref_audio_urls: [wav] }],
    ['music', { mode: 'generate', songDescription: 'a song' }],
    ['music', { mode: 'generate', customMode: true, title: 'T', style: 'pop', prompt: 'la la' }],
    ['music', { mode: 'sounds', soundDescription: 'rain', soundLoop: true }],
    ['music', { mode: 'cover_upload', audio: [wav], songDescription: 'a jazz cover' }],
    ['music', { mode: 'mashup', audio: [wav], audio2: [wav], songDescription: 'both' }],
    ['video-elements', { prompt: 'a kite', length: 3 }],
    ['voice', { mode: 'text_to_dialogue', text: 'Hello there', voice }],
    ['voice', { mode: 'voice_change', audio: [wav], voice }],
    ['image', { prompt: 'a fox', n: 2 }],
    ['music-styles', { prompt: 'lofi beat' }],
    ['video-omni', { prompt: 'a dancer', duration: 3 }],
  ];
}

describe('fuzzing POST /v1/tasks, POST /v1/price and task reads', () => {
  let t: TestApp;
  let acct: TestAccount;
  /** Links and ids a field might plausibly hold: real uploads, a forged link, blocked addresses. */
  const likely: unknown[] = [
    'http://api.test/files/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/x.png',
    'http://127.0.0.1:1/a.png',
    'http://10.0.0.1/a.mp3',
    'http://[::1]/v.mp4',
    'ftp://x/a.png',
    'Element_00000000-0000-0000-0000-000000000000',
    '00000000-0000-0000-0000-000000000000',
    0,
    1,
    10,
    '2s',
  ];
  const bases: Array<[string, Record<string, unknown>]> = [];
  let realId = '';
  let wavUrl = '';
  before(async () => {
    t = await startTestApp({ worker: false });
    acct = await t.account({ balanceMinor: 500_000 });
    const picture = new PNG({ width: 32, height: 32 });
    picture.data.fill(90);
    const upload = async (name: string, type: string, bytes: Buffer): Promise<string> => {
      const res = await t.call(acct.key, 'POST', `/v1/files?filename=${name}`, bytes, {
        'content-type': type,
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().url;
    };
    const png = await upload('p.png', 'image/png', PNG.sync.write(picture));
    const wav = await upload('s.wav', 'audio/wav', fs.readFileSync(await makeWav(t.dir, 12)));
    const voice = await t.call(acct.key, 'POST', '/v1/models/voice/voices', {
      name: 'V',
      sample_urls: [wav],
    });
    assert.equal(voice.statusCode, 201, voice.body);
    // A real task, made before the fuzzing fills the model's active-task limit.
    const created = await t.call(acct.key, 'POST', '/v1/tasks', {
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt: 'a chair' },
    });
    assert.equal(created.statusCode, 202, created.body);
    realId = created.json().id;
    wavUrl = wav;
    likely.push(png, wav, voice.json().id, realId);
    bases.push(...baseSettings(png, wav, voice.json().id));
  });
  after(() => t.close());

  const keys = settingsKeys();
  const valueOfSetting = (model: string, key: string): fc.Arbitrary<unknown> =>
    valueFor([...(keys.get(model)?.get(key) ?? []), ...likely]);
  const settingsOf = (model: string): fc.Arbitrary<Record<string, unknown>> =>
    objectOf([...(keys.get(model)?.keys() ?? [])], (key) => valueOfSetting(model, key));
  /** A valid base with about one setting changed, added or dropped. */
  const mutated: fc.Arbitrary<unknown> = fc.nat().chain((n) => {
    const [model, base] = bases[n % bases.length]!;
    const known = [...(keys.get(model)?.keys() ?? [])];
    const changed = objectOf(known, (key) => valueOfSetting(model, key), {
      fixed: base,
      absentWeight: 4 * known.length,
    });
    return fc.tuple(changed, fc.subarray(Object.keys(base), { maxLength: 1 })).map(([settings, dropped]) => {
      for (const key of dropped) delete settings[key];
      return { model, settings };
    });
  });
  const body: fc.Arbitrary<unknown> = fc.oneof(
    { weight: 6, arbitrary: mutated },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(...MODELS.map((m) => m.key))
        .chain((model) => settingsOf(model).map((settings) => ({ model, settings }))),
    },
    { weight: 1, arbitrary: fc.record({ model: anyText, settings: anyJson }) },
    { weight: 1, arbitrary: anyJson },
  );

  test('random task bodies: 202, 200 or a refusal from the table', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/v1/tasks', '/v1/price'),
        body,
        fc.option(anyText, { nil: undefined }),
        anyLanguage,
        async (path, payload, idempotencyKey, lang) => {
          const headers: Record<string, string> = { ...lang.headers, 'content-type': 'application/json' };
          // A header value must be a legal header string; fuzz its printable range only.
          if (idempotencyKey !== undefined && /^[\t\x20-\x7e]*$/.test(idempotencyKey))
            headers['idempotency-key'] = idempotencyKey;
          const res = await t.call(
            acct.key,
            'POST',
            `${path}${lang.query}`,
            JSON.stringify(payload),
            headers,
          );
          assertWellFormed(res, `POST ${path} ${JSON.stringify(payload).slice(0, 500)}`);
        },
      ),
      fuzzParameters(200),
    );
  });

  test('random raw bodies and content types on the JSON routes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/v1/tasks', '/v1/price'),
        fc.oneof(
          anyText,
          fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
        ),
        fc.constantFrom(
          'application/json',
          'text/plain',
          'application/x-www-form-urlencoded',
          'application/json; charset=latin1',
          'application/octet-stream',
          '',
        ),
        async (path, payload, type) => {
          const res = await t.call(acct.key, 'POST', path, payload, type ? { 'content-type': type } : {});
          assertWellFormed(res, `POST ${path} (${type}) ${String(payload).slice(0, 200)}`);
        },
      ),
      fuzzParameters(150),
    );
  });

  test('random ids, indexes, ranges and list queries of tasks', async () => {
    const id = fc.oneof(anyText, fc.uuid(), fc.constant(realId));
    const segment = id.map(segmentOf);
    const request = fc.oneof(
      segment.map((s) => ({ method: 'GET' as const, url: `/v1/tasks/${s}` })),
      segment.map((s) => ({ method: 'POST' as const, url: `/v1/tasks/${s}/cancel` })),
      fc.tuple(segment, fc.oneof(anyText, anyNumber.map(String))).map(([s, i]) => ({
        method: 'GET' as const,
        url: `/v1/tasks/${s}/artifacts/${segmentOf(i)}`,
      })),
      fc
        .record({
          limit: fc.oneof(anyText, anyNumber.map(String)),
          status: anyText,
          model: anyText,
          cursor: anyText,
        })
        .map((q) => ({ method: 'GET' as const, url: `/v1/tasks?${new URLSearchParams(q)}` })),
    );
    const range = fc.option(
      fc.oneof(
        anyText.map((s) => `bytes=${s}`),
        fc.constantFrom('bytes=0-0', 'bytes=-0', 'bytes=5-1', 'bytes=0-1,2-3'),
      ),
      {
        nil: undefined,
      },
    );
    await fc.assert(
      fc.asyncProperty(request, range, async (req, rangeHeader) => {
        const headers: Record<string, string> = {};
        if (rangeHeader !== undefined && /^[\t\x20-\x7e]*$/.test(rangeHeader)) headers.range = rangeHeader;
        const res = await t.call(acct.key, req.method, req.url, undefined, headers);
        assertWellFormed(res, `${req.method} ${req.url}`);
      }),
      fuzzParameters(200),
    );
  });

  test('a NUL character in ids, queries and names is refused, never a 500', async () => {
    // Found by the fuzzing on PostgreSQL, whose text cannot hold U+0000: every lookup by such an id was 500.
    const requests: Array<['GET' | 'POST' | 'DELETE', string, unknown]> = [
      ['GET', '/v1/tasks/%00', undefined],
      ['POST', '/v1/tasks/a%00b/cancel', undefined],
      ['GET', '/v1/tasks/%00/artifacts/0', undefined],
      ['GET', '/v1/tasks?model=%00', undefined],
      ['GET', '/v1/files/%00', undefined],
      ['DELETE', '/v1/models/image/styles/%00', undefined],
      ['POST', '/v1/models/voice/voices', { name: 'a\u0000b', sample_urls: [wavUrl] }],
      ['POST', '/v1/tasks', { model: 'image', settings: { prompt: 'a\u0000b' } }],
    ];
    for (const [method, url, payload] of requests) {
      const res = await t.call(acct.key, method, url, payload);
      assertWellFormed(res, `${method} ${url}`);
      // 422 on both engines, before any lookup or write: SQLite answered 404, 200 or 201 here.
      expectError(res, 422, 'invalid_request');
      assert.match(res.json().error.message, /NUL/);
    }
    // Authentication still comes first.
    expectError(await t.call('gta_wrong', 'GET', '/v1/tasks/%00'), 401, 'invalid_api_key');
    // The operator's addresses and the direct links alike.
    expectError(await t.admin('GET', '/admin/v1/accounts/%00'), 422, 'invalid_request');
    expectError(await t.app.inject({ method: 'GET', url: '/files/a%00b' }), 422, 'invalid_request');
  });

  test('deeply nested JSON in a task body is refused, not a 500', async () => {
    // Nesting passes JSON.parse; the canonical form of an Idempotency-Key's request then recursed past
    // the stack (found by this test: 500 from a few thousand levels).
    const shape = fc.record({
      depth: fc.integer({ min: 1_000, max: 30_000 }),
      open: fc.constantFrom('[', '{"a":'),
      path: fc.constantFrom('/v1/tasks', '/v1/price'),
      key: fc.uuid(),
    });
    await fc.assert(
      fc.asyncProperty(shape, async ({ depth, open, path, key }) => {
        const close = open === '[' ? ']' : '}';
        const nested = open.repeat(depth) + '1' + close.repeat(depth);
        const payload = `{"model":"model-3d","settings":{"task_type":"text_to_model","prompt":"x","extra":${nested}}}`;
        const headers = { 'content-type': 'application/json', 'idempotency-key': key };
        const res = await t.call(acct.key, 'POST', path, payload, headers);
        assertWellFormed(res, `POST ${path} nested ${depth} deep`);
      }),
      fuzzParameters(10),
    );
  });

  test('an over-long task id answers the error shape with X-Request-Id', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 101, max: 8_000 }), async (length) => {
        const res = await t.call(acct.key, 'GET', `/v1/tasks/${'a'.repeat(length)}`);
        assertWellFormed(res, `GET /v1/tasks/<${length} characters>`);
      }),
      fuzzParameters(5),
    );
  });
});
