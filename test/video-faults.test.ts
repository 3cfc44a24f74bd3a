/**
 * Seedance and Kling faults with two channels each (CONTRACT §11 "Transient upstream failures", "no
 * credit"): a 429 storm on the first channel sends each run on to the second and five in a row open the
 * first; a channel whose account has no credit is disabled and the run moves on; a storm on a channel with
 * no other one fails the task after its retries with the hold voided.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { makePng } from '../src/media/fixtures.ts';
import { type KlingFake, startKlingFake } from './fakes/kling.ts';
import { type SeedanceFake, startSeedanceFake } from './fakes/seedance.ts';
import { type TestAccount, type TestApp, waitForFinal } from './helpers.ts';
import { assertCapturedOnce, startChannelApp } from './providers-kit.ts';

const ARK = 'ark-faults';
const AK = 'kling-faults-ak';
const SK = 'kling-faults-sk';

let seedance: [SeedanceFake, SeedanceFake];
let kling: [KlingFake, KlingFake];
let t: TestApp;
let account: TestAccount;
let picture: string;

interface ChannelView {
  name: string;
  enabled: boolean;
  state: string;
  failed: number;
  last_error: string | null;
}

async function channelView(name: string): Promise<ChannelView> {
  const res = await t.admin('GET', '/admin/v1/channels');
  const found = (res.json().channels as ChannelView[]).find((c) => c.name === name);
  assert.ok(found, `channel ${name}`);
  return found;
}

async function channelOf(id: string): Promise<string | null> {
  return (await t.admin('GET', `/admin/v1/tasks/${id}/run`)).json().channel;
}

async function create(model: string, settings: Record<string, unknown>): Promise<string> {
  const res = await t.call(account.key, 'POST', '/v1/tasks', { model, settings });
  assert.equal(res.statusCode, 202, res.body);
  return res.json().id as string;
}

const posts = (fake: { calls: { method: string }[] }): number =>
  fake.calls.filter((c) => c.method === 'POST').length;

before(async () => {
  seedance = [
    await startSeedanceFake({ apiKeys: [ARK], queuedMs: 50, runningMs: 100 }),
    await startSeedanceFake({ apiKeys: [ARK], queuedMs: 50, runningMs: 100 }),
  ];
  const keys = { [AK]: SK };
  kling = [await startKlingFake({ keys, stepMs: 80 }), await startKlingFake({ keys, stepMs: 80 })];
  const seedanceChannel = (name: string, url: string, priority: number) => ({
    name,
    provider: 'seedance',
    models: ['video'],
    base_url: url,
    api_key_env: 'SEEDANCE_API_KEY',
    priority,
  });
  const klingChannel = (name: string, url: string, priority: number) => ({
    name,
    provider: 'kling',
    models: ['video-elements'],
    base_url: url,
    access_key_env: 'KLING_ACCESS_KEY',
    secret_key_env: 'KLING_SECRET_KEY',
    priority,
  });
  t = await startChannelApp(
    [
      seedanceChannel('seedance-first', seedance[0].url, 0),
      seedanceChannel('seedance-second', seedance[1].url, 1),
      klingChannel('kling-first', kling[0].url, 0),
      klingChannel('kling-second', kling[1].url, 1),
    ],
    { env: { SEEDANCE_API_KEY: ARK, KLING_ACCESS_KEY: AK, KLING_SECRET_KEY: SK } },
  );
  account = await t.account({ balanceMinor: 100_000_000 });
  const dir = await mkdtemp(join(tmpdir(), 'video-faults-'));
  const res = await t.call(
    account.key,
    'POST',
    '/v1/files?filename=p.png',
    await readFile(await makePng(dir, 320, 320)),
    {
      'content-type': 'image/png',
    },
  );
  picture = res.json().url as string;
});
after(async () => {
  await t.close();
  await Promise.all([...seedance, ...kling].map((f) => f.close()));
});

describe('Seedance', () => {
  test('a 429 storm on the first channel: each run finishes on the second; five open the first', async () => {
    seedance[0].fail('429', '429', '429', '429', '429');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(await create('video', { mode: 'frames', prompt: `storm ${i}`, image_urls: [picture] }));
    for (const id of ids) {
      const task = await waitForFinal(t, account.key, id, 90_000);
      assert.equal(task.status, 'succeeded', JSON.stringify(task));
      assert.equal(await channelOf(id), 'seedance-second');
      await assertCapturedOnce(t.container, id);
    }
    assert.equal(posts(seedance[0]), 5, 'each run was tried once on the first');
    const view = await channelView('seedance-first');
    assert.equal(view.state, 'open');
    assert.match(String(view.last_error), /429|RateLimitExceeded/);
    const next = await create('video', { mode: 'frames', prompt: 'while open', image_urls: [picture] });
    assert.equal((await waitForFinal(t, account.key, next, 90_000)).status, 'succeeded');
    assert.equal(posts(seedance[0]), 5, 'nothing reached the open channel');
  });
});

describe('Kling', () => {
  test('no credit (1102) disables the first channel; the run moves on to the second', async () => {
    kling[0].fail('no-credit');
    const id = await create('video-elements', { prompt: 'a kite with no credit' });
    const task = await waitForFinal(t, account.key, id, 90_000);
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    assert.equal(await channelOf(id), 'kling-second');
    assert.equal((await channelView('kling-first')).enabled, false);
    await assertCapturedOnce(t.container, id);
  });

  test('a 429 storm longer than the retries with no other channel usable fails the task, hold voided', async () => {
    // The first is disabled (above); the second now takes every attempt of the run.
    kling[1].fail('429', '429', '429', '429');
    const id = await create('video-elements', { prompt: 'a kite in a long storm' });
    const task = await waitForFinal(t, account.key, id, 90_000);
    assert.equal(task.status, 'failed', JSON.stringify(task));
    assert.equal((task['error'] as { code: string }).code, 'generation_failed');
    const types = (
      await t.container.db.db.selectFrom('ledger_entries').select('type').where('task_id', '=', id).execute()
    )
      .map((e) => e.type)
      .sort();
    assert.deepEqual(types, ['hold', 'void']);
  });
});
