import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { errorOf, expectError, startTestApp, type TestApp, waitForFinal } from './helpers.ts';

// CONTRACT §12: POST /v1/tasks takes optional top-level webhook_url and webhook_events (default the final
// events), not part of the settings or the price but part of the idempotency comparison; a bad webhook_url
// is 422 invalid_request at creation. Every visible change of a task queues the subscribed deliveries in
// the transaction that makes it.

const body = (extra: Record<string, unknown> = {}, prompt = 'a chair') => ({
  model: 'model-3d',
  settings: { task_type: 'text_to_model', prompt },
  ...extra,
});
const HOOK = 'http://127.0.0.1:9/hook';

describe('task webhook fields (CONTRACT §12)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { FETCH_ALLOW_ADDRESSES: '127.0.0.1' } });
  });
  after(() => t.close());

  const deliveriesOf = (taskId: string) =>
    t.container.db.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('task_id', '=', taskId)
      .orderBy('id')
      .execute();

  test('bad webhook fields: 422 invalid_request naming the field, nothing held', async () => {
    const a = await t.account({ balanceMinor: 1_000_000 });
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ webhook_url: 'not a url' }, 'invalid_request', 'webhook_url'],
      [{ webhook_url: 'ftp://example.com/x' }, 'invalid_request', 'webhook_url'],
      [{ webhook_url: 'http://user:pw@example.com/x' }, 'invalid_request', 'webhook_url'],
      [{ webhook_url: 'http://10.0.0.7/hook' }, 'invalid_request', 'webhook_url'],
      [{ webhook_url: 'http://169.254.169.254/latest' }, 'invalid_request', 'webhook_url'],
      [{ webhook_url: 'http://[::1]:8080/x' }, 'invalid_request', 'webhook_url'],
      [{ webhook_url: `https://example.com/${'a'.repeat(2100)}` }, 'invalid_request', 'webhook_url'],
      [{ webhook_url: HOOK, webhook_events: ['task.exploded'] }, 'invalid_request', 'webhook_events'],
      [{ webhook_url: HOOK, webhook_events: [] }, 'invalid_request', 'webhook_events'],
      [{ webhook_url: HOOK, webhook_events: ['library.ready'] }, 'invalid_request', 'webhook_events'],
      [{ webhook_events: ['task.succeeded'] }, 'invalid_request', 'webhook_events'],
      [{ webhook_url: 42 }, 'invalid_request', 'webhook_url'],
    ];
    for (const [extra, code, field] of cases) {
      const res = await t.call(a.key, 'POST', '/v1/tasks', body(extra));
      expectError(res, 422, code);
      assert.match(errorOf(res).message, new RegExp(field), JSON.stringify(extra));
    }
    const list = (await t.call(a.key, 'GET', '/v1/tasks')).json();
    assert.deepEqual(list.tasks, [], 'no task made by a refused request');
  });

  test('the price refuses the webhook fields a creation refuses (the same body)', async () => {
    const a = await t.account({ balanceMinor: 1_000_000 });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ webhook_url: 'not a url' }, 'webhook_url'],
      [{ webhook_url: 'http://10.0.0.7/hook' }, 'webhook_url'],
      [{ webhook_events: ['task.succeeded'] }, 'webhook_events'],
    ];
    for (const [extra, field] of cases) {
      const res = await t.call(a.key, 'POST', '/v1/price', body(extra));
      expectError(res, 422, 'invalid_request');
      assert.match(errorOf(res).message, new RegExp(field), JSON.stringify(extra));
    }
    // The model is still checked first, as at creation.
    expectError(
      await t.call(a.key, 'POST', '/v1/price', { ...body({ webhook_url: 'not a url' }), model: 'nope' }),
      404,
      'model_not_found',
    );
  });

  test('the task view is unchanged; the price ignores the webhook; defaults are the final events', async () => {
    const a = await t.account({ balanceMinor: 1_000_000 });
    const plain = await t.call(a.key, 'POST', '/v1/price', body());
    const hooked = await t.call(a.key, 'POST', '/v1/price', body({ webhook_url: HOOK }));
    assert.equal(hooked.statusCode, 200, hooked.body);
    assert.equal(hooked.json().amount_minor, plain.json().amount_minor);
    const res = await t.call(a.key, 'POST', '/v1/tasks', body({ webhook_url: HOOK }));
    assert.equal(res.statusCode, 202, res.body);
    const task = res.json();
    assert.equal('webhook_url' in task, false);
    assert.equal('webhook_events' in task.settings, false);
    const row = await t.container.db.db
      .selectFrom('tasks')
      .select(['webhook_url', 'webhook_events'])
      .where('id', '=', task.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.webhook_url, HOOK);
    assert.deepEqual(JSON.parse(row.webhook_events!), ['task.succeeded', 'task.failed', 'task.canceled']);
    const final = await waitForFinal(t, a.key, task.id);
    assert.equal(final.status, 'succeeded');
    const sent = await deliveriesOf(task.id);
    assert.deepEqual(
      sent.map((d) => [d.type, d.url, d.webhook_id]),
      [['task.succeeded', HOOK, null]],
    );
    const delivered = JSON.parse(sent[0]!.body);
    assert.equal(delivered.type, 'task.succeeded');
    assert.deepEqual(delivered.data, (await t.call(a.key, 'GET', `/v1/tasks/${task.id}`)).json());
  });

  test('repeated event types count once, on a task and on an endpoint; a list past 50 items is refused', async () => {
    const a = await t.account({ balanceMinor: 1_000_000 });
    // Six items naming two types: a set of two, not a list over the five task types.
    const repeated = [
      'task.succeeded',
      'task.failed',
      'task.succeeded',
      'task.failed',
      'task.succeeded',
      'task.failed',
    ];
    const res = await t.call(
      a.key,
      'POST',
      '/v1/tasks',
      body({ webhook_url: HOOK, webhook_events: repeated }),
    );
    assert.equal(res.statusCode, 202, res.body);
    const row = await t.container.db.db
      .selectFrom('tasks')
      .select('webhook_events')
      .where('id', '=', res.json().id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(row.webhook_events!).sort(), ['task.failed', 'task.succeeded']);
    const endpoint = await t.call(a.key, 'POST', '/v1/webhooks', {
      url: HOOK,
      events: Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? 'task.succeeded' : 'library.ready')),
    });
    assert.equal(endpoint.statusCode, 201, endpoint.body);
    assert.deepEqual([...endpoint.json().events].sort(), ['library.ready', 'task.succeeded']);
    const tooMany = Array.from({ length: 51 }, () => 'task.succeeded');
    const refused = await t.call(
      a.key,
      'POST',
      '/v1/tasks',
      body({ webhook_url: HOOK, webhook_events: tooMany }),
    );
    expectError(refused, 422, 'invalid_request');
    assert.match(errorOf(refused).message, /webhook_events/);
    expectError(
      await t.call(a.key, 'POST', '/v1/webhooks', { url: HOOK, events: tooMany }),
      422,
      'invalid_request',
    );
  });

  test('webhook_url is kept without the spaces around it, as an endpoint url is', async () => {
    const a = await t.account({ balanceMinor: 1_000_000 });
    const res = await t.call(a.key, 'POST', '/v1/tasks', body({ webhook_url: ` ${HOOK}\t\n` }));
    assert.equal(res.statusCode, 202, res.body);
    assert.equal((await waitForFinal(t, a.key, res.json().id)).status, 'succeeded');
    const log = (await t.call(a.key, 'GET', `/v1/webhook-deliveries?task_id=${res.json().id}`)).json();
    assert.deepEqual(
      log.deliveries.map((d: { url: string }) => d.url),
      [HOOK],
    );
  });

  test('every subscribed event of a run, in order; a cancel sends task.canceled', async () => {
    const a = await t.account({ balanceMinor: 1_000_000 });
    const all = ['task.started', 'task.progress', 'task.succeeded', 'task.failed', 'task.canceled'];
    const res = await t.call(a.key, 'POST', '/v1/tasks', body({ webhook_url: HOOK, webhook_events: all }));
    const id = res.json().id;
    assert.equal((await waitForFinal(t, a.key, id)).status, 'succeeded');
    const types = (await deliveriesOf(id)).map((d) => d.type);
    assert.equal(types[0], 'task.started');
    assert.equal(types.at(-1), 'task.succeeded');
    assert.ok(types.slice(1, -1).every((type) => type === 'task.progress'));
    const progress = (await deliveriesOf(id))
      .filter((d) => d.type === 'task.progress')
      .map((d) => JSON.parse(d.body).data.progress as number);
    assert.deepEqual(
      progress,
      [...progress].sort((x, y) => x - y),
      'progress events in order',
    );
    assert.equal(new Set(progress).size, progress.length, 'no event for an unchanged progress');

    const slow = await t.call(
      a.key,
      'POST',
      '/v1/tasks',
      body({ webhook_url: HOOK, webhook_events: ['task.canceled', 'task.succeeded'] }, 'slow [sim:slow]'),
    );
    const canceled = await t.call(a.key, 'POST', `/v1/tasks/${slow.json().id}/cancel`);
    assert.equal(canceled.statusCode, 200, canceled.body);
    const sent = await deliveriesOf(slow.json().id);
    assert.deepEqual(
      sent.map((d) => d.type),
      ['task.canceled'],
    );
    assert.deepEqual(JSON.parse(sent[0]!.body).data, canceled.json());
  });

  test('the webhook is part of the idempotency comparison', async () => {
    const a = await t.account({ balanceMinor: 1_000_000 });
    const key = { 'Idempotency-Key': `wh-${Date.now()}` };
    const first = await t.call(a.key, 'POST', '/v1/tasks', body({ webhook_url: HOOK }), key);
    assert.equal(first.statusCode, 202, first.body);
    const same = await t.call(a.key, 'POST', '/v1/tasks', body({ webhook_url: HOOK }), key);
    assert.equal(same.json().id, first.json().id);
    expectError(
      await t.call(a.key, 'POST', '/v1/tasks', body({ webhook_url: `${HOOK}2` }), key),
      409,
      'idempotency_conflict',
    );
    expectError(await t.call(a.key, 'POST', '/v1/tasks', body(), key), 409, 'idempotency_conflict');
    // The events are a set: their order and repeats do not make another request.
    const events = { 'Idempotency-Key': `wh-set-${Date.now()}` };
    const listed = await t.call(
      a.key,
      'POST',
      '/v1/tasks',
      body({ webhook_url: HOOK, webhook_events: ['task.failed', 'task.succeeded'] }),
      events,
    );
    assert.equal(listed.statusCode, 202, listed.body);
    const reordered = await t.call(
      a.key,
      'POST',
      '/v1/tasks',
      body({ webhook_url: HOOK, webhook_events: ['task.succeeded', 'task.failed', 'task.succeeded'] }),
      events,
    );
    assert.equal(reordered.statusCode, 202, reordered.body);
    assert.equal(reordered.json().id, listed.json().id);
    expectError(
      await t.call(
        a.key,
        'POST',
        '/v1/tasks',
        body({ webhook_url: HOOK, webhook_events: ['task.started'] }),
        key,
      ),
      409,
      'idempotency_conflict',
    );
  });

  test('revision counts each visible change', async () => {
    const a = await t.account({ balanceMinor: 1_000_000 });
    const id = (await t.call(a.key, 'POST', '/v1/tasks', body())).json().id;
    await waitForFinal(t, a.key, id);
    const row = await t.container.db.db
      .selectFrom('tasks')
      .select(['revision', 'progress'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    // queued (0) → running (1) → at least one progress → succeeded.
    assert.ok(row.revision >= 3, `revision ${row.revision}`);
  });
});
