/**
 * Music tasks over HTTP on the real app and worker, run by the Suno adapter against the fake sunoapi.org:
 * the outputs land in our storage (no upstream link reaches the client), refusals void the hold, and a
 * worker that stops while the run waits upstream is replaced without a second submission. The channel
 * router is not in play here: the adapter is the app's generator.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createSunoAdapter } from '../src/generators/adapters/suno/index.ts';
import type { Generator } from '../src/generators/index.ts';
import { createTestDeps, type TestDeps, testChannel } from './fakes/adapter-deps.ts';
import { SunoFake } from './fakes/suno.ts';
import { startTestApp, type TestAccount, type TestApp } from './helpers.ts';
import { uploadMp3 } from './providers-kit.ts';
import { statusOf, taskRow, until, workerOf } from './worker-kit.ts';

const LYRICS = '[Verse]\nMorning light on the river';

let fake: SunoFake;
let deps: TestDeps;
let t: TestApp;
let account: TestAccount;
let upload: string;

/** The adapter with its poll waits shortened, so a test does not sit out Suno's 5 s between reads. */
function quick(adapter: Generator): Generator {
  return {
    ensureAvailable: (request, signal) => adapter.ensureAvailable(request, signal),
    create: (request, run, signal) => adapter.create(request, run, signal),
    find: (request, run, signal) => adapter.find(request, run, signal),
    async status(handle, request, signal) {
      const status = await adapter.status(handle, request, signal);
      return status.state === 'running'
        ? { ...status, pollAfterMs: Math.min(status.pollAfterMs, 30) }
        : status;
    },
    outputs: (handle, request, dir, signal) => adapter.outputs(handle, request, dir, signal),
    cancel: (handle, signal) => adapter.cancel(handle, signal),
  };
}

before(async () => {
  fake = await new SunoFake({ stepMs: 60 }).start();
  deps = await createTestDeps(testChannel('suno', fake.url, fake.apiKey));
  t = await startTestApp({ generator: quick(createSunoAdapter(deps.deps)) });
  account = await t.account({ balanceMinor: 10_000_000 });
  upload = await uploadMp3(t, account.key, 'e2e');
});

after(async () => {
  await t.close();
  await deps.close();
  await fake.close();
});

async function createTask(settings: Record<string, unknown>): Promise<string> {
  const created = await t.call(account.key, 'POST', '/v1/tasks', { model: 'music', settings });
  assert.equal(created.statusCode, 202, created.body);
  return created.json().id as string;
}

async function finished(id: string) {
  await until(
    async () => ['succeeded', 'failed'].includes((await statusOf(t, account.key, id)).status),
    `task ${id}`,
  );
  return statusOf(t, account.key, id);
}

async function balance(): Promise<number> {
  return (await t.admin('GET', `/admin/v1/accounts/${account.id}`)).json().available_minor as number;
}

const modes: [string, () => Record<string, unknown>, number][] = [
  ['generate', () => ({ mode: 'generate', songDescription: 'a cheerful song about a ginger cat' }), 2],
  ['sounds', () => ({ mode: 'sounds', soundDescription: 'rain on a tin roof' }), 1],
  [
    'add_vocals',
    () => ({
      mode: 'add_vocals',
      audio: [upload],
      title: 'River',
      style: 'folk',
      prompt: LYRICS,
      negativeTags: 'metal',
    }),
    2,
  ],
  [
    'add_instrumental',
    () => ({
      mode: 'add_instrumental',
      audio: [upload],
      title: 'River',
      tags: 'folk',
      negativeTags: 'metal',
    }),
    2,
  ],
  ['cover_upload', () => ({ mode: 'cover_upload', audio: [upload], songDescription: 'a jazz cover' }), 2],
  ['extend', () => ({ mode: 'extend', audio: [upload], continueAt: 10, style: 'folk', prompt: LYRICS }), 2],
  [
    'mashup',
    () => ({ mode: 'mashup', audio: [upload], audio2: [upload], songDescription: 'both as one' }),
    2,
  ],
];

for (const [mode, settings, files] of modes) {
  test(`music ${mode} over HTTP: one submission, files in our storage, no upstream link in the answer`, async () => {
    const before = fake.creates().length;
    const id = await createTask(settings());
    const task = await finished(id);
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    assert.equal(fake.creates().length - before, 1, 'one submission upstream');
    const result = task['result'] as { artifacts: unknown[]; texts: string[] };
    assert.equal(result.artifacts.length, files);
    assert.ok(!JSON.stringify(task).includes(fake.url), 'no upstream URL reaches the client');
    const file = await t.call(account.key, 'GET', `/v1/tasks/${id}/artifacts/0`);
    assert.equal(file.statusCode, 200);
    assert.equal(file.headers['content-type'], 'audio/mpeg');
    const upstream = JSON.parse(String((await taskRow(t, id)).provider_ref)) as { taskId: string };
    assert.ok(fake.tasks.has(upstream.taskId), 'the stored handle names the fake task');
  });
}

test('a content refusal fails the task with content_refused and voids the hold', async () => {
  const start = await balance();
  const id = await createTask({ mode: 'generate', songDescription: 'a song [suno:sensitive]' });
  const task = await finished(id);
  assert.equal(task.status, 'failed');
  assert.equal(task.error?.code, 'content_refused');
  assert.equal(await balance(), start);
});

test('replace_upload of a file Suno did not make fails before any call, hold voided', async () => {
  const start = await balance();
  const calls = fake.calls.length;
  const id = await createTask({
    mode: 'replace_upload',
    audio: [upload],
    infillStartS: 2,
    infillEndS: 13,
    prompt: LYRICS,
    fullLyrics: LYRICS,
    tags: 'folk',
    title: 'River',
  });
  const task = await finished(id);
  assert.equal(task.error?.code, 'generation_failed');
  assert.equal(fake.calls.length, calls);
  assert.equal(await balance(), start);
});

test('a worker that stops while the run waits upstream is replaced: same upstream task, one submission', async () => {
  fake.stepMs = 400;
  try {
    const before = fake.creates().length;
    const id = await createTask({ mode: 'generate', songDescription: 'a slow song' });
    await until(async () => (await taskRow(t, id)).provider_ref !== null, 'the handle is stored');
    await t.container.worker.stop();
    const stopped = await taskRow(t, id);
    assert.equal(stopped.status, 'running');
    const replacement = workerOf(t);
    replacement.start();
    try {
      const task = await finished(id);
      assert.equal(task.status, 'succeeded', JSON.stringify(task));
    } finally {
      await replacement.stop();
    }
    assert.equal(fake.creates().length - before, 1, 'exactly one submission upstream');
    assert.equal((await taskRow(t, id)).provider_ref, stopped.provider_ref);
  } finally {
    fake.stepMs = 60;
  }
});
