/**
 * How the Tripo adapter classifies what goes wrong (PROVIDERS.md "Normalised mapping"): transient answers,
 * no credit, content refusals, other refusals, failed and lost tasks, broken answers, and outputs that
 * expire, are not what was asked for, or are too big.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTripoAdapter } from '../src/generators/adapters/tripo/index.ts';
import { ChannelOutOfCredit, UpstreamRunLost } from '../src/generators/adapters/types.ts';
import { GenerationError, GeneratorTransientError } from '../src/generators/generator.ts';
import { makeWebp } from '../src/media/fixtures.ts';
import { pollingTestDeps, testChannel } from './fakes/adapter-deps.ts';
import { TripoFake } from './fakes/tripo.ts';
import { RUN, request3d, runToEnd } from './fakes/tripo-kit.ts';

const KEY = 'tsk_faults';
let fake: TripoFake;
let dir: string;
const inputs = new Map<string, Uint8Array>();
const text = request3d({ task_type: 'text_to_model', prompt: 'a teapot' });
const signal = (): AbortSignal => AbortSignal.timeout(10_000);

before(async () => {
  fake = await TripoFake.start({
    apiKeys: [KEY, 'tsk_other'],
    queuedMs: 50,
    runningMs: 150,
    outputTtlMs: 400,
  });
  dir = await mkdtemp(path.join(os.tmpdir(), 'tripo-faults-'));
  inputs.set('https://gta.example/v1/files/pic.webp', await readFile(await makeWebp(dir, 64, 64)));
});
after(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

function adapter(options: { apiKey?: string; maxDownloadBytes?: number; callTimeoutMs?: number } = {}) {
  const { apiKey = KEY, ...limits } = options;
  const channel = testChannel('tripo', fake.baseUrl, apiKey, ['model-3d']);
  return createTripoAdapter(pollingTestDeps(channel, { inputs, ...limits }));
}

async function outDir(): Promise<string> {
  return mkdtemp(path.join(dir, 'out-'));
}

test('429/2000 and 5xx codes are transient, with Tripo’s Retry-After', async () => {
  fake.inject('create', { kind: 'error', status: 429, code: 2000, retryAfterSeconds: 2 });
  await assert.rejects(adapter().create(text, RUN, signal()), (error: unknown) => {
    assert.ok(error instanceof GeneratorTransientError);
    assert.equal(error.retryAfterMs, 2_000);
    assert.match(error.message, /code 2000/);
    return true;
  });
  for (const [status, code] of [
    [500, 1000],
    [500, 1001],
    [500, 2014],
    [503, 4242],
  ] as const) {
    fake.inject('create', { kind: 'error', status, code });
    await assert.rejects(adapter().create(text, RUN, signal()), GeneratorTransientError, `${status}/${code}`);
  }
  const { handle } = await runToEnd(adapter(), text);
  fake.inject('status', { kind: 'error', status: 500, code: 1001 });
  await assert.rejects(adapter().status(handle, text, signal()), GeneratorTransientError);
  assert.equal((await adapter().status(handle, text, signal())).state, 'succeeded', 'the next poll works');
});

test("a gateway's HTML page with 429 or 503 is transient and keeps its Retry-After", async () => {
  for (const [status, seconds] of [
    [429, 7],
    [503, 3],
  ] as const) {
    fake.inject('create', { kind: 'gateway', status, retryAfterSeconds: seconds });
    await assert.rejects(adapter().create(text, RUN, signal()), (error: unknown) => {
      assert.ok(error instanceof GeneratorTransientError);
      assert.equal(error.retryAfterMs, seconds * 1000);
      assert.match(error.message, new RegExp(`HTTP ${status}`));
      return true;
    });
  }
  const { handle } = await runToEnd(adapter(), text);
  fake.inject('status', { kind: 'gateway', status: 503, retryAfterSeconds: 3 });
  await assert.rejects(
    adapter().status(handle, text, signal()),
    (error: unknown) => error instanceof GeneratorTransientError && error.retryAfterMs === 3_000,
  );
});

test('a wrong key is Tripo’s auth error 1002: transient, and counts against the channel', async () => {
  await assert.rejects(adapter({ apiKey: 'tsk_wrong' }).create(text, RUN, signal()), GeneratorTransientError);
  assert.equal(fake.calls.at(-1)?.key, 'tsk_wrong');
});

test('a task is read only with the key that created it (2001 for another key: transient)', async () => {
  const handle = await adapter().create(text, RUN, signal());
  await assert.rejects(
    adapter({ apiKey: 'tsk_other' }).status(handle, text, signal()),
    GeneratorTransientError,
  );
});

test('2010 means the channel’s account has no credit', async () => {
  fake.credits = 0;
  try {
    await assert.rejects(adapter().create(text, RUN, signal()), ChannelOutOfCredit);
  } finally {
    fake.credits = null;
  }
});

test('2008 is a content refusal; other refusals fail with Tripo’s reason', async () => {
  fake.inject('create', { kind: 'error', status: 400, code: 2008, message: 'prompt violates policy' });
  await assert.rejects(adapter().create(text, RUN, signal()), (error: unknown) => {
    assert.ok(error instanceof GenerationError);
    assert.equal(error.code, 'content_refused');
    assert.match(error.message, /prompt violates policy/);
    return true;
  });
  // Any other refusal: the task fails with Tripo's reason (a face_limit outside Tripo's range no longer gets
  // here: it is sent within the range, tripo-adapter.test.ts).
  fake.inject('create', {
    kind: 'error',
    status: 400,
    code: 1004,
    message: 'face_limit must be 1000 to 20000',
  });
  await assert.rejects(adapter().create(text, RUN, signal()), (error: unknown) => {
    assert.ok(error instanceof GenerationError);
    assert.equal(error.code, 'generation_failed');
    assert.match(error.message, /code 1004: face_limit must be 1000 to 20000/);
    return true;
  });
  // The fake's own range check, which a low-poly mesh of 700 faces no longer meets: sent as 1000.
  const lowPoly = request3d({
    task_type: 'text_to_model',
    prompt: 'a tree',
    smart_low_poly: true,
    face_limit: 700,
  });
  assert.ok(await adapter().create(lowPoly, RUN, signal()));
});

test('banned and failed tasks end the run; failed with 2008 is a content refusal', async () => {
  const cases = [
    { outcome: 'banned', errorCode: undefined, code: 'content_refused' },
    { outcome: 'failed', errorCode: 2008, code: 'content_refused' },
    { outcome: 'failed', errorCode: 2002, code: 'generation_failed' },
  ] as const;
  for (const c of cases) {
    fake.nextTasks(c.outcome, c.errorCode === undefined ? {} : { errorCode: c.errorCode });
    const { handle, seen } = await runToEnd(adapter(), text);
    const last = seen.at(-1);
    assert.equal(last?.state, 'failed');
    assert.equal(last?.state === 'failed' && last.code, c.code, `${c.outcome} ${c.errorCode}`);
    if (c.errorCode) assert.match(last?.state === 'failed' ? last.reason : '', new RegExp(`${c.errorCode}`));
    await assert.rejects(adapter().outputs(handle, text, await outDir(), signal()), GenerationError);
  }
});

test('expired, unknown and cancelled tasks are lost upstream: transient, run again', async () => {
  for (const outcome of ['expired', 'unknown', 'cancelled'] as const) {
    fake.nextTasks(outcome);
    await assert.rejects(runToEnd(adapter(), text), UpstreamRunLost, outcome);
  }
  assert.ok(new UpstreamRunLost('x') instanceof GeneratorTransientError);
});

test('garbage, answers without data, and hangs are transient', async () => {
  fake.inject('create', { kind: 'garbage' });
  await assert.rejects(adapter().create(text, RUN, signal()), GeneratorTransientError);
  fake.inject('create', { kind: 'no_data' });
  await assert.rejects(adapter().create(text, RUN, signal()), /without the documented answer/);
  fake.inject('status', { kind: 'hang' });
  const handle = await adapter().create(text, RUN, signal());
  await assert.rejects(
    adapter({ callTimeoutMs: 300 }).status(handle, text, signal()),
    GeneratorTransientError,
  );
});

test('pictures Tripo does not take fail before any call', async () => {
  const calls = fake.calls.length;
  const webp = request3d({
    task_type: 'image_to_model',
    image_url: ['https://gta.example/v1/files/pic.webp'],
  });
  await assert.rejects(adapter().create(webp, RUN, signal()), /JPEG or PNG/);
  assert.equal(fake.calls.length, calls);
});

test('outputs download after the links seen while polling expired: the task is read again', async () => {
  const { handle } = await runToEnd(adapter(), text);
  await sleep(500);
  const files = await adapter().outputs(handle, text, await outDir(), signal());
  assert.deepEqual(
    files.files.map((f) => f.filename),
    ['model.glb', 'preview.png'],
  );
});

test('a failed download re-reads the task once for fresh links; a second failure is transient', async () => {
  const { handle } = await runToEnd(adapter(), text);
  const reads = fake.callsTo('GET', handle).length;
  fake.inject('file', { kind: 'error', status: 403, code: 0 });
  const out = await outDir();
  const files = await adapter().outputs(handle, text, out, signal());
  assert.equal(files.files.length, 2);
  assert.equal(fake.callsTo('GET', handle).length, reads + 2, 'read, then read again');
  fake.inject('file', { kind: 'error', status: 403, code: 0 }, 2);
  const failed = await outDir();
  await assert.rejects(adapter().outputs(handle, text, failed, signal()), GeneratorTransientError);
  assert.deepEqual(await readdir(failed), [], 'nothing half-fetched is left behind');
});

test('outputs that are not what was asked for fail, too big included; a missing preview is fine', async () => {
  fake.nextTasks('success', { outputFault: 'wrong_type' });
  let run = await runToEnd(adapter(), text);
  await assert.rejects(adapter().outputs(run.handle, text, await outDir(), signal()), /png model where glb/);
  fake.nextTasks('success', { outputFault: 'no_model' });
  run = await runToEnd(adapter(), text);
  await assert.rejects(adapter().outputs(run.handle, text, await outDir(), signal()), /without a model/);
  fake.nextTasks('success', { outputFault: 'too_big' });
  run = await runToEnd(adapter(), text);
  await assert.rejects(
    adapter({ maxDownloadBytes: 1024 * 1024 }).outputs(run.handle, text, await outDir(), signal()),
    (error: unknown) => error instanceof GenerationError && error.code === 'generation_failed',
  );
  fake.nextTasks('success', { outputFault: 'no_preview' });
  run = await runToEnd(adapter(), text);
  const files = await adapter().outputs(run.handle, text, await outDir(), signal());
  assert.deepEqual(
    files.files.map((f) => f.filename),
    ['model.glb'],
  );
});
