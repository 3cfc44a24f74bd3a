/**
 * What goes wrong at a provider, end to end over HTTP through the Tripo fake (issue 12, "Bad input and
 * faults"): 4xx refusals, 5xx, a call that hangs, status reads that never answer until the channel's
 * timeout, garbage and answers without their fields, failed and banned tasks, outputs that are not the
 * promised type, lack the model or are too big. Each ends in a clear task state (retried to success, or
 * failed with generation_failed, content_refused or timeout and the hold voided), never a 500 to the
 * client and never a task left running; the test app's close() checks the ledger. Expired output links
 * and callbacks with a wrong token or for a finished run are in providers-e2e.test.ts.
 *
 * The cases run one after another (the fake's faults strike its next requests, whoever sends them), and
 * a case that fails four times in a row is followed by one that succeeds, so the single channel never
 * sees the five transient failures in a row that would open it. Tripo asks to be read every 5 s; the
 * channel here reads every 100 ms so the retries stay quick.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Adapter, type AdapterDeps, createTripoAdapter } from '../src/generators/adapters/index.ts';
import { TripoFake, type TripoFault, type TripoOutcome } from './fakes/tripo.ts';
import type { OutputFault } from './fakes/tripo-outputs.ts';
import { type TestAccount, type TestApp, waitForFinal } from './helpers.ts';
import { assertCapturedOnce, FAKE_KEYS, startChannelApp } from './providers-kit.ts';

const FAST_POLL_MS = 100;

interface TaskError {
  code: string;
  message: string;
}
/** The channel's key here: as long as a real one, so that the process keeps it among its secrets. */
const LONG_KEY = 'tsk_faults_0123456789abcdef';

interface FaultCase {
  name: string;
  /** Arms the fake before the task is created. */
  arm(fake: TripoFake): void;
  /** How the task ends. */
  expect: { status: 'succeeded' } | { status: 'failed'; code: 'generation_failed' | 'content_refused' };
  /** Tasks created at Tripo for it (one per attempt that reached it). */
  creates: number;
}

const refusal = (status: number, code: number, message: string): TripoFault => ({
  kind: 'error',
  status,
  code,
  message,
});
const onCreate =
  (fault: TripoFault, times = 1) =>
  (fake: TripoFake): void =>
    fake.inject('create', fault, times);
const ending =
  (outcome: TripoOutcome, options: { errorCode?: number; outputFault?: OutputFault } = {}) =>
  (fake: TripoFake): void =>
    fake.nextTasks(outcome, options);

const failed = (code: 'generation_failed' | 'content_refused') => ({ status: 'failed' as const, code });
const succeeded = { status: 'succeeded' as const };

/** In order: never five transient failures in a row (see above). */
const CASES: FaultCase[] = [
  {
    name: 'a 400 refusal (code 1004) fails at once',
    arm: onCreate(refusal(400, 1004, 'face_limit must be 1000 to 20000')),
    expect: failed('generation_failed'),
    creates: 1,
  },
  {
    name: 'a 400 content refusal (code 2008) is content_refused',
    arm: onCreate(refusal(400, 2008, 'prompt violates policy')),
    expect: failed('content_refused'),
    creates: 1,
  },
  {
    name: 'a task that ends failed (code 2002) fails',
    arm: ending('failed', { errorCode: 2002 }),
    expect: failed('generation_failed'),
    creates: 1,
  },
  {
    name: 'a banned task is content_refused',
    arm: ending('banned'),
    expect: failed('content_refused'),
    creates: 1,
  },
  {
    name: 'one 500 is retried and the task succeeds',
    arm: onCreate(refusal(500, 1001, 'server error')),
    expect: succeeded,
    creates: 2,
  },
  {
    name: 'a 500 on every attempt fails after four',
    arm: onCreate(refusal(500, 1001, 'server error'), 4),
    expect: failed('generation_failed'),
    creates: 4,
  },
  {
    name: 'a status read that is not JSON is read again; the task succeeds',
    arm: (fake) => fake.inject('status', { kind: 'garbage' }),
    expect: succeeded,
    creates: 1,
  },
  {
    name: 'a creation answered without its data is retried; the task succeeds',
    arm: onCreate({ kind: 'no_data' }),
    expect: succeeded,
    creates: 2,
  },
  {
    name: 'a creation that is never answered times out and is retried; the task succeeds',
    arm: onCreate({ kind: 'hang' }),
    expect: succeeded,
    creates: 2,
  },
  {
    name: 'a model file that is a PNG (not the promised GLB) fails',
    arm: ending('success', { outputFault: 'wrong_type' }),
    expect: failed('generation_failed'),
    creates: 1,
  },
  {
    name: 'a finished task without a model file fails',
    arm: ending('success', { outputFault: 'no_model' }),
    expect: failed('generation_failed'),
    creates: 1,
  },
  {
    // The same upstream task would give the same file again: no retry, and no second creation.
    name: 'a model file over the size cap fails at once',
    arm: ending('success', { outputFault: 'too_big' }),
    expect: failed('generation_failed'),
    creates: 1,
  },
];

/** The Tripo adapter, read again every 100 ms instead of 5 s while its task runs. */
function fastPolling(deps: AdapterDeps): Adapter {
  const adapter = createTripoAdapter(deps);
  return {
    ensureAvailable: (...args) => adapter.ensureAvailable(...args),
    create: (...args) => adapter.create(...args),
    find: (...args) => adapter.find(...args),
    status: async (...args) => {
      const status = await adapter.status(...args);
      return status.state === 'running' ? { ...status, pollAfterMs: FAST_POLL_MS } : status;
    },
    outputs: (...args) => adapter.outputs(...args),
    cancel: (...args) => adapter.cancel(...args),
  };
}

/** Money of a failed task: held once, the hold voided, nothing captured. */
async function assertVoided(t: TestApp, id: string): Promise<void> {
  const entries = await t.container.db.db
    .selectFrom('ledger_entries')
    .select('type')
    .where('task_id', '=', id)
    .execute();
  assert.deepEqual(entries.map((e) => e.type).sort(), ['hold', 'void'], 'hold voided');
  const transfer = await t.container.db.db
    .selectFrom('transfers')
    .select('status')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  assert.equal(transfer.status, 'voided');
  // Nothing of it is left to run.
  const jobs = await t.container.db.db.selectFrom('jobs').select('id').where('task_id', '=', id).execute();
  assert.deepEqual(jobs, []);
}

describe('provider faults end to end over HTTP (Tripo fake)', () => {
  let tripo: TripoFake;
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    tripo = await TripoFake.start({
      apiKeys: [LONG_KEY],
      queuedMs: 50,
      runningMs: 150,
      outputTtlMs: 5_000,
      bigBytes: 2 * 1024 * 1024,
    });
    t = await startChannelApp(
      [
        {
          name: 'tripo-faults',
          provider: 'tripo',
          models: ['model-3d'],
          base_url: tripo.baseUrl,
          api_key_env: 'TRIPO_API_KEY',
        },
      ],
      {
        // Outputs over 1 MiB are too big, and a call unanswered for a second has timed out.
        adapterLimits: { maxOutputBytes: 1024 * 1024, callTimeoutMs: 1_000 },
        adapters: { tripo: fastPolling },
        env: { TRIPO_API_KEY: LONG_KEY },
      },
    );
    account = await t.account({ balanceMinor: 100_000_000 });
  });
  after(async () => {
    await t.close();
    await tripo.close();
  });

  for (const [i, c] of CASES.entries())
    test(c.name, async () => {
      const createsBefore = tripo.callsTo('POST', '/task').length;
      c.arm(tripo);
      const created = await t.call(account.key, 'POST', '/v1/tasks', {
        model: 'model-3d',
        settings: { task_type: 'text_to_model', prompt: `fault case ${i}: a small stool` },
      });
      assert.equal(created.statusCode, 202, created.body);
      const id = created.json().id as string;
      const task = await waitForFinal(t, account.key, id, 60_000);
      assert.equal(task.status, c.expect.status, JSON.stringify(task));
      if (c.expect.status === 'failed')
        assert.equal((task['error'] as { code: string }).code, c.expect.code, JSON.stringify(task));
      assert.equal(tripo.callsTo('POST', '/task').length - createsBefore, c.creates, 'creations at Tripo');
      // Readable by the client, alone and in the list: never a 500.
      const read = await t.call(account.key, 'GET', `/v1/tasks/${id}`);
      assert.equal(read.statusCode, 200, read.body);
      const listed = await t.call(account.key, 'GET', '/v1/tasks?limit=100');
      assert.equal(listed.statusCode, 200, listed.body);
      if (c.expect.status === 'succeeded') {
        await assertCapturedOnce(t.container, id);
        return;
      }
      await assertVoided(t, id);
    });

  /** A task whose creation at Tripo is refused (400, code 1004) with `reason`, once it is final. */
  async function refusedTask(reason: string, prompt: string): Promise<{ id: string; error: TaskError }> {
    tripo.inject('create', refusal(400, 1004, reason));
    const created = await t.call(account.key, 'POST', '/v1/tasks', {
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt },
    });
    assert.equal(created.statusCode, 202, created.body);
    const id = created.json().id as string;
    const task = await waitForFinal(t, account.key, id, 60_000);
    return { id, error: task['error'] as TaskError };
  }

  test("a final refusal's message quotes the provider's reason, in either language (CONTRACT §11)", async () => {
    const { id, error } = await refusedTask(
      'face_limit must be 1000 to 20000',
      'a stool with a bad face limit',
    );
    assert.equal(error.code, 'generation_failed');
    assert.match(error.message, /^The generator could not produce a result\./);
    assert.match(error.message, /face_limit must be 1000 to 20000/);
    const ru = await t.call(account.key, 'GET', `/v1/tasks/${id}?lang=ru`);
    const ruError = ru.json().error as { message: string };
    assert.match(ruError.message, /^Генератор не смог получить результат\./);
    assert.match(ruError.message, /face_limit must be 1000 to 20000/);
  });

  test("a provider's error that quotes our key shows it nowhere: the task, the channel's last error", async () => {
    // A refusal whose text carries the request's key, as a provider quoting what it got would send.
    const { id, error } = await refusedTask(
      `bad face_limit in {"key":"${LONG_KEY}"}`,
      'a stool quoting the key',
    );
    const message = error.message;
    assert.match(message, /bad face_limit/);
    assert.ok(!message.includes(LONG_KEY), message);
    const stored = await t.container.db.db
      .selectFrom('tasks')
      .select('error_message')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.ok(!String(stored.error_message).includes(LONG_KEY), 'nor kept in the database');
    const channels = (await t.admin('GET', '/admin/v1/channels')).json().channels as Array<{
      last_error: string | null;
    }>;
    assert.match(String(channels[0]?.last_error), /bad face_limit/);
    assert.ok(!String(channels[0]?.last_error).includes(LONG_KEY), String(channels[0]?.last_error));
  });
});

describe('a provider whose status reads never answer (Tripo fake)', () => {
  let tripo: TripoFake;
  let t: TestApp;

  before(async () => {
    tripo = await TripoFake.start({ apiKeys: [FAKE_KEYS.TRIPO_API_KEY], queuedMs: 50, runningMs: 150 });
    t = await startChannelApp(
      [
        {
          name: 'tripo-slow',
          provider: 'tripo',
          models: ['model-3d'],
          base_url: tripo.baseUrl,
          api_key_env: 'TRIPO_API_KEY',
          timeout: '4s',
        },
      ],
      { adapterLimits: { callTimeoutMs: 500 }, adapters: { tripo: fastPolling } },
    );
  });
  after(async () => {
    await t.close();
    await tripo.close();
  });

  test('each read times out and is asked again until the channel timeout: the task fails with timeout', async () => {
    tripo.inject('status', { kind: 'hang' }, 1_000);
    const account = await t.account({ balanceMinor: 100_000 });
    const created = await t.call(account.key, 'POST', '/v1/tasks', {
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt: 'a stool nobody reports on' },
    });
    assert.equal(created.statusCode, 202, created.body);
    const id = created.json().id as string;
    const task = await waitForFinal(t, account.key, id, 60_000);
    assert.equal(task.status, 'failed', JSON.stringify(task));
    assert.equal((task['error'] as { code: string }).code, 'timeout', JSON.stringify(task));
    // One upstream task, read (and timed out) more than once: polling is not an attempt.
    assert.equal(tripo.callsTo('POST', '/task').length, 1);
    assert.ok(tripo.callsTo('GET', '').filter((c) => c.path.includes('/task/')).length >= 2);
    assert.equal((await t.call(account.key, 'GET', `/v1/tasks/${id}`)).statusCode, 200);
    await assertVoided(t, id);
  });
});
