/**
 * The Seedance adapter against the fake ModelArk (PROVIDERS.md §4): each mode's request body field by
 * field, the run's states, the video downloaded and named after the plan, cancel while queued, and every
 * failure class of "Normalised mapping" (content refusal, 429 storm, 5xx, no credit, failed and expired
 * tasks, an output link that died before we fetched it).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ChannelOutOfCredit, UpstreamRunLost } from '../src/generators/adapters/index.ts';
import { createSeedanceAdapter, SEEDANCE_MODEL } from '../src/generators/adapters/seedance/index.ts';
import type { Adapter } from '../src/generators/adapters/types.ts';
import { GenerationError, GeneratorTransientError } from '../src/generators/generator.ts';
import { LibraryRejected } from '../src/generators/library.ts';
import { pollingTestDeps, testChannel } from './fakes/adapter-deps.ts';
import { type SeedanceFake, startSeedanceFake } from './fakes/seedance.ts';
import { pollToEnd, RUN, videoRequest } from './fakes/video-kit.ts';

const KEY = 'ark-test-key';
const PUB = 'https://api.example.test';
let fake: SeedanceFake;
let adapter: Adapter;
let dir: string;

before(async () => {
  fake = await startSeedanceFake({ apiKeys: [KEY], queuedMs: 100, runningMs: 150, urlTtlMs: 2_000 });
  adapter = createSeedanceAdapter(
    pollingTestDeps(testChannel('seedance', fake.url, KEY, ['video', 'video-omni'])),
  );
  dir = await mkdtemp(path.join(tmpdir(), 'seedance-adapter-'));
});
after(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

const signal = (): AbortSignal => AbortSignal.timeout(10_000);

/** Creates a run and answers the body the fake received for it. */
async function bodyOf(
  model: string,
  settings: Record<string, unknown>,
  records?: Record<string, Record<string, unknown>>,
) {
  const request = videoRequest(model, settings, records);
  const handle = await adapter.create(request, RUN, signal());
  const task = fake.tasks.get(handle);
  assert.ok(task, 'the task exists upstream');
  return { request, handle, body: task.body };
}

describe('request bodies (PROVIDERS.md §4 "Our mapping")', () => {
  test('frames, one picture: first_frame, ratio adaptive, the constants', async () => {
    const { body } = await bodyOf('video', {
      mode: 'frames',
      prompt: 'a paper boat',
      image_urls: ['https://api.example.test/v1/files/a/first.png'],
      quality: '1080p',
      duration: '7s',
    });
    assert.deepEqual(body, {
      model: SEEDANCE_MODEL,
      content: [
        { type: 'text', text: 'a paper boat' },
        { type: 'image_url', image_url: { url: `${PUB}/v1/files/a/first.png` }, role: 'first_frame' },
      ],
      resolution: '1080p',
      ratio: 'adaptive',
      duration: 7,
      generate_audio: true,
      watermark: false,
    });
  });

  test('frames, two pictures: first_frame then last_frame', async () => {
    const { body } = await bodyOf('video', {
      mode: 'frames',
      prompt: 'dawn to dusk',
      image_urls: ['https://api.example.test/v1/files/a/1.png', 'https://api.example.test/v1/files/a/2.png'],
    });
    assert.deepEqual(body['content'], [
      { type: 'text', text: 'dawn to dusk' },
      { type: 'image_url', image_url: { url: `${PUB}/v1/files/a/1.png` }, role: 'first_frame' },
      { type: 'image_url', image_url: { url: `${PUB}/v1/files/a/2.png` }, role: 'last_frame' },
    ]);
    assert.equal(body['resolution'], '720p');
    assert.equal(body['duration'], 5);
  });

  test('reference: pictures, videos in label order, then the first frame as one more reference image', async () => {
    const { body } = await bodyOf('video', {
      mode: 'reference',
      prompt: '@Image1 and @Image2 walk into @Video1',
      ref_image_urls: [
        'https://api.example.test/v1/files/a/i1.png',
        'https://api.example.test/v1/files/a/i2.png',
      ],
      ref_video_urls: ['https://api.example.test/v1/files/a/v1.mp4'],
      first_frame_url: ['https://api.example.test/v1/files/a/ff.png'],
      aspect_ratio: '9:16',
    });
    assert.deepEqual(body['content'], [
      { type: 'text', text: '@Image1 and @Image2 walk into @Video1' },
      { type: 'image_url', image_url: { url: `${PUB}/v1/files/a/i1.png` }, role: 'reference_image' },
      { type: 'image_url', image_url: { url: `${PUB}/v1/files/a/i2.png` }, role: 'reference_image' },
      { type: 'video_url', video_url: { url: `${PUB}/v1/files/a/v1.mp4` }, role: 'reference_video' },
      { type: 'image_url', image_url: { url: `${PUB}/v1/files/a/ff.png` }, role: 'reference_image' },
    ]);
    assert.equal(body['ratio'], 'adaptive', 'a first frame gives the shape');
  });

  test('reference without a first frame keeps aspect_ratio', async () => {
    const { body } = await bodyOf('video', {
      mode: 'reference',
      prompt: 'the cat of @Image1',
      ref_image_urls: ['https://api.example.test/v1/files/a/cat.png'],
      aspect_ratio: '4:3',
    });
    assert.equal(body['ratio'], '4:3');
  });

  test('omni: images, videos and audio as reference items, the prompt verbatim', async () => {
    const { body } = await bodyOf('video', {
      mode: 'omni',
      prompt: '@Image1 sings @Audio1 over @Video1',
      ref_image_urls: ['https://api.example.test/v1/files/a/face.png'],
      ref_video_urls: ['https://api.example.test/v1/files/a/stage.mp4'],
      ref_audio_urls: ['https://api.example.test/v1/files/a/song.mp3'],
      quality: '480p',
      aspect_ratio: '3:4',
    });
    assert.deepEqual(body['content'], [
      { type: 'text', text: '@Image1 sings @Audio1 over @Video1' },
      { type: 'image_url', image_url: { url: `${PUB}/v1/files/a/face.png` }, role: 'reference_image' },
      { type: 'video_url', video_url: { url: `${PUB}/v1/files/a/stage.mp4` }, role: 'reference_video' },
      { type: 'audio_url', audio_url: { url: `${PUB}/v1/files/a/song.mp3` }, role: 'reference_audio' },
    ]);
    assert.equal(body['resolution'], '480p');
    assert.equal(body['ratio'], '3:4');
  });

  test('video-omni: each character as two reference images, each voice as its first sample', async () => {
    const records = {
      c1: {
        id: 'c1',
        upstream_id: JSON.stringify({
          images: ['https://api.example.test/v1/files/a/p.png', 'https://api.example.test/v1/files/a/b.png'],
          audio: [],
        }),
      },
      v1: {
        id: 'v1',
        upstream_id: JSON.stringify({
          images: [],
          audio: ['https://api.example.test/v1/files/a/s1.mp3', 'https://api.example.test/v1/files/a/s2.mp3'],
        }),
      },
      'preset-warm-narrator': {
        id: 'preset-warm-narrator',
        preset: true,
        sample_url: '/samples/preset-warm-narrator.mp3',
      },
    };
    const { body } = await bodyOf(
      'video-omni',
      {
        prompt: 'a dancer on a rooftop',
        character_ids: ['c1'],
        audio_ids: ['v1', 'preset-warm-narrator'],
        duration: 6,
        aspect_ratio: '9:16',
      },
      records,
    );
    assert.deepEqual(body, {
      model: SEEDANCE_MODEL,
      content: [
        { type: 'text', text: 'a dancer on a rooftop' },
        { type: 'image_url', image_url: { url: `${PUB}/v1/files/a/p.png` }, role: 'reference_image' },
        { type: 'image_url', image_url: { url: `${PUB}/v1/files/a/b.png` }, role: 'reference_image' },
        { type: 'audio_url', audio_url: { url: `${PUB}/v1/files/a/s1.mp3` }, role: 'reference_audio' },
        // A preset voice: its stored sample (PROVIDERS.md §4).
        {
          type: 'audio_url',
          audio_url: { url: `${PUB}/samples/preset-warm-narrator.mp3` },
          role: 'reference_audio',
        },
      ],
      resolution: '720p',
      ratio: '9:16',
      duration: 6,
      generate_audio: true,
      watermark: false,
    });
  });

  test("video-omni: a record's link shaped like ours but naming no upload stays at its own host", async () => {
    // A CDN's /files/<md5>/… looks like one of our direct links; it names no upload of ours, so moving it
    // under PUBLIC_BASE_URL would hand Seedance a 404. Our own upload in the same record still moves.
    const cdn = `https://cdn.example.com/files/${'0123456789abcdef'.repeat(2)}/portrait.png`;
    const ours = 'https://api.example.test/v1/files/a/body.png';
    const lookalike = createSeedanceAdapter(
      pollingTestDeps(testChannel('seedance', fake.url, KEY, ['video', 'video-omni']), { foreign: [cdn] }),
    );
    const records = { c1: { id: 'c1', upstream_id: JSON.stringify({ images: [cdn, ours], audio: [] }) } };
    const request = videoRequest('video-omni', { prompt: 'a dancer', character_ids: ['c1'] }, records);
    const task = fake.tasks.get(await lookalike.create(request, RUN, signal()));
    assert.ok(task, 'the task exists upstream');
    const urls = (task.body['content'] as Array<{ image_url?: { url: string } }>).flatMap((item) =>
      item.image_url === undefined ? [] : [item.image_url.url],
    );
    assert.deepEqual(urls, [cdn, `${PUB}/v1/files/a/body.png`]);
  });

  test('video-omni: a voice with no sample kept fails before any call (PROVIDERS.md §4)', async () => {
    const request = videoRequest(
      'video-omni',
      { prompt: 'a dancer', character_ids: ['c1'], audio_ids: ['v1'] },
      {
        c1: { id: 'c1', upstream_id: JSON.stringify({ images: ['/p.png', '/b.png'], audio: [] }) },
        v1: { id: 'v1', upstream_id: JSON.stringify({ images: [], audio: [] }) },
      },
    );
    const calls = fake.calls.length;
    await assert.rejects(
      adapter.create(request, RUN, signal()),
      (error) => error instanceof GenerationError && error.code === 'generation_failed',
    );
    assert.equal(fake.calls.length, calls, 'nothing reached Seedance');
  });

  test('upstream_models overrides the built-in model id', async () => {
    const channel = {
      ...testChannel('seedance', fake.url, KEY, ['video']),
      upstreamModels: { '3_0': 'seedance-next' },
    };
    const other = createSeedanceAdapter(pollingTestDeps(channel));
    const handle = await other.create(
      videoRequest('video', {
        mode: 'frames',
        prompt: 'x',
        image_urls: ['https://api.example.test/v1/files/a/x.png'],
      }),
      RUN,
      signal(),
    );
    assert.equal(fake.tasks.get(handle)?.body['model'], 'seedance-next');
  });
});

describe('a run', () => {
  test('queued → running → succeeded with its token usage as cost; the video named after the plan', async () => {
    const { request, handle } = await bodyOf('video', {
      mode: 'frames',
      prompt: 'a boat',
      image_urls: ['https://api.example.test/v1/files/a/x.png'],
    });
    const seen = await pollToEnd(adapter, handle, request);
    assert.equal(seen[0]?.state, 'running');
    assert.deepEqual(seen.at(-1), { state: 'succeeded', cost: { amount: 108900, currency: 'tokens' } });
    const out = await adapter.outputs(handle, request, dir, signal());
    assert.equal(out.files.length, 1);
    assert.equal(out.files[0]?.kind, 'video');
    assert.equal(out.files[0]?.contentType, 'video/mp4');
    assert.match(out.files[0]?.filename ?? '', /\.mp4$/);
  });

  test('an output link that died before we fetched it: the task is read again for a fresh one', async () => {
    const { request, handle } = await bodyOf('video', {
      mode: 'frames',
      prompt: 'late',
      image_urls: ['https://api.example.test/v1/files/a/x.png'],
    });
    await pollToEnd(adapter, handle, request);
    fake.staleLinks = 1;
    // The last read handed out a live link; let it expire so the next read issues the stale one.
    fake.tasks.get(handle)!.videoUntil = 0;
    const out = await adapter.outputs(handle, request, dir, signal());
    assert.equal(out.files[0]?.contentType, 'video/mp4');
  });

  test('two dead links in a row: transient, so the worker tries again later', async () => {
    const { request, handle } = await bodyOf('video', {
      mode: 'frames',
      prompt: 'later',
      image_urls: ['https://api.example.test/v1/files/a/x.png'],
    });
    await pollToEnd(adapter, handle, request);
    fake.staleLinks = 2;
    fake.tasks.get(handle)!.videoUntil = 0;
    await assert.rejects(adapter.outputs(handle, request, dir, signal()), GeneratorTransientError);
  });

  test('cancel while queued deletes the task upstream; a running task is left alone', async () => {
    const { handle } = await bodyOf('video', {
      mode: 'frames',
      prompt: 'stop',
      image_urls: ['https://api.example.test/v1/files/a/x.png'],
    });
    await adapter.cancel(handle, signal());
    assert.deepEqual(fake.deletes.at(-1), handle);
    const request = videoRequest('video', {
      mode: 'frames',
      prompt: 'x',
      image_urls: ['https://api.example.test/v1/files/a/x.png'],
    });
    await assert.rejects(
      adapter.status(handle, request, signal()),
      UpstreamRunLost,
      'a cancelled task is lost',
    );
    fake.options.queuedMs = 0;
    const running = await adapter.create(request, RUN, signal());
    const deletes = fake.deletes.length;
    await adapter.cancel(running, signal());
    assert.equal(fake.deletes.length, deletes, 'no DELETE for a running task');
    fake.options.queuedMs = 100;
  });

  test('a DELETE Seedance answers 5xx or 429 is transient, so the owed cancel is asked again', async () => {
    const deps = pollingTestDeps(testChannel('seedance', fake.url, KEY, ['video']));
    const busy = { status: 503, code: 'ServerOverloaded' };
    const http = deps.http;
    deps.http = {
      request: (request) =>
        request.method === 'DELETE'
          ? Promise.resolve({
              status: busy.status,
              headers: new Headers({ 'retry-after': '2' }),
              body: { error: { code: busy.code, message: 'try later' } },
            })
          : http.request(request),
    };
    const flaky = createSeedanceAdapter(deps);
    const request = videoRequest('video', {
      mode: 'frames',
      prompt: 'stop',
      image_urls: ['https://api.example.test/v1/files/a/x.png'],
    });
    for (const answer of [
      { status: 503, code: 'ServerOverloaded' },
      { status: 429, code: 'RateLimitExceeded.EndpointRPM' },
    ]) {
      Object.assign(busy, answer);
      const handle = await flaky.create(request, RUN, signal());
      await assert.rejects(flaky.cancel(handle, signal()), GeneratorTransientError, answer.code);
    }
  });
});

describe('failures (PROVIDERS.md "Normalised mapping")', () => {
  const request = (prompt: string) =>
    videoRequest('video', {
      mode: 'frames',
      prompt,
      image_urls: ['https://api.example.test/v1/files/a/x.png'],
    });

  test('a content refusal at creation is content_refused', async () => {
    await assert.rejects(adapter.create(request('[seedance:refuse] nope'), RUN, signal()), (e: unknown) => {
      assert.ok(e instanceof GenerationError);
      assert.equal(e.code, 'content_refused');
      assert.match(e.message, /InputTextSensitiveContentDetected/);
      return true;
    });
  });

  test('a 429 storm: each answer is transient with the Retry-After asked for', async () => {
    fake.fail('429', '429', '429');
    for (let i = 0; i < 3; i++) {
      await assert.rejects(adapter.create(request('busy'), RUN, signal()), (e: unknown) => {
        assert.ok(e instanceof GeneratorTransientError);
        assert.equal(e.retryAfterMs, 1_000);
        assert.match(e.message, /RateLimitExceeded/);
        return true;
      });
    }
    assert.ok(await adapter.create(request('calm again'), RUN, signal()));
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

  test('5xx is transient; an overdue account is out of credit; a bad key is transient', async () => {
    fake.fail('5xx');
    await assert.rejects(adapter.create(request('x'), RUN, signal()), GeneratorTransientError);
    fake.fail('overdue');
    await assert.rejects(adapter.create(request('x'), RUN, signal()), ChannelOutOfCredit);
    const wrong = createSeedanceAdapter(
      pollingTestDeps(testChannel('seedance', fake.url, 'wrong', ['video'])),
    );
    await assert.rejects(wrong.create(request('x'), RUN, signal()), GeneratorTransientError);
  });

  test('a parameter the provider refuses is final generation_failed with its reason', async () => {
    const r = videoRequest('video', {
      mode: 'frames',
      prompt: 'long',
      image_urls: ['https://api.example.test/v1/files/a/x.png'],
      duration: '30s',
    });
    await assert.rejects(adapter.create(r, RUN, signal()), (e: unknown) => {
      assert.ok(e instanceof GenerationError);
      assert.equal(e.code, 'generation_failed');
      assert.match(e.message, /InvalidParameter.*duration/);
      return true;
    });
  });

  test('failed tasks: a sensitive output is content_refused, another code generation_failed', async () => {
    const sensitive = request('[seedance:output-sensitive]');
    const seen = await pollToEnd(adapter, await adapter.create(sensitive, RUN, signal()), sensitive);
    assert.equal(seen.at(-1)?.state, 'failed');
    assert.equal((seen.at(-1) as { code: string }).code, 'content_refused');
    const failed = request('[seedance:failed]');
    const end = (await pollToEnd(adapter, await adapter.create(failed, RUN, signal()), failed)).at(-1);
    assert.equal((end as { code: string }).code, 'generation_failed');
    assert.match((end as { reason: string }).reason, /InvalidParameter/);
  });

  test('an expired task is lost: run again as a new run', async () => {
    const r = request('[seedance:expired]');
    await assert.rejects(pollToEnd(adapter, await adapter.create(r, RUN, signal()), r), UpstreamRunLost);
  });
});

describe('the library side keeps video-omni records here', () => {
  test('a character keeps its two pictures, a voice its samples; other libraries are refused', async () => {
    const library = adapter.library;
    assert.ok(library);
    const character = await library.createRecord(
      {
        model: 'video-omni',
        library: 'characters',
        recordId: 'r1',
        fields: { name: 'A', portrait_url: '/p.png', full_body_url: '/b.png' },
      },
      signal(),
    );
    assert.deepEqual(JSON.parse(character.upstreamId ?? ''), { images: ['/p.png', '/b.png'], audio: [] });
    const voice = await library.createRecord(
      {
        model: 'video-omni',
        library: 'voices',
        recordId: 'r2',
        fields: { name: 'V', base_voice_id: 'preset-warm-narrator', sample_urls: ['/s.mp3'] },
      },
      signal(),
    );
    assert.deepEqual(JSON.parse(voice.upstreamId ?? ''), { images: [], audio: ['/s.mp3'] });
    assert.equal(fake.calls.filter((c) => c.path.includes('character')).length, 0, 'nothing upstream');
    await assert.rejects(
      library.createRecord({ model: 'video', library: 'styles', recordId: 'r3', fields: {} }, signal()),
      LibraryRejected,
    );
  });
});
