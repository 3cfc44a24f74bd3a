/**
 * A provider's callback wakes the run sleeping between two status reads (CONTRACT §11: "a callback only
 * wakes the run up: the adapter confirms by reading the upstream task; polling goes on as a fallback").
 * The Cog channel here asks to be read again only after 60 s, so a task that finishes well before that was
 * woken by its `completed` webhook: taken by this process's API, and on PostgreSQL also by another
 * process's (a second callback store on its own connection, which only has the notification to reach the
 * worker).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createDb, type Db } from '../src/db/index.ts';
import {
  type Adapter,
  type AdapterFactory,
  createCogAdapter,
  createSunoAdapter,
} from '../src/generators/adapters/index.ts';
import { SUNO_LAG_POLL_MS } from '../src/generators/adapters/suno/index.ts';
import { CallbackStore } from '../src/generators/index.ts';
import { systemClock } from '../src/lib/clock.ts';
import { TASKS_CHANNEL } from '../src/tasks/index.ts';
import { type CogFake, startCogFake } from './fakes/cog.ts';
import { postJson } from './fakes/server.ts';
import { SunoFake } from './fakes/suno.ts';
import { type TestApp, waitForFinal } from './helpers.ts';
import { assertCapturedOnce, FAKE_KEYS, startChannelApp } from './providers-kit.ts';

/** What the adapter asks: far longer than the test waits for the task. */
const SLOW_POLL_MS = 60_000;
/** How long a task may take here: the run must not have slept a whole poll interval. */
const WAIT_MS = 30_000;

/**
 * The adapter `create` makes, asking to be read again only after 60 s while its task runs (a shorter
 * interval up to `keepUpToMs` is kept: Suno's 1 s after a final callback); `reads` counts status reads.
 */
function slowPolling(create: AdapterFactory, reads: Reads, keepUpToMs = 0): AdapterFactory {
  return (deps) => {
    const adapter = create(deps);
    const slow: Adapter = {
      ensureAvailable: (...args) => adapter.ensureAvailable(...args),
      create: (...args) => adapter.create(...args),
      find: (...args) => adapter.find(...args),
      status: async (...args) => {
        reads.count += 1;
        const status = await adapter.status(...args);
        if (status.state !== 'running' || status.pollAfterMs <= keepUpToMs) return status;
        reads.slow += 1;
        return { ...status, pollAfterMs: SLOW_POLL_MS };
      },
      outputs: (...args) => adapter.outputs(...args),
      cancel: (...args) => adapter.cancel(...args),
    };
    return slow;
  };
}

/** Status reads of a channel, and how many of them answered "read again in 60 s". */
interface Reads {
  count: number;
  slow: number;
}

interface Setup {
  t: TestApp;
  cog: CogFake;
  /** Status reads of the Cog channel. */
  reads: Reads;
}

/** The app on a Cog channel polled every 60 s; `deliver` posts the fake's webhooks. */
async function setUp(
  deliver: (app: () => TestApp, url: string, body: unknown) => Promise<unknown>,
): Promise<Setup> {
  let app: TestApp | null = null;
  const reads: Reads = { count: 0, slow: 0 };
  const cog = await startCogFake({
    runMs: 1_500,
    slots: 4,
    deliver: (url, body) => deliver(() => app as TestApp, url, body),
  });
  const t = await startChannelApp(
    [{ name: 'cog-slow', provider: 'cog', models: ['image'], base_url: cog.url }],
    {
      adapters: {
        cog: slowPolling(createCogAdapter, reads),
      },
    },
  );
  app = t;
  return { t, cog, reads };
}

async function runOne(setup: Setup): Promise<void> {
  const { t, cog, reads } = setup;
  const account = await t.account({ balanceMinor: 100_000 });
  const created = await t.call(account.key, 'POST', '/v1/tasks', {
    model: 'image',
    settings: { prompt: 'a heron at dawn' },
  });
  assert.equal(created.statusCode, 202, created.body);
  const id = created.json().id as string;
  const task = await waitForFinal(t, account.key, id, WAIT_MS);
  assert.equal(task.status, 'succeeded', JSON.stringify(task));
  // Read at the start, then on the webhooks (`start`, `completed`); on PostgreSQL a webhook taken here
  // wakes the run twice, directly and by its notification. Never a read per second or so.
  assert.ok(reads.count >= 2 && reads.count <= 5, `status reads: ${reads.count}`);
  // It went to sleep for 60 s at least once: only a callback could end that sleep in time.
  assert.ok(reads.slow >= 1, `reads answering 60 s: ${reads.slow}`);
  assert.equal(cog.submissions.length, 1);
  await assertCapturedOnce(t.container, id);
}

describe('a callback wakes the run sleeping between status reads', () => {
  describe('Suno: its callbacks make the run read record-info at once', () => {
    let suno: SunoFake;
    let t: TestApp;
    const reads: Reads = { count: 0, slow: 0 };
    before(async () => {
      suno = await new SunoFake({ apiKey: FAKE_KEYS.SUNO_API_KEY, stepMs: 500 }).start();
      t = await startChannelApp(
        [
          {
            name: 'suno-slow',
            provider: 'suno',
            models: ['music'],
            base_url: suno.url,
            api_key_env: 'SUNO_API_KEY',
          },
        ],
        { adapters: { suno: slowPolling(createSunoAdapter, reads, SUNO_LAG_POLL_MS) } },
      );
    });
    after(async () => {
      await t.close();
      await suno.close();
    });
    test('the task succeeds long before a 60 s poll, on reads its callbacks asked for', async () => {
      const account = await t.account({ balanceMinor: 1_000_000 });
      const created = await t.call(account.key, 'POST', '/v1/tasks', {
        model: 'music',
        settings: { mode: 'generate', songDescription: 'a short song that wakes its run' },
      });
      assert.equal(created.statusCode, 202, created.body);
      const id = created.json().id as string;
      const task = await waitForFinal(t, account.key, id, WAIT_MS);
      assert.equal(task.status, 'succeeded', JSON.stringify(task));
      assert.ok(suno.callbacksSent.length > 0, 'Suno posted callbacks');
      // It went to sleep for 60 s at least once: only a callback could end that sleep in time.
      assert.ok(reads.slow >= 1, `reads answering 60 s: ${reads.slow}`);
      await assertCapturedOnce(t.container, id);
    });
  });

  describe('Cog: the webhook taken by this process', () => {
    let setup: Setup;
    before(async () => {
      setup = await setUp((_app, url, body) => postJson(url, body));
    });
    after(async () => {
      await setup.t.close();
      await setup.cog.close();
    });
    test('the completed webhook makes the run read the prediction at once and succeed', () => runOne(setup));
  });

  describe('Cog: the webhook taken by another process (PostgreSQL notification)', {
    skip: !process.env.TEST_DATABASE_URL,
  }, () => {
    let setup: Setup;
    let otherDb: Db;
    before(async () => {
      let other: CallbackStore | null = null;
      setup = await setUp(async (app, url, body) => {
        if (!other) {
          otherDb = createDb(app().container.config.databaseUrl);
          other = new CallbackStore({
            db: otherDb,
            clock: systemClock,
            publicBaseUrl: app().container.config.publicBaseUrl,
            notifyChannel: TASKS_CHANNEL,
            channels: app().container.config.channels,
          });
        }
        const [, , , channel, token] = new URL(url).pathname.split('/');
        const address = await other.addressOf(String(channel), String(token));
        assert.ok(address, 'the address the adapter was handed');
        assert.equal(await other.record(address, body), 'stored');
      });
    });
    after(async () => {
      await setup.t.close();
      await setup.cog.close();
      await otherDb?.close();
    });
    test('the notification of the other process wakes the run, which succeeds', () => runOne(setup));
  });
});
