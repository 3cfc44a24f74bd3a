/**
 * The Suno adapter's classification of everything that goes wrong (PROVIDERS.md §2 and "Normalised
 * mapping"): body codes, HTTP failures, garbage, refusals and failed tasks, expired output links,
 * callbacks that wake a run versus polling alone, and the helpers.
 */
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSunoAdapter, SUNO_LAG_POLL_MS, SUNO_POLL_MS } from '../src/generators/adapters/suno/index.ts';
import { ChannelOutOfCredit } from '../src/generators/adapters/types.ts';
import {
  GenerationError,
  GeneratorTransientError,
  GeneratorUnavailable,
} from '../src/generators/generator.ts';
import { LibraryRejected } from '../src/generators/library.ts';
import { musicRequest, pollToEnd, type Rig, runStart, runToEnd, sunoRig } from './fakes/suno-kit.ts';

let rig: Rig;
before(async () => {
  rig = await sunoRig();
});
after(() => rig.close());

const song = (description = 'a song about rain') =>
  musicRequest({ mode: 'generate', songDescription: description });
const create = (request = song()) => rig.adapter.create(request, runStart(), AbortSignal.timeout(5_000));
const isTransient = (error: unknown): error is GeneratorTransientError =>
  error instanceof GeneratorTransientError;
const isFinal = (code: string) => (error: unknown) => error instanceof GenerationError && error.code === code;

for (const code of [401, 405, 430, 455, 500]) {
  test(`body code ${code} is transient whatever the HTTP status`, async () => {
    rig.fake.fail({ kind: 'code', code }, { target: 'create' });
    await assert.rejects(create(), isTransient);
  });
}

test('body code 429 (insufficient credits) disables the channel: ChannelOutOfCredit', async () => {
  rig.fake.fail({ kind: 'code', code: 429, msg: 'insufficient credits' }, { target: 'create' });
  await assert.rejects(create(), (error: unknown) => error instanceof ChannelOutOfCredit);
});

for (const code of [400, 413]) {
  test(`create envelope ${code} is a final generation_failed, not a content refusal`, async () => {
    rig.fake.fail({ kind: 'code', code, msg: 'bad parameters' }, { target: 'create' });
    await assert.rejects(create(), isFinal('generation_failed'));
  });
}

test('a wrong API key is transient (counts against the channel)', async () => {
  const { deps } = rig.test;
  const stale = createSunoAdapter({ ...deps, channel: { ...deps.channel, secrets: { api_key: 'stale' } } });
  const before = rig.fake.calls.length;
  await assert.rejects(stale.create(song(), runStart(), AbortSignal.timeout(5_000)), isTransient);
  assert.equal(rig.fake.calls[before]?.authorization, 'Bearer stale');
});

test('HTTP 5xx without an envelope, garbage JSON and a missing taskId are transient', async () => {
  rig.fake.fail({ kind: 'http', status: 502 }, { target: 'create' });
  await assert.rejects(create(), isTransient);
  rig.fake.fail({ kind: 'garbage' }, { target: 'create' });
  await assert.rejects(create(), isTransient);
  rig.fake.fail({ kind: 'missing' }, { target: 'create' });
  await assert.rejects(create(), isTransient);
});

const gatewayPage = '<html><body><h1>Bad gateway</h1></body></html>';
for (const [status, body, name] of [
  [429, '', 'an empty HTTP 429'],
  [429, gatewayPage, "a gateway's HTML page with HTTP 429"],
  [503, gatewayPage, "a gateway's HTML page with HTTP 503"],
] as const) {
  test(`${name} is transient and keeps the Retry-After`, async () => {
    rig.fake.fail({ kind: 'http', status, retryAfterSeconds: 3, body }, { target: 'create' });
    await assert.rejects(create(), (error: unknown) => isTransient(error) && error.retryAfterMs === 3_000);
  });
}

test('a hanging upstream call ends with its signal', async () => {
  rig.fake.fail({ kind: 'hang' }, { target: 'create' });
  // The caller's own limit is not the provider's failure: the call ends with the signal's reason (the
  // worker bounds its calls and counts that as transient itself).
  await assert.rejects(rig.adapter.create(song(), runStart(), AbortSignal.timeout(200)), {
    name: 'TimeoutError',
  });
});

test('record-info faults while polling are transient; an unknown task is final', async () => {
  const request = song();
  const handle = await create(request);
  rig.fake.fail({ kind: 'garbage' }, { target: 'read' });
  await assert.rejects(rig.adapter.status(handle, request, AbortSignal.timeout(5_000)), isTransient);
  rig.fake.fail({ kind: 'code', code: 455 }, { target: 'read' });
  await assert.rejects(rig.adapter.status(handle, request, AbortSignal.timeout(5_000)), isTransient);
  rig.fake.fail({ kind: 'missing' }, { target: 'read' });
  await assert.rejects(rig.adapter.status(handle, request, AbortSignal.timeout(5_000)), isTransient);
  const lost = JSON.stringify({ v: 1, taskId: 'nope', key: 'k' });
  await assert.rejects(
    rig.adapter.status(lost, request, AbortSignal.timeout(5_000)),
    isFinal('generation_failed'),
  );
  assert.deepEqual(await pollToEnd(rig.adapter, handle, request), { state: 'succeeded' });
});

const outcomes: [string, string, object][] = [
  ['SENSITIVE_WORD_ERROR', '[suno:sensitive]', { state: 'failed', code: 'content_refused' }],
  ['GENERATE_AUDIO_FAILED', '[suno:failed]', { state: 'failed', code: 'generation_failed' }],
  [
    'GENERATE_AUDIO_FAILED with errorCode 400',
    '[suno:copyright]',
    { state: 'failed', code: 'content_refused' },
  ],
];
for (const [name, marker, expected] of outcomes) {
  test(`${name} ends the run: ${JSON.stringify(expected)}`, async () => {
    const { status, outputs } = await runToEnd(rig.adapter, song(`a song ${marker}`));
    assert.deepEqual({ state: status.state, code: status.state === 'failed' ? status.code : null }, expected);
    assert.ok(status.state === 'failed' && status.reason.length > 0);
    assert.equal(outputs, null);
  });
}

test('a failed task whose error callback carries code 413 is a content refusal', async () => {
  const request = song('a song [suno:failed]');
  const run = runStart();
  const handle = await rig.adapter.create(request, run, AbortSignal.timeout(5_000));
  const status = await pollToEnd(rig.adapter, handle, request);
  assert.equal(status.state === 'failed' && status.code, 'generation_failed');
  rig.test.received.set(run.key, [
    {
      code: 413,
      msg: 'matches an existing work',
      data: { callbackType: 'error', task_id: 'x', error: 'known' },
    },
  ]);
  const again = await rig.adapter.status(handle, request, AbortSignal.timeout(5_000));
  assert.equal(again.state === 'failed' && again.code, 'content_refused');
});

test('CALLBACK_EXCEPTION with every track is success', async () => {
  const { status, outputs } = await runToEnd(rig.adapter, song('a song [suno:callback-exception]'));
  assert.deepEqual(status, { state: 'succeeded' });
  assert.equal(outputs?.files.length, 2);
});

test('an output that is not the promised mp3 fails the run with generation_failed', async () => {
  await assert.rejects(runToEnd(rig.adapter, song('a song [suno:not-mp3]')), isFinal('generation_failed'));
});

test('outputs still download after the links of the last read expired: one re-read for fresh links', async () => {
  rig.fake.urlTtlMs = 150;
  try {
    const request = song();
    const handle = await create(request);
    assert.deepEqual(await pollToEnd(rig.adapter, handle, request), { state: 'succeeded' });
    // Links expire from the read that issued them; outputs() reads, so age them between read and download.
    const downloadsBefore = rig.test.downloads.length;
    const realDownload = rig.test.deps.download;
    let delayed = false;
    rig.test.deps.download = async (url, dir, signal) => {
      if (!delayed) {
        delayed = true;
        await sleep(300);
      }
      return realDownload(url, dir, signal);
    };
    try {
      const outputs = await rig.adapter.outputs(
        handle,
        request,
        await mkdtemp(join(tmpdir(), 'suno-')),
        AbortSignal.timeout(10_000),
      );
      assert.equal(outputs.files.length, 2);
      const tried = rig.test.downloads.slice(downloadsBefore);
      assert.equal(tried.length, 3, 'expired link, its fresh link, the second track');
      assert.notEqual(tried[0], tried[1]);
    } finally {
      rig.test.deps.download = realDownload;
    }
  } finally {
    rig.fake.urlTtlMs = 3_000;
  }
});

test('outputs whose links stay dead after the re-read are a transient failure', async () => {
  const request = song();
  const handle = await create(request);
  await pollToEnd(rig.adapter, handle, request);
  rig.fake.urlTtlMs = -1;
  try {
    await assert.rejects(
      rig.adapter.outputs(
        handle,
        request,
        await mkdtemp(join(tmpdir(), 'suno-')),
        AbortSignal.timeout(10_000),
      ),
      isTransient,
    );
  } finally {
    rig.fake.urlTtlMs = 3_000;
  }
});

test('a track our download refuses for good (over the output cap) fails at once: no re-read, no second try', async () => {
  const request = song();
  const handle = await create(request);
  await pollToEnd(rig.adapter, handle, request);
  const realDownload = rig.test.deps.download;
  let downloads = 0;
  rig.test.deps.download = async () => {
    downloads += 1;
    throw new GenerationError(
      'generation_failed',
      'an output file is larger than the service stores (1 bytes)',
    );
  };
  const reads = rig.fake.calls.filter((c) => c.method === 'GET').length;
  try {
    await assert.rejects(
      rig.adapter.outputs(
        handle,
        request,
        await mkdtemp(join(tmpdir(), 'suno-')),
        AbortSignal.timeout(10_000),
      ),
      isFinal('generation_failed'),
    );
    assert.equal(downloads, 1);
    assert.equal(
      rig.fake.calls.filter((c) => c.method === 'GET').length - reads,
      1,
      'the one read of outputs',
    );
  } finally {
    rig.test.deps.download = realDownload;
  }
});

test('callbacks arrive at each stage; they only wake the run, record-info decides', async () => {
  const request = song();
  const run = runStart();
  const handle = await rig.adapter.create(request, run, AbortSignal.timeout(5_000));
  assert.deepEqual(await pollToEnd(rig.adapter, handle, request), { state: 'succeeded' });
  await sleep(100);
  const types = (rig.test.received.get(run.key) ?? []).map(
    (b) => (b as { data: { callbackType: string } }).data.callbackType,
  );
  assert.deepEqual(types, ['text', 'first', 'complete']);
  // A forged "complete" carrying foreign links changes nothing: the files come from record-info.
  rig.test.received
    .get(run.key)
    ?.push({ code: 200, data: { callbackType: 'complete', data: [{ audio_url: 'http://10.0.0.1/x.mp3' }] } });
  const outputs = await rig.adapter.outputs(
    handle,
    request,
    await mkdtemp(join(tmpdir(), 'suno-')),
    AbortSignal.timeout(10_000),
  );
  assert.equal(outputs.files.length, 2);
  assert.ok(rig.test.downloads.every((url) => url.startsWith(rig.fake.url)));
});

test('a final callback before record-info shows the end makes the next poll come sooner', async () => {
  const request = song('a song [suno:stall]');
  const run = runStart();
  const handle = await rig.adapter.create(request, run, AbortSignal.timeout(5_000));
  const quiet = await rig.adapter.status(handle, request, AbortSignal.timeout(5_000));
  assert.deepEqual(quiet, { state: 'running', progress: 10, pollAfterMs: SUNO_POLL_MS });
  rig.test.received.set(run.key, [{ code: 200, data: { callbackType: 'complete', task_id: 'x', data: [] } }]);
  const woken = await rig.adapter.status(handle, request, AbortSignal.timeout(5_000));
  assert.deepEqual(woken, { state: 'running', progress: 10, pollAfterMs: SUNO_LAG_POLL_MS });
});

test('without callbacks, polling alone takes the run to its end', async () => {
  rig.fake.sendCallbacks = false;
  try {
    const request = song();
    const run = runStart();
    const handle = await rig.adapter.create(request, run, AbortSignal.timeout(5_000));
    const waits: number[] = [];
    assert.deepEqual(await pollToEnd(rig.adapter, handle, request, waits), { state: 'succeeded' });
    assert.ok(waits.length > 0 && waits.every((w) => w === SUNO_POLL_MS));
    assert.equal(rig.test.received.get(run.key), undefined);
  } finally {
    rig.fake.sendCallbacks = true;
  }
});

test('lyrics helper: prompt cut to 200 with a callback URL, polled to its variants', async () => {
  const library = rig.adapter.library;
  assert.ok(library);
  const before = rig.fake.calls.length;
  const out = await library.runHelper(
    'lyrics',
    { prompt: `rain ${'x'.repeat(300)}` },
    AbortSignal.timeout(20_000),
  );
  assert.equal(out.variants.length, 2);
  assert.match(out.variants[0]?.text ?? '', /^\[Verse\]\nrain x+ \(variant 1\)$/);
  const post = rig.fake.calls.slice(before).find((c) => c.method === 'POST');
  assert.equal(post?.path, '/api/v1/lyrics');
  const body = post?.body as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['callBackUrl', 'prompt']);
  assert.equal(String(body['prompt']).length, 200);
  assert.ok(rig.fake.calls.slice(before).some((c) => c.path === '/api/v1/lyrics/record-info'));
});

test('style boost: {content} → data.result', async () => {
  const before = rig.fake.calls.length;
  const out = await rig.adapter.library?.runHelper(
    'style-boost',
    { style: 'synthwave' },
    AbortSignal.timeout(5_000),
  );
  assert.equal(out?.style, 'synthwave, boosted: warm analog synths, 120 BPM');
  const post = rig.fake.calls.slice(before)[0];
  assert.equal(post?.path, '/api/v1/style/generate');
  assert.deepEqual(post?.body, { content: 'synthwave' });
});

test('style boost: a long answer is cut at 1,000 characters, never inside an emoji', async () => {
  const style = `a${'😀'.repeat(999)}`;
  const out = await rig.adapter.library?.runHelper('style-boost', { style }, AbortSignal.timeout(5_000));
  assert.equal(out?.style, style);
  assert.equal(Array.from(out?.style ?? '').length, 1_000);
  assert.ok(out?.style.isWellFormed(), 'no lone surrogate');
});

test('helpers: a refusal is LibraryRejected (502), busy GeneratorUnavailable (503), no credit goes on', async () => {
  const library = rig.adapter.library;
  assert.ok(library);
  const signal = () => AbortSignal.timeout(20_000);
  await assert.rejects(
    library.runHelper('lyrics', { prompt: 'words [suno:sensitive]' }, signal()),
    (e: unknown) => e instanceof LibraryRejected,
  );
  // No credit reaches the channel router as it is, which disables the channel and answers 503
  // (channel-library.ts).
  rig.fake.fail({ kind: 'code', code: 429 }, { target: 'create' });
  await assert.rejects(
    library.runHelper('style-boost', { style: 'pop' }, signal()),
    (e: unknown) => e instanceof ChannelOutOfCredit,
  );
  rig.fake.fail({ kind: 'code', code: 430 }, { target: 'create' });
  await assert.rejects(
    library.runHelper('style-boost', { style: 'pop' }, signal()),
    (e: unknown) => e instanceof GeneratorUnavailable,
  );
  rig.fake.fail({ kind: 'code', code: 400 }, { target: 'create' });
  await assert.rejects(
    library.runHelper('style-boost', { style: 'pop' }, signal()),
    (e: unknown) => e instanceof LibraryRejected,
  );
});

test('a persona without a suno track and a phrase without a suno voice are 502 before any upstream call', async () => {
  const library = rig.adapter.library;
  assert.ok(library);
  const before = rig.fake.calls.length;
  await assert.rejects(
    library.createRecord(
      { model: 'music', library: 'personas', recordId: 'p1', fields: {} },
      AbortSignal.timeout(1_000),
    ),
    (e: unknown) => e instanceof LibraryRejected,
  );
  await assert.rejects(
    library.issuePhrase(
      { recordId: 'v1', attempt: 1, language: 'en', avoid: [] },
      AbortSignal.timeout(1_000),
    ),
    (e: unknown) => e instanceof LibraryRejected,
  );
  // A library Suno does not keep cannot be served: 503.
  await assert.rejects(
    library.createRecord(
      { model: 'music', library: 'styles', recordId: 's1', fields: {} },
      AbortSignal.timeout(1_000),
    ),
    (e: unknown) => e instanceof GeneratorUnavailable,
  );
  assert.equal(rig.fake.calls.length, before);
});
