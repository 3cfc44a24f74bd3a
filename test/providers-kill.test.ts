/**
 * kill -9 of the worker process while its run waits upstream, with real processes: the API and a worker
 * as child processes on one database, a provider fake in this process. The restarted worker polls the
 * same upstream task to its end: one submission, the files in our storage, the price captured once.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SunoFake } from './fakes/suno.ts';
import { TripoFake } from './fakes/tripo.ts';
import { sharedProcessEnv, startTestApp, type TestApp } from './helpers.ts';
import { exited, freePort, type Server, startServer, startWorker } from './processes.ts';
import {
  assertCapturedOnce,
  assertNoUpstreamUrl,
  channelEnv,
  FAKE_KEYS,
  until,
  writeChannelFile,
} from './providers-kit.ts';

/** A provider fake as this test drives it. */
interface Upstream {
  channel: Record<string, unknown>;
  origin: string;
  model: string;
  settings: Record<string, unknown>;
  /** Submissions the fake received. */
  submissions(): number;
  /** True once the upstream task behind the handle has finished. */
  finished(handle: string): boolean;
  contentTypes: string[];
  close(): Promise<void>;
}

async function tripoUpstream(): Promise<Upstream> {
  const fake = await TripoFake.start({
    apiKeys: [FAKE_KEYS.TRIPO_API_KEY],
    queuedMs: 1_000,
    runningMs: 3_000,
  });
  return {
    channel: {
      name: 'tripo-main',
      provider: 'tripo',
      models: ['model-3d'],
      base_url: fake.baseUrl,
      api_key_env: 'TRIPO_API_KEY',
    },
    origin: fake.origin,
    model: 'model-3d',
    settings: { task_type: 'text_to_model', prompt: 'a chair that outlives its worker' },
    submissions: () => fake.callsTo('POST', '/task').length,
    finished: (handle) => {
      const task = fake.tasks.get(handle);
      return task !== undefined && Date.now() > task.createdAt + 4_000;
    },
    contentTypes: ['model/gltf-binary', 'image/png'],
    close: () => fake.close(),
  };
}

async function sunoUpstream(): Promise<Upstream> {
  const fake = await new SunoFake({
    apiKey: FAKE_KEYS.SUNO_API_KEY,
    stepMs: 1_500,
    urlTtlMs: 60_000,
  }).start();
  return {
    channel: {
      name: 'suno-main',
      provider: 'suno',
      models: ['music'],
      base_url: fake.url,
      api_key_env: 'SUNO_API_KEY',
    },
    origin: fake.url,
    model: 'music',
    settings: { mode: 'generate', songDescription: 'a song that outlives its worker' },
    submissions: () => fake.creates().length,
    finished: (handle) => {
      const task = fake.tasks.get((JSON.parse(handle) as { taskId: string }).taskId);
      return task !== undefined && fake.stateOf(task) === 'SUCCESS';
    },
    contentTypes: ['audio/mpeg', 'audio/mpeg'],
    close: () => fake.close(),
  };
}

async function http(
  server: Server,
  key: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<{ status: number; json: () => Record<string, unknown>; bytes: Buffer; type: string | null }> {
  const response = await fetch(`${server.base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  return {
    status: response.status,
    json: () => JSON.parse(bytes.toString('utf8')) as Record<string, unknown>,
    bytes,
    type: response.headers.get('content-type'),
  };
}

describe('kill -9 of the worker while a run waits upstream', () => {
  for (const [name, start] of [
    ['Tripo', tripoUpstream],
    ['Suno', sunoUpstream],
  ] as const)
    test(`${name}: the restarted worker polls the same upstream task to its end, one submission, captured once`, async () => {
      const upstream = await start();
      // The database (SQLite file or a fresh PostgreSQL one) and storage the child processes share.
      let t: TestApp | null = null;
      const children: Server[] = [];
      try {
        t = await startTestApp({ worker: false });
        const port = await freePort();
        const env = {
          ...channelEnv(writeChannelFile([upstream.channel]), `http://127.0.0.1:${port}`),
          ...sharedProcessEnv(t),
          JOB_LEASE: '5s',
        };
        const api = await startServer({ ...env, PORT: String(port), WORKER: 'off' });
        children.push(api);
        const first = await startWorker(env);
        children.push(first);
        const account = await t.account({ balanceMinor: 10_000_000 });
        const created = await http(api, account.key, 'POST', '/v1/tasks', {
          model: upstream.model,
          settings: upstream.settings,
        });
        assert.equal(created.status, 202, created.bytes.toString());
        const id = created.json().id as string;
        const db = t.container.db.db;
        const row = () => db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
        await until(async () => (await row()).provider_ref !== null, 'the upstream handle is stored');
        const handle = (await row()).provider_ref as string;
        assert.equal(upstream.submissions(), 1);

        first.child.kill('SIGKILL');
        await exited(first.child);
        assert.equal((await row()).status, 'running');
        // The upstream task ends while no worker runs (Suno's callbacks reach the API and are kept).
        const inner = handle.slice(handle.indexOf(':', 3) + 1);
        await until(async () => upstream.finished(inner), 'the upstream task to finish');

        children.push(await startWorker(env));
        await until(
          async () => (await http(api, account.key, 'GET', `/v1/tasks/${id}`)).json().status !== 'running',
          'the task to finish after the restart',
          90_000,
        );
        const task = (await http(api, account.key, 'GET', `/v1/tasks/${id}`)).json();
        assert.equal(task.status, 'succeeded', JSON.stringify(task));
        assertNoUpstreamUrl(task, [upstream.origin]);
        assert.equal(upstream.submissions(), 1, 'exactly one submission upstream');
        assert.equal((await row()).provider_ref, handle, 'the same upstream task');
        for (const [i, type] of upstream.contentTypes.entries()) {
          const file = await http(api, account.key, 'GET', `/v1/tasks/${id}/artifacts/${i}`);
          assert.equal(file.status, 200);
          assert.equal(file.type, type);
        }
        await assertCapturedOnce(t.container, id);
      } finally {
        for (const child of children) if (child.child.exitCode === null) child.child.kill('SIGTERM');
        for (const child of children) await exited(child.child);
        await t?.close();
        await upstream.close();
      }
    });
});
