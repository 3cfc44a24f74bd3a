/**
 * Fuzzing of the personal libraries and the free helpers with random bodies and ids: never a 5xx, always
 * the error shape (reference "Errors", CONTRACT §7). Valid creation bodies with about one field changed
 * reach the generator and the lookups; random ones test the shape checks.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { PNG } from 'pngjs';
import { z } from 'zod';
import { LIBRARIES, libraryPath } from '../src/libraries/index.ts';
import { makeWav } from '../src/media/fixtures.ts';
import {
  anyJson,
  anyLanguage,
  anyText,
  assertWellFormed,
  fuzzParameters,
  objectOf,
  segmentOf,
  valueFor,
} from './fuzz-shape.ts';
import { startTestApp, type TestAccount, type TestApp } from './helpers.ts';

/** Valid creation bodies by library path; personas need a finished song and start from random bodies. */
function baseBodies(png: string, wav: string): Record<string, Record<string, unknown>> {
  return {
    '/v1/models/video-elements/elements': {
      name: 'Chair',
      description: 'a wooden chair',
      tag: 'object',
      image_urls: [png],
    },
    '/v1/models/music/voices': { source_url: wav, start_seconds: 0, end_seconds: 11 },
    '/v1/models/voice/voices': { name: 'Anna', sample_urls: [wav] },
    '/v1/models/image/styles': { name: 'Ink', image_urls: [png] },
    '/v1/models/music-styles/styles': { name: 'Lo-fi', track_urls: [wav] },
    '/v1/models/video-omni/characters': { name: 'Bob', portrait_url: png, full_body_url: png },
    '/v1/models/video-omni/voices': {
      name: 'Mine',
      base_voice_id: 'preset-warm-narrator',
      sample_urls: [wav],
    },
  };
}

const HELPERS = ['/v1/models/music/lyrics', '/v1/models/music/style-boost', '/v1/models/image/enhance'];

describe('fuzzing the libraries and the helpers', () => {
  let t: TestApp;
  let acct: TestAccount;
  const likely: unknown[] = [
    'preset-warm-narrator',
    'character',
    'object',
    'raster',
    'vector',
    'en',
    0,
    10,
    241,
  ];
  let bases: Record<string, Record<string, unknown>> = {};
  /** Ids of records made before the fuzzing, so reads and deletes also meet real ones. */
  const realIds: string[] = [];
  before(async () => {
    t = await startTestApp();
    acct = await t.account({ balanceMinor: 100_000 });
    const picture = new PNG({ width: 64, height: 64 });
    picture.data.fill(120);
    const upload = async (name: string, type: string, bytes: Buffer): Promise<string> => {
      const res = await t.call(acct.key, 'POST', `/v1/files?filename=${name}`, bytes, {
        'content-type': type,
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().url;
    };
    const png = await upload('p.png', 'image/png', PNG.sync.write(picture));
    const wav = await upload('s.wav', 'audio/wav', fs.readFileSync(await makeWav(t.dir, 12)));
    likely.push(
      png,
      wav,
      'http://10.0.0.1/x.png',
      'http://api.test/files/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/x',
    );
    bases = baseBodies(png, wav);
    for (const [path, body] of Object.entries(bases)) {
      const res = await t.call(acct.key, 'POST', path, body);
      assert.equal(res.statusCode, 201, `${path}: ${res.body}`);
      realIds.push(res.json().id);
    }
  });
  after(() => t.close());

  const creations = LIBRARIES.map((decl) => {
    const path = libraryPath(decl);
    const schema = z.toJSONSchema(decl.body, { io: 'input' }) as { properties?: Record<string, unknown> };
    const keys = Object.keys(schema.properties ?? {});
    const field = (): fc.Arbitrary<unknown> => valueFor(likely);
    const mutated = fc
      .constant(null)
      .chain(() => objectOf(keys, field, { fixed: bases[path] ?? {}, absentWeight: 4 * keys.length }));
    const random = objectOf(keys, field);
    return fc
      .oneof(
        { weight: 3, arbitrary: mutated },
        { weight: 2, arbitrary: random },
        { weight: 1, arbitrary: anyJson },
      )
      .map((body) => ({ path, body }));
  });

  test('random creation bodies: 201 or a refusal from the table', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(...creations),
        fc.option(fc.uuid(), { nil: undefined }),
        anyLanguage,
        async ({ path, body }, idempotencyKey, lang) => {
          const headers = {
            ...lang.headers,
            ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
          };
          const res = await t.call(acct.key, 'POST', `${path}${lang.query}`, JSON.stringify(body), {
            ...headers,
            'content-type': 'application/json',
          });
          assertWellFormed(res, `POST ${path} ${JSON.stringify(body).slice(0, 400)}`);
        },
      ),
      fuzzParameters(150),
    );
  });

  test('random ids on reads, deletes, verify and retry; random helper bodies', async () => {
    const paths = LIBRARIES.map(libraryPath);
    const id = fc.oneof(anyText, fc.uuid(), fc.constantFrom(...realIds)).map(segmentOf);
    const request = fc.oneof(
      fc.constantFrom(...paths).map((path) => ({ method: 'GET' as const, url: path, body: undefined })),
      fc
        .tuple(fc.constantFrom(...paths), id, fc.constantFrom('GET' as const, 'DELETE' as const))
        .map(([path, s, method]) => ({ method, url: `${path}/${s}`, body: undefined })),
      fc
        .tuple(
          id,
          fc.constantFrom('verify', 'retry'),
          objectOf(['recording_url', 'name'], () => valueFor(likely)),
        )
        .map(([s, action, body]) => ({
          method: 'POST' as const,
          url: `/v1/models/music/voices/${s}/${action}`,
          body,
        })),
      fc
        .tuple(
          fc.constantFrom(...HELPERS),
          objectOf(['prompt', 'style'], () => valueFor(likely)),
        )
        .map(([url, body]) => ({ method: 'POST' as const, url, body })),
    );
    await fc.assert(
      fc.asyncProperty(request, async (req) => {
        const res = await t.call(acct.key, req.method, req.url, req.body);
        assertWellFormed(res, `${req.method} ${req.url} ${JSON.stringify(req.body ?? null).slice(0, 300)}`);
      }),
      fuzzParameters(200),
    );
  });

  test('random raw bodies and content types on creations', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...LIBRARIES.map(libraryPath), ...HELPERS),
        fc.oneof(
          anyText,
          fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
        ),
        fc.constantFrom('application/json', 'text/plain', 'multipart/form-data; boundary=x', ''),
        async (path, payload, type) => {
          const res = await t.call(acct.key, 'POST', path, payload, type ? { 'content-type': type } : {});
          assertWellFormed(res, `POST ${path} (${type}) ${String(payload).slice(0, 200)}`);
        },
      ),
      fuzzParameters(100),
    );
  });
});
