import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import type { GenerationPlan, MeshOutput } from '../src/catalog/index.ts';
import { CogAdapter } from '../src/generators/adapters/cog/index.ts';
import { createAdapterDeps } from '../src/generators/adapters/deps.ts';
import type { Channel } from '../src/generators/adapters/index.ts';
import { UpstreamCallTimeout, UpstreamRunLost } from '../src/generators/adapters/index.ts';
import {
  ChannelBusy,
  GenerationError,
  type GenerationRequest,
  GeneratorTransientError,
} from '../src/generators/index.ts';
import { makeMp3 } from '../src/media/fixtures.ts';
import { type CogFake, type CogFakeOptions, startCogFake, TINY_PNG } from './fakes/cog.ts';
import { startTestApp, type TestApp } from './helpers.ts';

const GLB = Buffer.concat([Buffer.from('glTF'), Buffer.alloc(64, 1)]);
const UPLOAD = `http://10.1.2.3/files/${'b'.repeat(32)}/front.png`;

const meshPlan: GenerationPlan = {
  outputs: [
    {
      kind: 'document',
      format: 'glb',
      filename: 'model.glb',
      caption: 'mesh',
      seed: 's',
      faceLimit: 1000,
      textured: true,
      pbr: false,
      parts: false,
    },
    {
      kind: 'image',
      format: 'png',
      filename: 'preview.png',
      optional: true,
      caption: 'preview',
      seed: 's',
      width: 512,
      height: 512,
    },
  ],
  caption: 'a chair',
  texts: [],
  workSeconds: 10,
};

function request(plan: GenerationPlan = meshPlan): GenerationRequest {
  return {
    taskId: 'task-1',
    model: 'model-3d',
    mode: 'image_to_model',
    settings: {
      task_type: 'image_to_model',
      image_url: [UPLOAD],
      face_limit: 1000,
      texture: true,
      note: 'https://example.org/keep',
    },
    inputs: { files: [], records: {} } as unknown as GenerationRequest['inputs'],
    plan,
  };
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('Cog adapter against the fake Cog server (PROVIDERS.md §3)', () => {
  let t: TestApp;
  let fake: CogFake | null = null;
  let runs = 0;
  const signal = (): AbortSignal => AbortSignal.timeout(30_000);

  before(async () => {
    t = await startTestApp({
      worker: false,
      env: { PUBLIC_BASE_URL: 'https://api.example.com' },
      // Only channels of the file take callbacks; this one's runs are driven by the tests' own adapter.
      channels: [
        {
          name: 'cog-test',
          provider: 'cog',
          models: ['image'],
          baseUrl: 'http://127.0.0.1:9',
          secrets: {},
          priority: 0,
          weight: 1,
          maxConcurrency: 2,
          timeoutMs: 60_000,
          upstreamModels: {},
        },
      ],
    });
  });
  afterEach(async () => {
    await fake?.close();
    fake = null;
  });
  after(() => t.close());

  /** A queued task's run key (callbacks of final or unknown tasks are not taken). */
  async function runKey(): Promise<string> {
    const acct = await t.account({ balanceMinor: 100_000 });
    const created = await t.call(acct.key, 'POST', '/v1/tasks', {
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt: `chair ${++runs}`, texture: false, pbr: false },
    });
    assert.equal(created.statusCode, 202, created.body);
    return `${created.json().id}/1`;
  }

  async function setup(
    options: CogFakeOptions = {},
    extra: { apiKey?: string; callTimeoutMs?: number } = {},
  ): Promise<{ adapter: CogAdapter; fake: CogFake; dir: string }> {
    // Webhooks reach the app in process, as they would over the network.
    fake = await startCogFake({
      deliver: (url, body) =>
        t.app.inject({ method: 'POST', url: new URL(url).pathname, payload: body as object }),
      ...options,
    });
    const channel: Channel = {
      name: 'cog-test',
      provider: 'cog',
      models: ['model-3d'],
      baseUrl: fake.url,
      secrets: extra.apiKey ? { api_key: extra.apiKey } : {},
      priority: 0,
      weight: 1,
      maxConcurrency: 2,
      timeoutMs: 60_000,
      upstreamModels: {},
    };
    const deps = createAdapterDeps(channel, {
      clock: t.clock,
      storage: t.container.storage,
      uploads: t.container.services.uploads,
      callbacks: t.container.services.callbacks,
      publicBaseUrl: t.container.config.publicBaseUrl,
      fetchAllowAddresses: ['127.0.0.1'],
      ...(extra.callTimeoutMs ? { callTimeoutMs: extra.callTimeoutMs } : {}),
    });
    const dir = fs.mkdtempSync(path.join(t.dir, 'cog-'));
    return { adapter: new CogAdapter(deps), fake, dir };
  }

  async function finished(adapter: CogAdapter, handle: string): Promise<void> {
    await until(
      async () => (await adapter.status(handle, request(), signal())).state !== 'running',
      'the run to end',
    );
  }

  test('PUT /predictions/{id} with respond-async: the body field by field', async () => {
    const { adapter, fake } = await setup();
    const key = await runKey();
    const handle = await adapter.create(request(), { key, startedAt: new Date() }, signal());
    assert.equal(handle, key);
    const put = fake.calls.find((call) => call.method === 'PUT');
    assert.ok(put);
    const id = key.replace('/', '_');
    assert.equal(put.path, `/predictions/${id}`);
    assert.equal(put.headers.prefer, 'respond-async');
    assert.equal(put.headers['content-type'], 'application/json');
    const body = put.body as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['id', 'input', 'webhook', 'webhook_events_filter']);
    assert.equal(body.id, id);
    // input = our settings; our own upload as an absolute URL under PUBLIC_BASE_URL, other links unchanged.
    assert.deepEqual(body.input, {
      task_type: 'image_to_model',
      image_url: [`https://api.example.com/files/${'b'.repeat(32)}/front.png`],
      face_limit: 1000,
      texture: true,
      note: 'https://example.org/keep',
    });
    assert.match(
      String(body.webhook),
      /^https:\/\/api\.example\.com\/v1\/callbacks\/cog-test\/[A-Za-z0-9]{32}$/,
    );
    assert.deepEqual(body.webhook_events_filter, ['start', 'completed']);
    const early = await adapter.status(handle, request(), signal());
    assert.equal(early.state, 'running', 'running while the upstream prediction is starting');
    // Progress is a whole percentage (the tasks table keeps an integer).
    assert.ok(early.state === 'running' && Number.isInteger(early.progress) && early.progress < 100);
    await finished(adapter, handle);
    assert.deepEqual(await adapter.status(handle, request(), signal()), { state: 'succeeded' });
    // The start and completed webhooks, in order, and nothing else (the filter).
    const seen = await t.container.services.callbacks.received(key);
    assert.deepEqual(
      seen.map((b) => (b as { status: string }).status),
      ['processing', 'succeeded'],
    );
  });

  test('outputs: data URLs become files named after the plan, kinds from the sniffed bytes', async () => {
    const { adapter, dir } = await setup({
      files: [
        { bytes: GLB, contentType: 'model/gltf-binary' },
        { bytes: TINY_PNG, contentType: 'image/png' },
      ],
    });
    const key = await runKey();
    const handle = await adapter.create(request(), { key, startedAt: new Date() }, signal());
    await finished(adapter, handle);
    const out = await adapter.outputs(handle, request(), dir, signal());
    assert.deepEqual(
      out.files.map((f) => [f.kind, f.filename, f.contentType, f.sizeBytes, f.caption]),
      [
        ['document', 'model.glb', 'model/gltf-binary', GLB.length, 'mesh'],
        ['image', 'preview.png', 'image/png', TINY_PNG.length, 'preview'],
      ],
    );
    assert.ok(fs.readFileSync(out.files[0]?.path as string).equals(GLB));
    assert.equal(out.caption, 'a chair');
  });

  test('outputs: short-lived links are fetched, in order, whatever the shape of output', async () => {
    for (const outputShape of ['object', 'string'] as const) {
      const { adapter, dir } = await setup({
        outputAs: 'url',
        outputShape,
        // A single string holds one link: the mesh, which a 3D run cannot end without.
        files: [
          { bytes: TINY_PNG, contentType: 'image/png' },
          { bytes: GLB, contentType: 'application/octet-stream' },
        ].slice(outputShape === 'string' ? 1 : 0),
      });
      const key = await runKey();
      const handle = await adapter.create(request(), { key, startedAt: new Date() }, signal());
      await finished(adapter, handle);
      const out = await adapter.outputs(handle, request(), dir, signal());
      const expected =
        outputShape === 'string'
          ? [['document', 'model.glb']]
          : [
              ['image', 'preview.png'],
              ['document', 'model.glb'],
            ];
      assert.deepEqual(
        out.files.map((f) => [f.kind, f.filename]),
        expected,
        outputShape,
      );
      await fake?.close();
      fake = null;
    }
  });

  test('an expired output link is transient', async () => {
    const { adapter, dir } = await setup({ outputAs: 'url', urlTtlMs: 1 });
    const key = await runKey();
    const handle = await adapter.create(request(), { key, startedAt: new Date() }, signal());
    await finished(adapter, handle);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await assert.rejects(adapter.outputs(handle, request(), dir, signal()), GeneratorTransientError);
  });

  /** A finished prediction returning `files` for `plan` fails its outputs with generation_failed: `reason`. */
  async function outputsFail(files: CogFakeOptions['files'], plan: GenerationPlan, reason: RegExp) {
    const { adapter, dir } = await setup({ files });
    const key = await runKey();
    const handle = await adapter.create(request(plan), { key, startedAt: new Date() }, signal());
    await finished(adapter, handle);
    await assert.rejects(
      adapter.outputs(handle, request(plan), dir, signal()),
      (error) =>
        error instanceof GenerationError && error.code === 'generation_failed' && reason.test(error.message),
    );
    await fake?.close();
    fake = null;
  }

  test('no files, a file of no known type, or no mesh (the preview alone): generation_failed', async () => {
    const mp3 = fs.readFileSync(await makeMp3(t.dir, 1));
    const cases: Array<[CogFakeOptions['files'], RegExp]> = [
      [[], /no files/],
      [[{ bytes: Buffer.from('just some text'), contentType: 'text/plain' }], /not a file type/],
      [[{ bytes: mp3, contentType: 'audio/mpeg' }], /lack the promised kind \(document glb\)/],
      // The reference's 3D output: a preview 0 or 1 times, the mesh exactly once.
      [[{ bytes: TINY_PNG, contentType: 'image/png' }], /lack the promised kind \(document glb\)/],
    ];
    for (const [files, reason] of cases) await outputsFail(files, meshPlan, reason);
  });

  test('a mesh of another format than planned (glb where quad asks for fbx, fbx for glb): generation_failed', async () => {
    const [mesh, preview] = meshPlan.outputs as [MeshOutput, GenerationPlan['outputs'][number]];
    const quadPlan: GenerationPlan = {
      ...meshPlan,
      outputs: [{ ...mesh, format: 'fbx', filename: 'model.fbx' }, preview],
    };
    const fbx = {
      bytes: Buffer.from('Kaydara FBX Binary  \0\x1a\0'),
      contentType: 'application/octet-stream',
    };
    const glb = { bytes: GLB, contentType: 'application/octet-stream' };
    const cases: Array<[CogFakeOptions['files'], GenerationPlan, RegExp]> = [
      [[glb], quadPlan, /lack the promised kind \(document fbx\)/],
      [[fbx], meshPlan, /lack the promised kind \(document glb\)/],
    ];
    for (const [files, plan, reason] of cases) await outputsFail(files, plan, reason);
    // The planned format is taken: an fbx for quad is the run's model.fbx.
    const { adapter, dir } = await setup({ files: [fbx] });
    const key = await runKey();
    const handle = await adapter.create(request(quadPlan), { key, startedAt: new Date() }, signal());
    await finished(adapter, handle);
    const out = await adapter.outputs(handle, request(quadPlan), dir, signal());
    assert.deepEqual(
      out.files.map((file) => [file.kind, file.filename]),
      [['document', 'model.fbx']],
    );
  });

  test('a failed prediction fails the run with its error text, a safety refusal too (PROVIDERS.md)', async () => {
    const cases = [
      ['failed', 'CUDA out of memory'],
      ['nsfw', 'NSFW content detected. Try running it again, or try a different prompt.'],
    ] as const;
    for (const [fault, reason] of cases) {
      const { adapter, fake } = await setup();
      fake.fail(fault);
      const key = await runKey();
      const handle = await adapter.create(request(), { key, startedAt: new Date() }, signal());
      await finished(adapter, handle);
      // Cog's failed prediction is generation_failed whatever its text: the page maps no Cog content signal.
      assert.deepEqual(await adapter.status(handle, request(), signal()), {
        state: 'failed',
        code: 'generation_failed',
        reason,
      });
      await fake.close();
    }
  });

  test('refusals: 409 is no free slot (ChannelBusy), 5xx and non-JSON are transient; 422 is generation_failed with the detail', async () => {
    const { adapter, fake } = await setup({ runMs: 5_000 });
    const busy = await adapter.create(request(), { key: await runKey(), startedAt: new Date() }, signal());
    assert.ok(busy);
    await assert.rejects(
      adapter.create(request(), { key: await runKey(), startedAt: new Date() }, signal()),
      (error) => error instanceof ChannelBusy && /409/.test(error.message),
    );
    await adapter.cancel(busy, signal());
    fake.fail('429', '5xx', 'garbage', '422');
    await assert.rejects(
      adapter.create(request(), { key: await runKey(), startedAt: new Date() }, signal()),
      (error) => error instanceof GeneratorTransientError && error.retryAfterMs === 7_000,
    );
    await assert.rejects(
      adapter.create(request(), { key: await runKey(), startedAt: new Date() }, signal()),
      (error) => error instanceof GeneratorTransientError && /HTTP 500/.test(error.message),
    );
    await assert.rejects(
      adapter.create(request(), { key: await runKey(), startedAt: new Date() }, signal()),
      (error) => error instanceof GeneratorTransientError && /not JSON/.test(error.message),
    );
    await assert.rejects(
      adapter.create(request(), { key: await runKey(), startedAt: new Date() }, signal()),
      (error) =>
        error instanceof GenerationError &&
        error.code === 'generation_failed' &&
        /input\.prompt: field required/.test(error.message),
    );
    // A gateway's HTML page in front of the server: its status and Retry-After decide, not the body.
    fake.fail('gateway-429', 'gateway-503');
    for (const [status, waitMs] of [
      [429, 7_000],
      [503, 3_000],
    ] as const) {
      await assert.rejects(
        adapter.create(request(), { key: await runKey(), startedAt: new Date() }, signal()),
        (error) =>
          error instanceof GeneratorTransientError &&
          error.retryAfterMs === waitMs &&
          new RegExp(`HTTP ${status}`).test(error.message),
      );
    }
  });

  test('a resumed run: find sees it once a webhook came, a repeated PUT returns the same prediction', async () => {
    const { adapter, fake } = await setup({ runMs: 1_000 });
    const key = await runKey();
    assert.equal(await adapter.find(request(), { key, startedAt: new Date() }, signal()), null);
    await adapter.create(request(), { key, startedAt: new Date() }, signal());
    await adapter.create(request(), { key, startedAt: new Date() }, signal());
    assert.equal(fake.predictions.size, 1, 'one prediction upstream');
    await until(
      async () => (await t.container.services.callbacks.received(key)).length > 0,
      'the start webhook',
    );
    assert.equal(await adapter.find(request(), { key, startedAt: new Date() }, signal()), key);
  });

  test('a prediction canceled by someone else is a lost run: a new run takes its place', async () => {
    const { adapter, fake } = await setup({ runMs: 10_000 });
    const key = await runKey();
    const handle = await adapter.create(request(), { key, startedAt: new Date() }, signal());
    // Not our cancel: someone else's at the server, told by its completed webhook.
    await fetch(`${fake.url}/predictions/${key.replace('/', '_')}/cancel`, { method: 'POST' });
    await until(
      async () =>
        (await t.container.services.callbacks.received(key)).some(
          (body) => (body as { status?: string }).status === 'canceled',
        ),
      'the canceled webhook',
    );
    await assert.rejects(adapter.status(handle, request(), signal()), UpstreamRunLost);
  });

  test('cancel reaches POST /predictions/{id}/cancel', async () => {
    const { adapter, fake } = await setup({ runMs: 10_000 });
    const key = await runKey();
    const handle = await adapter.create(request(), { key, startedAt: new Date() }, signal());
    await adapter.cancel(handle, signal());
    const id = key.replace('/', '_');
    assert.deepEqual(fake.cancels, [id]);
    assert.equal(fake.predictions.get(id)?.status, 'canceled');
    assert.ok(fake.calls.some((call) => call.method === 'POST' && call.path === `/predictions/${id}/cancel`));
  });

  test('a cancel the server cannot take now (429, 5xx) is transient; 404 means nothing runs', async () => {
    const { adapter, fake } = await setup({ runMs: 10_000 });
    const key = await runKey();
    const handle = await adapter.create(request(), { key, startedAt: new Date() }, signal());
    const id = key.replace('/', '_');
    fake.failCancels(503, 429);
    // Not made: the sweeper must ask again (docs/providers.md, "A cancel reaches the provider").
    await assert.rejects(adapter.cancel(handle, signal()), GeneratorTransientError);
    await assert.rejects(adapter.cancel(handle, signal()), GeneratorTransientError);
    assert.notEqual(fake.predictions.get(id)?.status, 'canceled');
    await adapter.cancel(handle, signal());
    assert.equal(fake.predictions.get(id)?.status, 'canceled');
    // A prediction the server does not know (finished, or never started) needs no cancel.
    await adapter.cancel(`${key}-unknown`, signal());
  });

  test('ensureAvailable consults no health check: a server that says SETUP_FAILED still takes tasks', async () => {
    const broken = await setup({ health: 'SETUP_FAILED' });
    await broken.adapter.ensureAvailable({ model: 'model-3d', settings: {} });
    assert.ok(!broken.fake.calls.some((call) => call.path === '/health-check'));
  });

  test('a PUT that is never answered is transient after the call limit', async () => {
    const { adapter, fake } = await setup({}, { callTimeoutMs: 300 });
    fake.fail('hang-http');
    await assert.rejects(
      adapter.create(request(), { key: await runKey(), startedAt: new Date() }, signal()),
      (error) => error instanceof GeneratorTransientError && /no answer within 300 ms/.test(error.message),
    );
  });

  test('a PUT whose answer was lost: the create is idempotent, and repeating it joins the prediction', async () => {
    const { adapter, fake } = await setup({ runMs: 5_000 }, { callTimeoutMs: 300 });
    assert.equal(adapter.isCreateIdempotent(), true);
    fake.fail('accept-hang');
    const run = { key: await runKey(), startedAt: new Date() };
    await assert.rejects(adapter.create(request(), run, signal()), UpstreamCallTimeout);
    const id = run.key.replace('/', '_');
    assert.equal(fake.predictions.get(id)?.status, 'processing', 'Cog took the first PUT');
    // The same id while the prediction runs: Cog answers it (202), no second prediction, no 409.
    assert.equal(await adapter.create(request(), run, signal()), run.key);
    assert.deepEqual([...fake.predictions.keys()], [id]);
    await adapter.cancel(run.key, signal());
  });

  test("a proxy's key: sent as a bearer token; a wrong one is the channel's problem (transient)", async () => {
    const good = await setup({ apiKey: 'sesame' }, { apiKey: 'sesame' });
    const key = await runKey();
    await good.adapter.create(request(), { key, startedAt: new Date() }, signal());
    assert.equal(
      good.fake.calls.find((call) => call.method === 'PUT')?.headers.authorization,
      'Bearer sesame',
    );
    await good.fake.close();
    fake = null;
    const wrong = await setup({ apiKey: 'sesame' }, { apiKey: 'wrong' });
    await assert.rejects(
      wrong.adapter.create(request(), { key: await runKey(), startedAt: new Date() }, signal()),
      (error) =>
        error instanceof GeneratorTransientError && /refused the channel's key \(401\)/.test(error.message),
    );
  });
});
