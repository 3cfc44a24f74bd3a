/**
 * The Recraft adapter against its fake (PROVIDERS.md §7): the generation body field by field (aspect from
 * our size, the model from the style's type, `response_format "url"`), SVG files from vector styles, the
 * local task record of the synchronous call, styles made from uploaded pictures, the enhance helper, and
 * the error classes of its answers: moderation, 402/credits, 429 storms, expired output links.
 */
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { RecraftAdapter } from '../src/generators/adapters/recraft/index.ts';
import { ChannelOutOfCredit, UpstreamRunLost } from '../src/generators/adapters/types.ts';
import { GenerationError, GeneratorTransientError } from '../src/generators/generator.ts';
import { GeneratorUnavailable, LibraryRejected } from '../src/generators/index.ts';
import { pollingTestDeps, testChannel } from './fakes/adapter-deps.ts';
import { TINY_PNG } from './fakes/cog.ts';
import { catalogRequest } from './fakes/elevenlabs-kit.ts';
import { RecraftFake, TINY_SVG } from './fakes/recraft.ts';
import { pollToEnd, runStart, runToEnd } from './fakes/suno-kit.ts';

const KEY = 'recraft-test-token';
const PIC = 'http://127.0.0.1:8080/files/AbCdEfGhIjKlMnOpQrStUvWxYz012345/look.png';
const PIC2 = 'http://127.0.0.1:8080/files/ZyXwVuTsRqPoNmLkJiHgFeDcBa543210/look2.png';

let fake: RecraftFake;
let adapter: RecraftAdapter;
const styles: Record<string, Record<string, unknown>> = {};

function build(apiKey = KEY): RecraftAdapter {
  return new RecraftAdapter(
    pollingTestDeps(testChannel('recraft', fake.url, apiKey, ['image']), {
      inputs: new Map([
        [PIC, TINY_PNG],
        [PIC2, TINY_PNG],
      ]),
    }),
  );
}

before(async () => {
  fake = await new RecraftFake({ apiKey: KEY, callMs: 20 }).start();
  adapter = build();
});
after(() => fake.close());

describe('image styles', () => {
  for (const type of ['raster', 'vector'] as const) {
    test(`a ${type} style: POST /styles multipart style, model, file1…fileN; the record keeps the id`, async () => {
      const from = fake.calls.length;
      const created = await adapter.library.createRecord(
        {
          model: 'image',
          library: 'styles',
          recordId: `st-${type}`,
          fields: { name: 'Look', image_urls: [PIC, PIC2], type },
        },
        AbortSignal.timeout(10_000),
      );
      const [call] = fake.calls.slice(from);
      assert.equal(call?.path, '/styles');
      assert.equal(call?.authorization, `Bearer ${KEY}`);
      assert.deepEqual(call?.form?.fields, {
        style: [type === 'vector' ? 'vector_illustration' : 'any'],
        model: [type === 'vector' ? 'recraftv4_styles_vector' : 'recraftv4_styles'],
      });
      assert.deepEqual(
        call?.form?.files.map((f) => [f.field, f.filename, f.type, f.size]),
        [
          ['file1', 'look.png', 'image/png', TINY_PNG.length],
          ['file2', 'look2.png', 'image/png', TINY_PNG.length],
        ],
      );
      assert.ok(created.upstreamId && fake.styles.has(created.upstreamId));
      styles[`st-${type}`] = { id: `st-${type}`, status: 'ready', type, upstream_id: created.upstreamId };
    });
  }

  test('a refused style is the library 502; a 5xx is 503', async () => {
    const request = {
      model: 'image',
      library: 'styles',
      recordId: 'bad',
      fields: { name: 'B', image_urls: [PIC] },
    };
    fake.failures.add({ status: 400, body: { code: 'invalid_files', message: 'unreadable image' } });
    await assert.rejects(adapter.library.createRecord(request, AbortSignal.timeout(10_000)), LibraryRejected);
    fake.failures.add({ status: 502, body: 'bad gateway' });
    await assert.rejects(
      adapter.library.createRecord(request, AbortSignal.timeout(10_000)),
      GeneratorUnavailable,
    );
  });
});

describe('generations', () => {
  test('no style: recraftv4, size as aspect, n, response_format url; each picture one PNG', async () => {
    const from = fake.calls.length;
    const request = catalogRequest('image', { prompt: 'a lighthouse at dawn', size: '1536x1024', n: 2 });
    const { status, outputs } = await runToEnd(adapter, request);
    assert.deepEqual(status, { state: 'succeeded', cost: { amount: 80, currency: 'credits' } });
    const [call] = fake.calls.slice(from);
    assert.equal(call?.path, '/images/generations');
    assert.deepEqual(call?.json, {
      prompt: 'a lighthouse at dawn',
      model: 'recraftv4',
      size: '3:2',
      n: 2,
      response_format: 'url',
    });
    assert.deepEqual(
      outputs?.files.map((f) => [f.kind, f.contentType]),
      [
        ['image', 'image/png'],
        ['image', 'image/png'],
      ],
    );
  });

  const SIZES: Array<[string, string]> = [
    ['1024x1024', '1:1'],
    ['1365x1024', '4:3'],
    ['1024x1365', '3:4'],
    ['1024x1536', '2:3'],
  ];
  for (const [size, aspect] of SIZES) {
    test(`size ${size} is sent as ${aspect}`, async () => {
      const from = fake.calls.length;
      await runToEnd(adapter, catalogRequest('image', { prompt: 'a cat', size }));
      assert.equal((fake.calls[from]?.json as { size?: string } | undefined)?.size, aspect);
    });
  }

  test('a raster style: recraftv4_styles with style_id; PNG', async () => {
    const from = fake.calls.length;
    const request = catalogRequest('image', { prompt: 'a fox', style_id: 'st-raster' }, styles);
    const { outputs } = await runToEnd(adapter, request);
    assert.deepEqual(fake.calls[from]?.json, {
      prompt: 'a fox',
      model: 'recraftv4_styles',
      style_id: styles['st-raster']?.upstream_id,
      size: '1:1',
      n: 1,
      response_format: 'url',
    });
    assert.equal(outputs?.files[0]?.contentType, 'image/png');
  });

  test('a vector style: recraftv4_styles_vector; the pictures are SVG files of kind image', async () => {
    const from = fake.calls.length;
    const request = catalogRequest('image', { prompt: 'a fox icon', style_id: 'st-vector', n: 2 }, styles);
    const { outputs } = await runToEnd(adapter, request);
    const body = fake.calls[from]?.json as Record<string, unknown>;
    assert.equal(body.model, 'recraftv4_styles_vector');
    assert.equal(body.style_id, styles['st-vector']?.upstream_id);
    assert.deepEqual(
      outputs?.files.map((f) => [f.kind, f.contentType, f.filename.endsWith('.svg'), f.sizeBytes]),
      [
        ['image', 'image/svg+xml', true, TINY_SVG.length],
        ['image', 'image/svg+xml', true, TINY_SVG.length],
      ],
    );
  });

  test('a style not saved at Recraft: generation_failed before any call', async () => {
    const from = fake.calls.length;
    const request = catalogRequest(
      'image',
      { prompt: 'x', style_id: 'sim-style' },
      { 'sim-style': { status: 'ready' } },
    );
    await assert.rejects(
      adapter.create(request, runStart(), AbortSignal.timeout(5_000)),
      (e: unknown) => e instanceof GenerationError && e.code === 'generation_failed',
    );
    assert.equal(fake.calls.length, from);
  });
});

test('enhance: POST /prompts/enhance {prompt} → {prompt}', async () => {
  const from = fake.calls.length;
  const answer = await adapter.library.runHelper('enhance', { prompt: 'a cat' }, AbortSignal.timeout(5_000));
  assert.deepEqual(fake.calls[from]?.json, { prompt: 'a cat' });
  assert.equal(fake.calls[from]?.path, '/prompts/enhance');
  assert.match(answer.prompt, /^a cat, /);
  // A long prompt is cut to Recraft's 2,000 (UTF-16 units), never inside an emoji (a lone surrogate is not text).
  const long = `${'a'.repeat(1999)}😀😀`;
  const cut = fake.calls.length;
  await adapter.library.runHelper('enhance', { prompt: long }, AbortSignal.timeout(5_000));
  assert.deepEqual(fake.calls[cut]?.json, { prompt: 'a'.repeat(1999) });
  await assert.rejects(
    adapter.library.runHelper('lyrics', { prompt: 'x' }, AbortSignal.timeout(5_000)),
    GeneratorUnavailable,
  );
});

describe('faults (CONTRACT §11, PROVIDERS.md §7 "Errors")', () => {
  const request = () => catalogRequest('image', { prompt: 'a tree' });

  test('a moderation refusal is content_refused', async () => {
    const { status } = await runToEnd(
      adapter,
      catalogRequest('image', { prompt: 'bad [recraft:moderation]' }),
    );
    assert.equal(status.state, 'failed');
    assert.equal((status as { code: string }).code, 'content_refused');
    // Named by the body's code alone, its message saying nothing of moderation; with or without a type.
    for (const body of [
      { code: 'moderation_blocked', message: 'Your prompt was rejected' },
      JSON.stringify({ code: 'moderation_blocked', message: 'Your prompt was rejected' }),
    ]) {
      fake.failures.add({ status: 400, body });
      const r = request();
      const handle = await adapter.create(r, runStart(), AbortSignal.timeout(5_000));
      const end = await pollToEnd(adapter, handle, r);
      assert.equal((end as { code?: string }).code, 'content_refused', JSON.stringify(end));
    }
  });

  test('429 and 5xx, 401/403: lost runs to retry as new ones (Retry-After kept)', async () => {
    const replies = [
      { status: 429, body: 'Too Many Requests', headers: { 'retry-after': '2' } },
      { status: 500, body: 'internal error' },
      { status: 403, body: 'forbidden' },
    ];
    for (const [index, reply] of replies.entries()) {
      fake.failures.add(reply);
      const r = request();
      const handle = await adapter.create(r, runStart(), AbortSignal.timeout(5_000));
      await assert.rejects(pollToEnd(adapter, handle, r), (e: unknown) => {
        assert.ok(e instanceof UpstreamRunLost && e instanceof GeneratorTransientError);
        if (index === 0) assert.equal(e.retryAfterMs, 2_000);
        return true;
      });
    }
    // A wrong token (401 "request unauthorized", plain text) is the channel's failure too.
    const wrong = build('nope');
    const r = request();
    const handle = await wrong.create(r, runStart(), AbortSignal.timeout(5_000));
    await assert.rejects(pollToEnd(wrong, handle, r), GeneratorTransientError);
  });

  test('a 2xx that is not JSON (a gateway’s page): a lost run to retry, not a failed task', async () => {
    fake.failures.add({
      status: 200,
      body: '<html><body>upstream gateway</body></html>',
      headers: { 'content-type': 'text/html' },
    });
    const r = request();
    const handle = await adapter.create(r, runStart(), AbortSignal.timeout(5_000));
    await assert.rejects(pollToEnd(adapter, handle, r), UpstreamRunLost);
  });

  test('402 or a body naming credits disables the channel; another 4xx is generation_failed with its text', async () => {
    for (const reply of [
      { status: 402, body: 'payment required' },
      { status: 400, body: { code: 'not_enough_credits', message: 'Not enough credits' } },
      // The code alone names it.
      { status: 400, body: { code: 'not_enough_credits', message: 'Insufficient funds on the account' } },
    ]) {
      fake.failures.add(reply);
      const r = request();
      const handle = await adapter.create(r, runStart(), AbortSignal.timeout(5_000));
      await assert.rejects(pollToEnd(adapter, handle, r), ChannelOutOfCredit);
    }
    fake.failures.add({ status: 404, body: '404 page not found' });
    const r = request();
    const handle = await adapter.create(r, runStart(), AbortSignal.timeout(5_000));
    assert.deepEqual(await pollToEnd(adapter, handle, r), {
      state: 'failed',
      code: 'generation_failed',
      reason: 'generate images: 404 page not found',
    });
  });

  test('a picture larger than the output cap fails the run at once: one billed call, not retried', async () => {
    const small = new RecraftAdapter(
      pollingTestDeps(testChannel('recraft', fake.url, KEY, ['image']), {
        maxDownloadBytes: TINY_PNG.length - 1,
      }),
    );
    const calls = fake.callsTo('/images/generations').length;
    const r = request();
    const handle = await small.create(r, runStart(), AbortSignal.timeout(5_000));
    assert.equal((await pollToEnd(small, handle, r)).state, 'succeeded');
    const dir = await mkdtemp(join(tmpdir(), 'recraft-'));
    await assert.rejects(small.outputs(handle, r, dir, AbortSignal.timeout(5_000)), (error: unknown) => {
      assert.ok(error instanceof GenerationError, String(error));
      assert.equal(error.code, 'generation_failed');
      assert.match(error.message, /larger than the service stores/);
      return true;
    });
    assert.equal(fake.callsTo('/images/generations').length - calls, 1);
  });

  test('an expired output link: the run is lost (a new call gives new links), never re-downloaded', async () => {
    fake.options.urlTtlMs = 1;
    try {
      const r = request();
      const handle = await adapter.create(r, runStart(), AbortSignal.timeout(5_000));
      assert.equal((await pollToEnd(adapter, handle, r)).state, 'succeeded');
      await new Promise((resolve) => setTimeout(resolve, 20));
      const dir = await mkdtemp(join(tmpdir(), 'recraft-'));
      await assert.rejects(adapter.outputs(handle, r, dir, AbortSignal.timeout(5_000)), UpstreamRunLost);
      await assert.rejects(adapter.status(handle, r, AbortSignal.timeout(1_000)), UpstreamRunLost);
    } finally {
      fake.options.urlTtlMs = 60_000;
    }
  });
});
