/**
 * A caller's input that answered the probe at acceptance and cannot be read when the run starts (the
 * adapter reads it to upload it, as Tripo's does) is the caller's problem: the task fails with
 * input_unavailable before any upstream call, its hold voided, and the channel counts nothing, so one
 * caller's flaky link cannot open a channel's circuit for everyone (CONTRACT §11, PROVIDERS.md
 * "Normalised mapping").
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { makePng } from '../src/media/fixtures.ts';
import { StorageError } from '../src/storage/index.ts';
import { type FakeServer, startFakeServer } from './fakes/server.ts';
import { TripoFake } from './fakes/tripo.ts';
import { balances, type TestAccount, type TestApp, waitForFinal } from './helpers.ts';
import { FAKE_KEYS, startChannelApp } from './providers-kit.ts';

let tripo: TripoFake;
let host: FakeServer;
let t: TestApp;
let account: TestAccount;
/** How often each picture of the flaky host was asked for. */
const asked = new Map<string, number>();

before(async () => {
  tripo = await TripoFake.start({ apiKeys: [FAKE_KEYS.TRIPO_API_KEY], queuedMs: 50, runningMs: 100 });
  t = await startChannelApp(
    [
      {
        name: 'tripo-main',
        provider: 'tripo',
        models: ['model-3d'],
        base_url: tripo.baseUrl,
        api_key_env: 'TRIPO_API_KEY',
      },
    ],
    { worker: false },
  );
  const png = await readFile(await makePng(t.dir, 64, 64));
  // Each picture answers once (the acceptance probe), then 500 for good.
  host = await startFakeServer((request) => {
    const times = (asked.get(request.path) ?? 0) + 1;
    asked.set(request.path, times);
    return times === 1
      ? { status: 200, body: png, headers: { 'content-type': 'image/png' } }
      : { status: 500, body: 'broken' };
  });
  account = await t.account({ balanceMinor: 10_000_000 });
});

after(async () => {
  await t.close();
  await Promise.all([tripo.close(), host.close()]);
});

test('flaky caller links fail their tasks with input_unavailable; the channel stays closed and uncounted', async () => {
  const ids: string[] = [];
  // More tasks than the 5 transient failures in a row that open a channel.
  for (let i = 0; i < 6; i++) {
    const created = await t.call(account.key, 'POST', '/v1/tasks', {
      model: 'model-3d',
      settings: { task_type: 'image_to_model', image_url: [`${host.url}/photo-${i}.png`], texture: false },
    });
    assert.equal(created.statusCode, 202, created.body);
    ids.push(created.json().id as string);
  }
  t.container.worker.start();
  for (const id of ids) {
    const task = await waitForFinal(t, account.key, id, 30_000);
    assert.equal(task.status, 'failed', JSON.stringify(task));
    assert.equal((task['error'] as { code: string }).code, 'input_unavailable');
    const entries = await t.container.db.db
      .selectFrom('ledger_entries')
      .select('type')
      .where('task_id', '=', id)
      .execute();
    assert.deepEqual(
      entries.map((e) => e.type).sort(),
      ['hold', 'void'],
      'held once, voided, never captured',
    );
  }
  assert.equal((await balances(t, account.id)).available_minor, 10_000_000);
  assert.equal(tripo.calls.length, 0, 'nothing reached Tripo');
  const channels = (await t.admin('GET', '/admin/v1/channels')).json().channels as Record<string, unknown>[];
  assert.deepEqual(
    channels.map((c) => [c['name'], c['state'], c['failed'], c['last_error']]),
    [['tripo-main', 'closed', 0, null]],
  );
});

test('the channel still runs the next task, whose picture can be read', async () => {
  const created = await t.call(account.key, 'POST', '/v1/tasks', {
    model: 'model-3d',
    settings: { task_type: 'image_to_model', image_url: [`${host.url}/fresh.png`], texture: false },
  });
  assert.equal(created.statusCode, 202, created.body);
  // The link answers once more, for the run this time.
  asked.set('/fresh.png', 0);
  const task = await waitForFinal(t, account.key, created.json().id as string, 30_000);
  assert.equal(task.status, 'succeeded', JSON.stringify(task));
});

test('our own storage failing while a run reads an upload is ours: the run resumes, the channel counts nothing', async () => {
  const png = await readFile(await makePng(t.dir, 48, 48));
  const uploaded = await t.call(account.key, 'POST', '/v1/files?filename=own.png', png, {
    'content-type': 'image/png',
  });
  assert.equal(uploaded.statusCode, 201, uploaded.body);
  const storageKey = (
    await t.container.db.db
      .selectFrom('uploads')
      .select('storage_key')
      .where('id', '=', uploaded.json().id as string)
      .executeTakeFirstOrThrow()
  ).storage_key;
  // The upload's first two reads fail as an unreachable object store would.
  const storage = t.container.storage;
  const get = storage.get.bind(storage);
  let refusals = 2;
  storage.get = async (key, ...rest) => {
    if (key === storageKey && refusals > 0) {
      refusals -= 1;
      throw new StorageError('the object store did not answer');
    }
    return get(key, ...rest);
  };
  try {
    const created = await t.call(account.key, 'POST', '/v1/tasks', {
      model: 'model-3d',
      settings: { task_type: 'image_to_model', image_url: [uploaded.json().url as string], texture: false },
    });
    assert.equal(created.statusCode, 202, created.body);
    const task = await waitForFinal(t, account.key, created.json().id as string, 60_000);
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    assert.equal(refusals, 0, 'the store refused twice before the run read the upload');
  } finally {
    storage.get = get;
  }
  const channels = (await t.admin('GET', '/admin/v1/channels')).json().channels as Record<string, unknown>[];
  assert.deepEqual(
    channels.map((c) => [c['name'], c['state'], c['failed']]),
    [['tripo-main', 'closed', 0]],
  );
});
