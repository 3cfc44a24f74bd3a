/**
 * A process restart in the middle of a synchronous ElevenLabs call (CONTRACT §11, PROVIDERS.md
 * "Synchronous"): the new process's adapter has no local record of the run, so the run is retried as a new
 * call; the task still succeeds and its price is captured once. The "new process" is a fresh adapter for
 * the same channel, swapped in while the worker is stopped.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ElevenLabsAdapter } from '../src/generators/adapters/elevenlabs/index.ts';
import type { Adapter, AdapterDeps, Channel } from '../src/generators/adapters/index.ts';
import type { Generator } from '../src/generators/index.ts';
import { ElevenLabsFake } from './fakes/elevenlabs.ts';
import { startTestApp, type TestApp, waitForFinal } from './helpers.ts';
import { assertCapturedOnce, until, uploadMp3 } from './providers-kit.ts';

const KEY = 'el-restart-key';

/** The channel's adapter, replaceable by a fresh one as a restarted process would build. */
class Swappable implements Adapter {
  #inner: ElevenLabsAdapter;
  readonly #deps: AdapterDeps;
  constructor(deps: AdapterDeps) {
    this.#deps = deps;
    this.#inner = new ElevenLabsAdapter(deps);
  }
  get library(): Adapter['library'] {
    return this.#inner.library;
  }
  restart(): void {
    this.#inner = new ElevenLabsAdapter(this.#deps);
  }
  ensureAvailable: Generator['ensureAvailable'] = () => this.#inner.ensureAvailable();
  create: Generator['create'] = (...a) => this.#inner.create(...a);
  find: Generator['find'] = (...a) => this.#inner.find(...a);
  status: Generator['status'] = (...a) => this.#inner.status(...a);
  outputs: Generator['outputs'] = (...a) => this.#inner.outputs(...a);
  cancel: Generator['cancel'] = (...a) => this.#inner.cancel(...a);
}

let fake: ElevenLabsFake;
let t: TestApp;
let adapter: Swappable | null = null;

before(async () => {
  fake = await new ElevenLabsFake({ apiKey: KEY, callMs: 1_500 }).start();
  const channel: Channel = {
    name: 'eleven-restart',
    provider: 'elevenlabs',
    models: ['voice'],
    baseUrl: fake.url,
    secrets: { api_key: KEY },
    priority: 0,
    weight: 1,
    maxConcurrency: 4,
    timeoutMs: 60_000,
    upstreamModels: {},
  };
  t = await startTestApp({
    channels: [channel],
    adapters: {
      elevenlabs: (deps) => {
        adapter = new Swappable(deps);
        return adapter;
      },
    },
  });
});

after(async () => {
  await t.close();
  await fake.close();
});

test('a restart during the call: the run is redone as a new call and the task succeeds', async () => {
  const account = await t.account({ balanceMinor: 100_000_000 });
  const sample = await uploadMp3(t, account.key, 'restart');
  const voice = await t.call(account.key, 'POST', '/v1/models/voice/voices', {
    name: 'Alice',
    sample_urls: [sample],
  });
  assert.equal(voice.statusCode, 201, voice.body);
  const created = await t.call(account.key, 'POST', '/v1/tasks', {
    model: 'voice',
    settings: { mode: 'text_to_dialogue', text: 'Hello after a restart.', voice: voice.json().id },
  });
  assert.equal(created.statusCode, 202, created.body);
  const id = created.json().id as string;
  await until(async () => fake.callsTo('/v1/text-to-dialogue').length === 1, 'the first call');
  await t.container.worker.stop();
  assert.ok(adapter, 'the channel adapter was built');
  adapter.restart();
  fake.options.callMs = 50;
  t.container.worker.start();
  const task = await waitForFinal(t, account.key, id, 90_000);
  assert.equal(task.status, 'succeeded', JSON.stringify(task));
  assert.equal(fake.callsTo('/v1/text-to-dialogue').length, 2, 'the lost call, then a new one');
  await assertCapturedOnce(t.container, id);
});
