/**
 * A run whose create refuses it before any call reaches the provider (here Suno's replace_upload of a
 * track Suno never made, PROVIDERS.md §2) fails its task, but says nothing of the channel: it is neither
 * a failure nor the working answer that closes a half-open circuit (CONTRACT §11: the trial run that
 * closes or reopens a channel is one the provider answered).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { makeMp3 } from '../src/media/fixtures.ts';
import { SunoFake } from './fakes/suno.ts';
import { balances, type TestAccount, type TestApp, waitForFinal } from './helpers.ts';
import { FAKE_KEYS, startChannelApp } from './providers-kit.ts';

let suno: SunoFake;
let t: TestApp;
let account: TestAccount;

before(async () => {
  suno = await new SunoFake({ apiKey: FAKE_KEYS.SUNO_API_KEY, stepMs: 50 }).start();
  t = await startChannelApp(
    [
      {
        name: 'suno-main',
        provider: 'suno',
        models: ['music'],
        base_url: suno.url,
        api_key_env: 'SUNO_API_KEY',
      },
    ],
    { worker: false },
  );
  account = await t.account({ balanceMinor: 10_000_000 });
});

after(async () => {
  await t.close();
  await suno.close();
});

test('a refusal before any call neither counts against the channel nor closes its open circuit', async () => {
  const mp3 = await readFile(await makeMp3(t.dir, 30));
  const uploaded = await t.call(account.key, 'POST', '/v1/files?filename=own.mp3', mp3, {
    'content-type': 'audio/mpeg',
  });
  assert.equal(uploaded.statusCode, 201, uploaded.body);
  // The channel's circuit opened a while ago: the next run on it is its trial.
  await t.container.db.db
    .updateTable('channel_states')
    .set({ circuit: 'open', consecutive_failures: 5, opened_at: new Date(Date.now() - 60_000).toISOString() })
    .where('name', '=', 'suno-main')
    .execute();
  const created = await t.call(account.key, 'POST', '/v1/tasks', {
    model: 'music',
    settings: {
      mode: 'replace_upload',
      audio: [uploaded.json().url as string],
      infillStartS: 1,
      infillEndS: 12,
      prompt: 'la la',
      fullLyrics: 'la la la',
      tags: 'pop',
      title: 'Own',
    },
  });
  assert.equal(created.statusCode, 202, created.body);
  t.container.worker.start();
  const task = await waitForFinal(t, account.key, created.json().id as string, 30_000);
  assert.equal(task.status, 'failed', JSON.stringify(task));
  assert.equal((task['error'] as { code: string }).code, 'generation_failed');
  assert.equal((await balances(t, account.id)).available_minor, 10_000_000);
  assert.equal(suno.calls.length, 0, 'nothing reached Suno');
  const channels = (await t.admin('GET', '/admin/v1/channels')).json().channels as Record<string, unknown>[];
  assert.deepEqual(
    channels.map((c) => [c['name'], c['state'], c['failed']]),
    [['suno-main', 'half_open', 0]],
    'the trial was no answer of the provider: the circuit is not closed by it, nor a failure counted',
  );
});
