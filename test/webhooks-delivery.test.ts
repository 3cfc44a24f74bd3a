/**
 * Webhook deliveries on real receivers (CONTRACT §12): signatures verified with the `standardwebhooks`
 * package, task events with the task as GET answers it, retries under one webhook-id, the schedule used
 * up, manual retry, address rules at send time (DNS answers, redirects), and a slow receiver holding up
 * nobody. On SQLite, and on PostgreSQL + S3 with TEST_DATABASE_URL / TEST_STORAGE_URL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { emitEvent, WebhookSender } from '../src/events/index.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { startTestApp, type TestApp, waitForFinal } from './helpers.ts';
import { eventually, type Received, type Receiver, startReceiver } from './webhooks-kit.ts';

const text3d = (extra: Record<string, unknown> = {}) => ({
  model: 'model-3d',
  settings: { task_type: 'text_to_model', prompt: 'a small wooden chair' },
  ...extra,
});

type Delivery = { id: string; state: string; attempts: number; last_status_code: number | null } & Record<
  string,
  unknown
>;

async function deliveries(t: TestApp, key: string, query = ''): Promise<Delivery[]> {
  return (await t.call(key, 'GET', `/v1/webhook-deliveries${query}`)).json().deliveries;
}

/** Queues one event without a task run (the outbox as a transition calls it). */
async function queue(
  t: TestApp,
  accountId: string,
  event: { type?: 'task.succeeded' | 'library.ready'; taskId?: string; recordId?: string; own?: string } = {},
): Promise<void> {
  const { db, dialect } = t.container.db;
  await dialect.transaction(db, (tx) =>
    emitEvent(tx, {
      accountId,
      type: event.type ?? 'task.succeeded',
      ...(event.recordId ? { recordId: event.recordId } : { taskId: event.taskId ?? 'task-x' }),
      own: event.own ? { url: event.own, events: ['task.succeeded'] } : null,
      at: t.clock.now(),
      data: async () => ({ id: event.taskId ?? event.recordId ?? 'task-x', note: 'frozen body' }),
    }),
  );
}

function headersOf(r: Received): {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
} {
  return {
    'webhook-id': r.headers['webhook-id'] as string,
    'webhook-timestamp': r.headers['webhook-timestamp'] as string,
    'webhook-signature': r.headers['webhook-signature'] as string,
  };
}

describe('webhook deliveries', () => {
  let t: TestApp;
  const receivers: Receiver[] = [];
  const receiver = async (...args: Parameters<typeof startReceiver>): Promise<Receiver> => {
    const r = await startReceiver(...args);
    receivers.push(r);
    return r;
  };
  before(async () => {
    t = await startTestApp({
      env: { FETCH_ALLOW_ADDRESSES: '127.0.0.1', WEBHOOK_RETRY_SCHEDULE: '100ms,200ms' },
    });
    t.container.webhookSender.start();
  });
  after(async () => {
    await t.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  test("a task's own webhook_url: task.started and task.succeeded, signed with the default secret, data = GET", async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const hook = await receiver();
    const secret = (await t.call(acct.key, 'GET', '/v1/webhooks/default/secret')).json().secret;
    const created = await t.call(
      acct.key,
      'POST',
      '/v1/tasks',
      text3d({ webhook_url: hook.url, webhook_events: ['task.started', 'task.progress', 'task.succeeded'] }),
    );
    assert.equal(created.statusCode, 202, created.body);
    const id = created.json().id;
    assert.equal((await waitForFinal(t, acct.key, id)).status, 'succeeded');
    const got = await eventually(
      async () => hook.received,
      (r) => r.some((x) => JSON.parse(x.body).type === 'task.succeeded'),
    );
    const verifier = new Webhook(secret);
    for (const r of got) {
      verifier.verify(r.body, headersOf(r));
      assert.equal(r.headers['content-type'], 'application/json');
      assert.match(r.headers['user-agent'] as string, /generation-task-api/);
      assert.ok(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
    }
    const types = got.map((r) => JSON.parse(r.body).type as string);
    assert.equal(types[0], 'task.started');
    assert.equal(types.at(-1), 'task.succeeded');
    assert.ok(types.every((type) => ['task.started', 'task.progress', 'task.succeeded'].includes(type)));
    const last = JSON.parse(got.at(-1)!.body);
    assert.deepEqual(Object.keys(last).sort(), ['data', 'timestamp', 'type']);
    assert.match(last.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(last.data, (await t.call(acct.key, 'GET', `/v1/tasks/${id}`)).json());
    assert.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, got.length, 'one id per event');
    const log = await eventually(
      () => deliveries(t, acct.key, `?task_id=${id}`),
      (d) => d.length === got.length && d.every((x) => x.state === 'succeeded'),
    );
    for (const d of log) {
      assert.equal(d.webhook_id, null);
      assert.equal(d.url, hook.url);
      assert.equal(d.attempts, 1);
      assert.equal(d.last_status_code, 200);
    }
  });

  test('without webhook_events a task sends only its final event', async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const hook = await receiver();
    const id = (await t.call(acct.key, 'POST', '/v1/tasks', text3d({ webhook_url: hook.url }))).json().id;
    await waitForFinal(t, acct.key, id);
    const [only] = await hook.waitFor(1);
    assert.equal(JSON.parse(only!.body).type, 'task.succeeded');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(hook.received.length, 1);
  });

  test('an account endpoint gets the events it chose, signed with its own secret', async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const hook = await receiver();
    const endpoint = (
      await t.call(acct.key, 'POST', '/v1/webhooks', { url: hook.url, events: ['task.succeeded'] })
    ).json();
    const id = (await t.call(acct.key, 'POST', '/v1/tasks', text3d())).json().id;
    await waitForFinal(t, acct.key, id);
    const [r] = await hook.waitFor(1);
    const payload = new Webhook(endpoint.secret).verify(r!.body, headersOf(r!)) as {
      type: string;
      data: unknown;
    };
    assert.equal(payload.type, 'task.succeeded');
    assert.deepEqual(payload.data, (await t.call(acct.key, 'GET', `/v1/tasks/${id}`)).json());
    const defaultSecret = (await t.call(acct.key, 'GET', '/v1/webhooks/default/secret')).json().secret;
    assert.throws(() => new Webhook(defaultSecret).verify(r!.body, headersOf(r!)), 'not the default secret');
    const [d] = await eventually(
      () => deliveries(t, acct.key, `?webhook_id=${endpoint.id}`),
      (list) => list[0]?.state === 'succeeded',
    );
    assert.equal(d!.task_id, id);
    assert.equal(d!.id, r!.headers['webhook-id']);
  });

  test('500 then 200: two attempts with the same webhook-id and the same body', async () => {
    const acct = await t.account();
    const hook = await receiver((_r, i) => ({ status: i === 0 ? 500 : 200 }));
    const endpoint = (
      await t.call(acct.key, 'POST', '/v1/webhooks', { url: hook.url, events: ['task.succeeded'] })
    ).json();
    await queue(t, acct.id);
    const [first, second] = await hook.waitFor(2);
    assert.equal(first!.headers['webhook-id'], second!.headers['webhook-id']);
    assert.equal(first!.body, second!.body);
    const verifier = new Webhook(endpoint.secret);
    verifier.verify(first!.body, headersOf(first!));
    verifier.verify(second!.body, headersOf(second!));
    const [d] = await eventually(
      () => deliveries(t, acct.key),
      (list) => list[0]?.state === 'succeeded',
    );
    assert.equal(d!.attempts, 2);
    assert.equal(d!.last_status_code, 200);
    assert.equal(d!.last_error, null);
  });

  test('schedule used up → failed; manual retry sends the same id and body again → succeeded', async () => {
    const acct = await t.account();
    let answer = 503;
    const hook = await receiver(() => ({ status: answer }));
    await t.call(acct.key, 'POST', '/v1/webhooks', { url: hook.url, events: ['task.succeeded'] });
    await queue(t, acct.id);
    const [d] = await eventually(
      () => deliveries(t, acct.key),
      (list) => list[0]?.state === 'failed',
    );
    assert.equal(d!.attempts, 3, 'the first attempt and one per step of 100ms,200ms');
    assert.equal(d!.last_status_code, 503);
    assert.equal(d!.last_error, 'status 503');
    assert.equal(d!.next_attempt_at, null);
    assert.equal(hook.received.length, 3);
    answer = 200;
    const retried = await t.call(acct.key, 'POST', `/v1/webhook-deliveries/${d!.id}/retry`);
    assert.equal(retried.statusCode, 202, retried.body);
    assert.equal(retried.json().id, d!.id);
    assert.equal(retried.json().state, 'pending');
    const [after] = await eventually(
      () => deliveries(t, acct.key),
      (list) => list[0]?.state === 'succeeded',
    );
    assert.equal(after!.attempts, 4);
    assert.equal(hook.received.length, 4);
    assert.equal(hook.received[3]!.headers['webhook-id'], d!.id);
    assert.equal(hook.received[3]!.body, hook.received[0]!.body);
  });

  test('a manual retry during the last attempt is not lost when that attempt fails: it is sent again', async () => {
    const acct = await t.account();
    // The third attempt (the schedule's last) is answered 503 only after a second, 200 after it.
    const hook = await receiver((_r, index) =>
      index < 2 ? { status: 503 } : index === 2 ? { status: 503, delayMs: 1_000 } : { status: 200 },
    );
    await t.call(acct.key, 'POST', '/v1/webhooks', { url: hook.url, events: ['task.succeeded'] });
    await queue(t, acct.id);
    await hook.waitFor(3);
    const [inFlight] = await deliveries(t, acct.key);
    const retried = await t.call(acct.key, 'POST', `/v1/webhook-deliveries/${inFlight!.id}/retry`);
    assert.equal(retried.statusCode, 202, retried.body);
    assert.equal(retried.json().state, 'pending');
    const [d] = await eventually(
      () => deliveries(t, acct.key),
      (list) => list[0]?.state !== 'pending',
    );
    assert.equal(d!.state, 'succeeded', JSON.stringify(d));
    assert.equal(d!.attempts, 4);
    assert.equal(hook.received.length, 4);
  });

  test('a redirect is not followed: recorded with its status, nothing reaches its target', async () => {
    const acct = await t.account();
    const target = await receiver();
    const hook = await receiver(() => ({ status: 302, headers: { location: target.url } }));
    await t.call(acct.key, 'POST', '/v1/webhooks', { url: hook.url, events: ['task.succeeded'] });
    await queue(t, acct.id);
    const [d] = await eventually(
      () => deliveries(t, acct.key),
      (list) => list[0]?.state === 'failed',
    );
    assert.equal(d!.last_status_code, 302);
    assert.equal(d!.last_error, 'redirect 302 not followed');
    assert.equal(hook.received.length, 3);
    assert.equal(target.received.length, 0);
  });

  test('a receiver that never answers delays neither another receiver nor the task', async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const slow = await receiver(() => 'hang');
    const fast = await receiver();
    await t.call(acct.key, 'POST', '/v1/webhooks', {
      url: slow.url,
      events: ['task.started', 'task.succeeded'],
    });
    const fastHook = (
      await t.call(acct.key, 'POST', '/v1/webhooks', {
        url: fast.url,
        events: ['task.started', 'task.succeeded'],
      })
    ).json();
    const id = (await t.call(acct.key, 'POST', '/v1/tasks', text3d())).json().id;
    await fast.waitFor(2);
    // The slow receiver's first attempt is still open (10 s), yet the task ended and the fast one has both.
    assert.equal((await waitForFinal(t, acct.key, id)).status, 'succeeded');
    const log = await deliveries(t, acct.key, `?task_id=${id}`);
    const slowOnes = log.filter((d) => d.webhook_id !== fastHook.id);
    assert.equal(slowOnes.length, 2);
    assert.ok(
      slowOnes.every((d) => d.state === 'pending' && d.attempts === 0),
      JSON.stringify(slowOnes),
    );
    assert.equal(
      slow.received.length,
      1,
      'its later event waits behind the first (order per task and receiver)',
    );
  });

  test('a library event: delivered with its record, no task', async () => {
    const acct = await t.account();
    const hook = await receiver();
    const endpoint = (
      await t.call(acct.key, 'POST', '/v1/webhooks', { url: hook.url, events: ['library.ready'] })
    ).json();
    await queue(t, acct.id, { type: 'library.ready', recordId: 'rec-1' });
    const [r] = await hook.waitFor(1);
    assert.equal(
      (new Webhook(endpoint.secret).verify(r!.body, headersOf(r!)) as { type: string }).type,
      'library.ready',
    );
    const [d] = await eventually(
      () => deliveries(t, acct.key),
      (list) => list[0]?.state === 'succeeded',
    );
    assert.equal(d!.record_id, 'rec-1');
    assert.equal(d!.task_id, null);
  });

  /**
   * Stops the sender while the delivery of one event to a receiver answering `answer` is in flight; the
   * delivery as the stop left it, the sender started again.
   */
  async function stopInFlight(answer: Parameters<typeof startReceiver>[0], taskId: string) {
    const acct = await t.account();
    const hook = await receiver(answer);
    await queue(t, acct.id, { own: hook.url, taskId });
    await hook.waitFor(1);
    try {
      await t.container.webhookSender.stop();
      const [delivery] = await deliveries(t, acct.key, `?task_id=${taskId}`);
      return { acct, hook, delivery };
    } finally {
      t.container.webhookSender.start();
    }
  }

  test('a stop lets an attempt in flight be answered and recorded: it is not sent again', async () => {
    const { hook, delivery: d } = await stopInFlight(
      () => ({ status: 200, delayMs: 300 }),
      'task-stopped-answered',
    );
    assert.equal(d?.state, 'succeeded');
    assert.equal(d?.attempts, 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(hook.received.length, 1);
  });

  test('a stop gives back uncounted an attempt still unanswered after its grace: it is sent again', async () => {
    const {
      acct,
      hook,
      delivery: stopped,
    } = await stopInFlight(
      (_request, index) => (index === 0 ? 'hang' : { status: 200 }),
      'task-stopped-hanging',
    );
    assert.equal(stopped?.state, 'pending');
    assert.equal(stopped?.attempts, 0);
    const [first, second] = await hook.waitFor(2);
    assert.equal(second?.headers['webhook-id'], first?.headers['webhook-id']);
    const [d] = await eventually(
      () => deliveries(t, acct.key, '?task_id=task-stopped-hanging'),
      (list) => list[0]?.state === 'succeeded',
    );
    assert.equal(d?.attempts, 1);
  });

  test('a name whose DNS answers include a private address is refused at send time', async () => {
    const acct = await t.account();
    const hook = await receiver();
    const url = `http://hooks.example.test:${hook.port}/hook`;
    // A sender of its own, with no test exception and a lookup answering a public and a private address.
    await t.container.webhookSender.stop();
    // Queued directly: at creation the name would have been checked with the real DNS.
    await queue(t, acct.id, { own: url });
    await queue(t, acct.id, { own: url, taskId: 'task-y' });
    const sender = new WebhookSender(
      {
        db: t.container.db,
        clock: t.clock,
        log: t.container.log,
        retryScheduleMs: [],
        defaultSecret: (id) => t.container.services.webhooks.defaultSecret(id),
        allowAddresses: [],
      },
      {
        lookup: async () => [
          { address: '93.184.216.34', family: 4 },
          { address: '127.0.0.1', family: 4 },
        ],
      },
    );
    try {
      sender.start();
      const log = await eventually(
        () => deliveries(t, acct.key),
        (list) => list.length === 2 && list.every((d) => d.state === 'failed'),
      );
      for (const d of log) {
        assert.equal(d.last_error, 'address not public');
        assert.equal(d.last_status_code, null);
      }
      assert.equal(hook.received.length, 0);
    } finally {
      await sender.stop();
      t.container.webhookSender.start();
    }
  });
});

describe('secret rotation: both secrets sign for 24 h, then only the new one', () => {
  let t: TestApp;
  let hook: Receiver;
  const clock = new ManualClock(new Date());
  before(async () => {
    t = await startTestApp({ clock, worker: false, env: { FETCH_ALLOW_ADDRESSES: '127.0.0.1' } });
    t.container.webhookSender.start();
    hook = await startReceiver();
  });
  after(async () => {
    await t.close();
    await hook.close();
  });

  test('rotate-secret → 200 { secret }; during the overlap each secret verifies; after it only the new', async () => {
    const acct = await t.account();
    const endpoint = (
      await t.call(acct.key, 'POST', '/v1/webhooks', { url: hook.url, events: ['task.succeeded'] })
    ).json();
    const rotated = await t.call(acct.key, 'POST', `/v1/webhooks/${endpoint.id}/rotate-secret`);
    assert.equal(rotated.statusCode, 200, rotated.body);
    const fresh = rotated.json().secret as string;
    assert.match(fresh, /^whsec_/);
    assert.notEqual(fresh, endpoint.secret);
    await queue(t, acct.id);
    const [during] = await hook.waitFor(1);
    assert.equal(during!.headers['webhook-signature']!.split(' ').length, 2);
    new Webhook(fresh).verify(during!.body, headersOf(during!));
    new Webhook(endpoint.secret).verify(during!.body, headersOf(during!));

    clock.advance(24 * 60 * 60 * 1000 + 1000);
    await queue(t, acct.id);
    const [, later] = await hook.waitFor(2);
    const h = headersOf(later!);
    const signedAt = new Date(Number(h['webhook-timestamp']) * 1000);
    // The clock moved a day: the package's 5-minute tolerance would refuse the time, so compare signatures.
    assert.equal(h['webhook-signature'], new Webhook(fresh).sign(h['webhook-id'], signedAt, later!.body));
    assert.notEqual(
      h['webhook-signature'],
      new Webhook(endpoint.secret).sign(h['webhook-id'], signedAt, later!.body),
    );
  });
});
