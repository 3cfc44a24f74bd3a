/**
 * The Kling adapter against the fake Kling API (PROVIDERS.md §5): the JWT of every request (checked by the
 * fake's signature check and read back here), each version's endpoint and body field by field (elements
 * as `<<<element_N>>>` in first-mention order, multi-shot scenes), the run's states, the video downloaded,
 * and the failure classes of "Normalised mapping" (content refusal at creation and by a failed task, a 429
 * storm, 5xx, no credit, an output link that died).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Channel, ChannelOutOfCredit } from '../src/generators/adapters/index.ts';
import {
  createKlingAdapter,
  elementBody,
  KLING_V3_MODEL,
  klingToken,
} from '../src/generators/adapters/kling/index.ts';
import type { Adapter } from '../src/generators/adapters/types.ts';
import { GenerationError, GeneratorTransientError } from '../src/generators/generator.ts';
import { createTestDeps, type TestDeps, testChannel } from './fakes/adapter-deps.ts';
import { type KlingFake, startKlingFake } from './fakes/kling.ts';
import { checkToken } from './fakes/kling-auth.ts';
import { pollToEnd, RUN, videoRequest } from './fakes/video-kit.ts';

const AK = 'kling-ak';
const SK = 'kling-sk';
let fake: KlingFake;
let deps: TestDeps;
let adapter: Adapter;
let dir: string;
/** Kling's id of an element made in `before`, and the record naming it. */
let elementA: string;
let elementB: string;
/** Deps of other channels made by the tests, closed at the end. */
const others: TestDeps[] = [];

async function otherAdapter(channel: Channel): Promise<Adapter> {
  const made = await createTestDeps(channel);
  others.push(made);
  return createKlingAdapter(made.deps);
}

function klingChannel(overrides: Partial<Channel> = {}): Channel {
  return {
    ...testChannel('kling', fake.url, '', ['video-elements']),
    secrets: { access_key: AK, secret_key: SK },
    ...overrides,
  };
}

const signal = (): AbortSignal => AbortSignal.timeout(20_000);
const records = (): Record<string, Record<string, unknown>> => ({
  aaa: { id: 'aaa', upstream_id: elementA },
  bbb: { id: 'bbb', upstream_id: elementB },
});

before(async () => {
  fake = await startKlingFake({
    keys: { [AK]: SK },
    stepMs: 100,
    urlTtlMs: 2_000,
    extraModels: ['kling-v4', 'kling-v4-omni'],
  });
  deps = await createTestDeps(klingChannel());
  adapter = createKlingAdapter(deps.deps);
  dir = await mkdtemp(path.join(tmpdir(), 'kling-adapter-'));
  const make = async (name: string) =>
    (
      await adapter.library!.createRecord(
        {
          model: 'video-elements',
          library: 'elements',
          recordId: name,
          fields: {
            name,
            description: '',
            tag: 'object',
            image_urls: ['https://api.example.test/v1/files/a/e.png'],
          },
        },
        signal(),
      )
    ).upstreamId as string;
  elementA = await make('a');
  elementB = await make('b');
});
after(async () => {
  await fake.close();
  await deps.close();
  await Promise.all(others.map((o) => o.close()));
  await rm(dir, { recursive: true, force: true });
});

async function created(settings: Record<string, unknown>, channelAdapter = adapter) {
  const request = videoRequest('video-elements', settings, records());
  const handle = await channelAdapter.create(request, RUN, signal());
  const id = handle.slice(handle.indexOf(':') + 1);
  const task = fake.tasks.get(id);
  assert.ok(task, 'the task exists upstream');
  return { request, handle, task };
}

describe('signing (PROVIDERS.md §5)', () => {
  test('HS256 JWT with iss, exp = now + 1800 and nbf = now − 5, verified by the secret', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const token = klingToken(AK, SK, now);
    const [h, p] = token.split('.') as [string, string];
    assert.deepEqual(JSON.parse(Buffer.from(h, 'base64url').toString()), { alg: 'HS256', typ: 'JWT' });
    const s = now.getTime() / 1000;
    assert.deepEqual(JSON.parse(Buffer.from(p, 'base64url').toString()), {
      iss: AK,
      exp: s + 1800,
      nbf: s - 5,
    });
    assert.equal(checkToken(`Bearer ${token}`, { [AK]: SK }, now.getTime()).ok, true);
    assert.equal(
      checkToken(`Bearer ${token}`, { [AK]: 'other' }, now.getTime()).ok,
      false,
      'another secret fails',
    );
    const late = checkToken(`Bearer ${token}`, { [AK]: SK }, now.getTime() + 1801_000);
    assert.deepEqual(late.ok ? null : late.code, 1004, 'expired after 30 min');
  });

  test('every request carries a token the fake accepted, made at that moment', () => {
    assert.ok(fake.tokens.length >= 4);
    for (const t of fake.tokens) {
      assert.equal(t.iss, AK);
      assert.ok(Math.abs(t.exp - 1800 - t.at / 1000) < 2, 'exp is now + 1800');
      assert.equal(t.exp - t.nbf, 1805);
    }
  });

  test('a wrong secret is refused by Kling: transient (auth codes 1000–1004)', async () => {
    const wrong = await otherAdapter(klingChannel({ secrets: { access_key: AK, secret_key: 'bad' } }));
    await assert.rejects(
      wrong.create(videoRequest('video-elements', { prompt: 'x' }), RUN, signal()),
      (e: unknown) => {
        assert.ok(e instanceof GeneratorTransientError);
        assert.match(e.message, /code 1000/);
        return true;
      },
    );
  });
});

describe('request bodies (PROVIDERS.md §5 "Our mapping")', () => {
  test('v3.0: omni-video kling-v3-omni, labels as <<<element_N>>> in first-mention order, the constants', async () => {
    const { handle, task } = await created({
      prompt: 'Element_bbb chases Element_aaa, then Element_bbb rests',
      length: 7,
    });
    assert.match(handle, /^omni-video:/);
    const { callback_url, ...body } = task.body;
    assert.deepEqual(body, {
      model_name: KLING_V3_MODEL,
      mode: 'std',
      sound: 'off',
      aspect_ratio: '16:9',
      duration: '7',
      external_task_id: RUN.key,
      prompt: '<<<element_1>>> chases <<<element_2>>>, then <<<element_1>>> rests',
      element_list: [{ element_id: elementB }, { element_id: elementA }],
    });
    assert.match(String(callback_url), /\/v1\/callbacks\/kling-test\/[A-Za-z0-9]+$/);
  });

  test('v3.0 multi-shot: multi_shot, shot_type customize, multi_prompt with string durations, no prompt', async () => {
    const { task } = await created({
      multi_shot: true,
      length: 5,
      shots: [
        { prompt: 'Element_aaa enters', duration: 3 },
        { prompt: 'close-up of Element_aaa', duration: 2 },
      ],
    });
    assert.equal(task.body['prompt'], undefined);
    assert.equal(task.body['multi_shot'], true);
    assert.equal(task.body['shot_type'], 'customize');
    assert.deepEqual(task.body['multi_prompt'], [
      { index: 1, prompt: '<<<element_1>>> enters', duration: '3' },
      { index: 2, prompt: 'close-up of <<<element_1>>>', duration: '2' },
    ]);
    assert.deepEqual(task.body['element_list'], [{ element_id: elementA }]);
    assert.equal(task.body['duration'], '5');
  });

  test('a prompt without elements sends no element_list', async () => {
    const { task } = await created({ prompt: 'a red kite' });
    assert.equal('element_list' in task.body, false);
  });

  test('v4.0-omni: omni-video with the model upstream_models names; missing → final generation_failed', async () => {
    const request = videoRequest(
      'video-elements',
      { model_version: 'v4.0-omni', prompt: 'Element_aaa waves' },
      records(),
    );
    await assert.rejects(adapter.create(request, RUN, signal()), (e: unknown) => {
      assert.ok(e instanceof GenerationError);
      assert.equal(e.code, 'generation_failed');
      assert.match(e.message, /upstream_models/);
      return true;
    });
    const mapped = await otherAdapter(
      klingChannel({ upstreamModels: { 'v4.0-omni': 'kling-v4-omni', 'v4.0': 'kling-v4' } }),
    );
    const { handle, task } = await created(
      { model_version: 'v4.0-omni', prompt: 'Element_aaa waves' },
      mapped,
    );
    assert.match(handle, /^omni-video:/);
    assert.equal(task.body['model_name'], 'kling-v4-omni');
    assert.equal(task.body['prompt'], '<<<element_1>>> waves');
    const v4 = await created({ model_version: 'v4.0', prompt: 'a plain scene', length: 4 }, mapped);
    assert.match(v4.handle, /^text2video:/);
    const { callback_url, ...body } = v4.task.body;
    assert.ok(callback_url);
    assert.deepEqual(body, {
      model_name: 'kling-v4',
      mode: 'std',
      sound: 'off',
      aspect_ratio: '16:9',
      duration: '4',
      external_task_id: RUN.key,
      prompt: 'a plain scene',
    });
  });

  test('an element with no Kling id (made elsewhere) is final generation_failed before any call', async () => {
    const request = videoRequest('video-elements', { prompt: 'Element_ccc' }, { ccc: { id: 'ccc' } });
    await assert.rejects(adapter.create(request, RUN, signal()), GenerationError);
  });
});

describe('a run', () => {
  test('submitted → processing → succeed, with callbacks at each change; the video named after the plan', async () => {
    const { request, handle } = await created({ prompt: 'Element_aaa flies' });
    const seen = await pollToEnd(adapter, handle, request);
    assert.equal(seen[0]?.state, 'running');
    assert.deepEqual(seen.at(-1), { state: 'succeeded', cost: { amount: 10, currency: 'units' } });
    const out = await adapter.outputs(handle, request, dir, signal());
    assert.equal(out.files[0]?.kind, 'video');
    assert.equal(out.files[0]?.contentType, 'video/mp4');
    const posted = (deps.received.get(RUN.key) ?? []) as { task_status: string }[];
    assert.ok(
      posted.some((b) => b.task_status === 'succeed'),
      'the final callback arrived',
    );
  });

  test('a dead output link: one re-read for a fresh link; two dead links are transient', async () => {
    const { request, handle, task } = await created({ prompt: 'late' });
    await pollToEnd(adapter, handle, request);
    fake.staleLinks = 1;
    task.videoUntil = 0;
    assert.equal((await adapter.outputs(handle, request, dir, signal())).files.length, 1);
    fake.staleLinks = 2;
    task.videoUntil = 0;
    await assert.rejects(adapter.outputs(handle, request, dir, signal()), GeneratorTransientError);
  });

  test('a video larger than the output cap fails the run at once: no re-read, no second download', async () => {
    const small = await createTestDeps(klingChannel(), { maxDownloadBytes: 100 });
    others.push(small);
    const capped = createKlingAdapter(small.deps);
    const { request, handle } = await created({ prompt: 'huge' }, capped);
    await pollToEnd(capped, handle, request);
    const reads = fake.calls.filter((c) => c.method === 'GET').length;
    await assert.rejects(capped.outputs(handle, request, dir, signal()), (error: unknown) => {
      assert.ok(error instanceof GenerationError, String(error));
      assert.equal(error.code, 'generation_failed');
      assert.match(error.message, /larger than the service stores \(100 bytes\)/);
      return true;
    });
    assert.equal(fake.calls.filter((c) => c.method === 'GET').length - reads, 1, 'one read of the task');
    assert.equal(small.downloads.length, 1, 'one download');
  });

  test('a resumed run whose handle was never saved finds its task from its callbacks, not a second one', async () => {
    const run = { key: 'task-resumed/1', startedAt: new Date() };
    const request = videoRequest('video-elements', { prompt: 'Element_aaa lands' }, records());
    assert.equal(await adapter.find(request, run, signal()), null, 'nothing upstream yet');
    // Kling took the create, then the worker died before it saved the handle.
    const handle = await adapter.create(request, run, signal());
    const tasks = fake.tasks.size;
    const posted = async (): Promise<void> => {
      for (let i = 0; i < 100 && (deps.received.get(run.key) ?? []).length === 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 20));
    };
    await posted();
    assert.equal(await adapter.find(request, run, signal()), handle);
    assert.equal(fake.tasks.size, tasks, 'no second task');
    // Another run's callbacks never name this run's task.
    assert.equal(await adapter.find(request, { ...run, key: 'task-resumed/2' }, signal()), null);
  });

  test('cancel makes no call (Kling has none)', async () => {
    const calls = fake.calls.length;
    await adapter.cancel('omni-video:x', signal());
    assert.equal(fake.calls.length, calls);
  });
});

describe('failures (PROVIDERS.md "Normalised mapping")', () => {
  const request = (prompt: string) => videoRequest('video-elements', { prompt });

  test('a content refusal at creation (1301) is content_refused', async () => {
    await assert.rejects(adapter.create(request('[kling:refuse]'), RUN, signal()), (e: unknown) => {
      assert.ok(e instanceof GenerationError);
      assert.equal(e.code, 'content_refused');
      return true;
    });
  });

  test('a task failed by the risk control is content_refused; another failure generation_failed', async () => {
    const policy = request('[kling:policy]');
    const end = (await pollToEnd(adapter, await adapter.create(policy, RUN, signal()), policy)).at(-1);
    assert.equal((end as { code: string }).code, 'content_refused');
    const failed = request('[kling:failed]');
    const other = (await pollToEnd(adapter, await adapter.create(failed, RUN, signal()), failed)).at(-1);
    assert.equal((other as { code: string }).code, 'generation_failed');
    assert.match((other as { reason: string }).reason, /Internal rendering error/);
  });

  test('a 429 storm (1302): each answer transient with Retry-After; 5xx transient; 1102 out of credit', async () => {
    fake.fail('429', '429', '429');
    for (let i = 0; i < 3; i++) {
      await assert.rejects(adapter.create(request('busy'), RUN, signal()), (e: unknown) => {
        assert.ok(e instanceof GeneratorTransientError);
        assert.equal(e.retryAfterMs, 1_000);
        return true;
      });
    }
    fake.fail('5xx');
    await assert.rejects(adapter.create(request('x'), RUN, signal()), GeneratorTransientError);
    fake.fail('no-credit');
    await assert.rejects(adapter.create(request('x'), RUN, signal()), ChannelOutOfCredit);
    assert.ok(await adapter.create(request('calm'), RUN, signal()));
  });

  test("the account's concurrency limit (1303) is transient with Retry-After", async () => {
    const before = fake.options.maxConcurrentTasks;
    const running = [...fake.tasks.values()].filter(
      (t) => t.status === 'submitted' || t.status === 'processing',
    );
    fake.options.maxConcurrentTasks = running.length;
    try {
      await assert.rejects(adapter.create(request('one too many'), RUN, signal()), (e: unknown) => {
        assert.ok(e instanceof GeneratorTransientError);
        assert.equal(e.retryAfterMs, 1_000);
        assert.match(e.message, /1303/);
        return true;
      });
    } finally {
      if (before === undefined) delete fake.options.maxConcurrentTasks;
      else fake.options.maxConcurrentTasks = before;
    }
  });

  test("a gateway's HTML page with 429 or 503 is transient and keeps its Retry-After", async () => {
    fake.fail('gateway-429', 'gateway-503');
    for (const waitMs of [7_000, 3_000]) {
      await assert.rejects(adapter.create(request('x'), RUN, signal()), (e: unknown) => {
        assert.ok(e instanceof GeneratorTransientError);
        assert.equal(e.retryAfterMs, waitMs);
        return true;
      });
    }
  });

  test('a bad parameter Kling refuses (1201) is final generation_failed', async () => {
    const r = videoRequest('video-elements', { prompt: 'x'.repeat(2500) });
    const long = { ...r, settings: { ...r.settings, prompt: 'x'.repeat(2501) } };
    await assert.rejects(adapter.create(long, RUN, signal()), (e: unknown) => {
      assert.ok(e instanceof GenerationError);
      assert.equal(e.code, 'generation_failed');
      assert.match(e.message, /code 1201/);
      return true;
    });
  });
});

test('a read of an element creation that fails transiently is read again; the element is not left at Kling', async () => {
  const made = await createTestDeps(klingChannel());
  others.push(made);
  const http = made.deps.http;
  let failed = 0;
  made.deps.http = {
    request: (request) =>
      request.method === 'GET' &&
      request.path.startsWith('/v1/general/advanced-custom-elements/') &&
      failed++ === 0
        ? Promise.resolve({
            status: 500,
            headers: new Headers(),
            body: { code: 5000, message: 'server internal error' },
          })
        : http.request(request),
  };
  const created = await createKlingAdapter(made.deps).library!.createRecord(
    {
      model: 'video-elements',
      library: 'elements',
      recordId: 'blip',
      fields: {
        name: 'blip',
        description: '',
        tag: 'object',
        image_urls: ['https://api.example.test/v1/files/a/e.png'],
      },
    },
    signal(),
  );
  assert.equal(failed > 1, true, 'the creation was read again after the 500');
  const owned = [...fake.elements.values()].some((set) => set.has(String(created.upstreamId)));
  assert.ok(owned, 'the record keeps the element Kling made');
});

test('an element name and description are cut to 20 and 100 without splitting a character', () => {
  const body = elementBody(
    { name: `${'n'.repeat(19)}🦊`, description: `${'d'.repeat(99)}🦊`, image_urls: ['/a.png'] },
    (url) => `https://api.example.test${url}`,
    { external_task_id: 'element-x' },
  );
  assert.equal(body['element_name'], 'n'.repeat(19));
  assert.equal(body['element_description'], 'd'.repeat(99));
});
