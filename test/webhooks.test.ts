/**
 * Webhook endpoints, the default secret and the delivery log as the API answers them (CONTRACT §12):
 * shapes, bad input, the 10-endpoint limit (also under concurrent creations), other accounts, deletion.
 * No sender runs here; deliveries are queued and inspected.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createDb } from '../src/db/index.ts';
import { ENDPOINTS_EPOCH_COLUMN, emitEvent, WebhookService } from '../src/events/index.ts';
import { IdempotencyStore } from '../src/tasks/index.ts';
import { expectError, startTestApp, type TestApp } from './helpers.ts';

/** A public address that is never resolved (an IP literal) and never called (no sender here). */
const PUBLIC_URL = 'https://93.184.216.34/hook';

/**
 * An endpoint row written straight into the table, without moving the endpoints' epoch as every path of
 * the service does: an event that still does not see it answered from the endpoints it kept.
 */
async function unannouncedEndpoint(t: TestApp, accountId: string, event: string): Promise<void> {
  await t.container.db.db
    .insertInto('webhook_endpoints')
    .values({
      id: `we_unannounced_${accountId}`,
      account_id: accountId,
      url: PUBLIC_URL,
      events: JSON.stringify([event]),
      description: null,
      secret: 'whsec_c2VjcmV0',
      previous_secret: null,
      previous_secret_expires_at: null,
      created_at: new Date().toISOString(),
      deleted_at: null,
    })
    .execute();
}

async function queueEvent(t: TestApp, accountId: string, taskId = 'task-x'): Promise<void> {
  const { db, dialect } = t.container.db;
  await dialect.transaction(db, (tx) =>
    emitEvent(tx, {
      accountId,
      type: 'task.succeeded',
      taskId,
      at: new Date(),
      data: async () => ({ id: taskId }),
    }),
  );
}

describe('webhook endpoints and the default secret', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ worker: false });
  });
  after(() => t.close());

  test('the default secret is whsec_ + base64 of 24–64 bytes, made once, the same for concurrent first reads', async () => {
    const acct = await t.account();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => t.call(acct.key, 'GET', '/v1/webhooks/default/secret')),
    );
    for (const res of answers) assert.equal(res.statusCode, 200, res.body);
    const secrets = new Set(answers.map((res) => res.json().secret as string));
    assert.equal(secrets.size, 1);
    const [secret] = [...secrets] as [string];
    assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    const bytes = Buffer.from(secret.slice('whsec_'.length), 'base64').length;
    assert.ok(bytes >= 24 && bytes <= 64, String(bytes));
    const other = await t.account();
    const theirs = (await t.call(other.key, 'GET', '/v1/webhooks/default/secret')).json().secret;
    assert.notEqual(theirs, secret, 'each account has its own');
  });

  test('a URL of 2048 characters is taken and one of 2049 refused, characters counted as the schema counts them', async () => {
    const acct = await t.account();
    // Characters past the Basic Multilingual Plane are two UTF-16 units each: counted once, as everywhere.
    const of = (length: number) => PUBLIC_URL + '/' + '😀'.repeat(length - PUBLIC_URL.length - 1);
    const taken = await t.call(acct.key, 'POST', '/v1/webhooks', {
      url: of(2048),
      events: ['task.succeeded'],
    });
    assert.equal(taken.statusCode, 201, taken.body);
    const refused = await t.call(acct.key, 'POST', '/v1/webhooks', {
      url: of(2049),
      events: ['task.succeeded'],
    });
    expectError(refused, 422, 'invalid_request');
    await t.call(acct.key, 'DELETE', `/v1/webhooks/${taken.json().id}`);
  });

  test('POST /v1/webhooks → 201 with the secret once; GET lists it without; DELETE → 204', async () => {
    const acct = await t.account();
    const res = await t.call(acct.key, 'POST', '/v1/webhooks', {
      url: PUBLIC_URL,
      events: ['task.succeeded', 'library.ready'],
      description: 'main receiver',
    });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json();
    assert.match(created.id, /^wh_/);
    assert.equal(created.url, PUBLIC_URL);
    assert.deepEqual(created.events, ['task.succeeded', 'library.ready']);
    assert.match(created.secret, /^whsec_/);
    assert.ok(!Number.isNaN(Date.parse(created.created_at)));
    const list = await t.call(acct.key, 'GET', '/v1/webhooks');
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json(), {
      webhooks: [
        {
          id: created.id,
          url: PUBLIC_URL,
          events: created.events,
          description: 'main receiver',
          created_at: created.created_at,
        },
      ],
    });
    assert.ok(!list.body.includes('whsec_'), 'the list never shows a secret');
    const gone = await t.call(acct.key, 'DELETE', `/v1/webhooks/${created.id}`);
    assert.equal(gone.statusCode, 204);
    assert.deepEqual((await t.call(acct.key, 'GET', '/v1/webhooks')).json(), { webhooks: [] });
    expectError(await t.call(acct.key, 'DELETE', `/v1/webhooks/${created.id}`), 404, 'webhook_not_found');
  });

  test('rotate-secret takes no body: a field sent to it is refused, never answered as if read', async () => {
    const acct = await t.account();
    const created = (
      await t.call(acct.key, 'POST', '/v1/webhooks', { url: PUBLIC_URL, events: ['task.succeeded'] })
    ).json();
    const rotate = (body?: unknown) =>
      t.call(acct.key, 'POST', `/v1/webhooks/${created.id}/rotate-secret`, body);
    // A caller who meant to set its own secret was answered 200 with a random one.
    for (const body of [{ secret: 'whsec_mine' }, [], 'x']) {
      const refused = await rotate(body);
      expectError(refused, 422, 'invalid_request');
      if (!Array.isArray(body) && typeof body === 'object')
        assert.match(refused.json().error.message, /secret/);
    }
    for (const body of [undefined, {}]) {
      const res = await rotate(body);
      assert.equal(res.statusCode, 200, res.body);
      assert.match(res.json().secret, /^whsec_/);
    }
  });

  test('an endpoint created or deleted by another process gets the very next event, or none', async () => {
    // A second handle on the same database stands for another process (a worker) that queues events.
    const other = createDb(t.container.config.databaseUrl);
    try {
      const acct = await t.account();
      const emit = () =>
        other.dialect.transaction(other.db, (tx) =>
          emitEvent(tx, {
            accountId: acct.id,
            type: 'task.succeeded',
            taskId: 'task-y',
            at: new Date(),
            data: async () => ({ id: 'task-y' }),
          }),
        );
      assert.equal(await emit(), 0, 'no endpoint yet');
      assert.equal(await emit(), 0, 'still none (a kept answer on SQLite)');
      const first = await t.call(acct.key, 'POST', '/v1/webhooks', {
        url: PUBLIC_URL,
        events: ['task.succeeded'],
      });
      assert.equal(first.statusCode, 201, first.body);
      assert.equal(await emit(), 1, 'the new endpoint gets the next event');
      const second = await t.call(acct.key, 'POST', '/v1/webhooks', {
        url: `${PUBLIC_URL}/2`,
        events: ['task.failed'],
      });
      assert.equal(second.statusCode, 201, second.body);
      assert.equal(await emit(), 1, 'an endpoint for other types gets nothing');
      assert.equal((await t.call(acct.key, 'DELETE', `/v1/webhooks/${first.json().id}`)).statusCode, 204);
      assert.equal(await emit(), 0, 'a deleted endpoint gets no further event');
      // Another account's endpoint changes nothing for this one, in either direction.
      const stranger = await t.account();
      await t.call(stranger.key, 'POST', '/v1/webhooks', { url: PUBLIC_URL, events: ['task.succeeded'] });
      assert.equal(await emit(), 0);
    } finally {
      await other.close();
    }
  });

  test('an event that carries the endpoints’ epoch keeps them under it, and sees an endpoint’s change at once', async () => {
    // The moves of a task return the epoch with the task (transitions.ts), so that the endpoints are kept
    // under it instead of read for every event (on PostgreSQL the epoch's own read would be a round trip).
    const other = createDb(t.container.config.databaseUrl);
    try {
      const acct = await t.account();
      const emit = () =>
        other.dialect.transaction(other.db, async (tx) => {
          const read = await tx.selectNoFrom(ENDPOINTS_EPOCH_COLUMN).executeTakeFirstOrThrow();
          return emitEvent(tx, {
            accountId: acct.id,
            type: 'task.succeeded',
            taskId: 'task-z',
            at: new Date(),
            data: async () => ({ id: 'task-z' }),
            endpointsEpoch: read.endpoints_epoch,
          });
        });
      assert.equal(await emit(), 0, 'no endpoint yet');
      // A row written without moving the epoch (no path of the service writes one so) is not seen: the
      // answer of the first event was kept, not read again.
      await unannouncedEndpoint(t, acct.id, 'task.succeeded');
      assert.equal(await emit(), 0, 'kept under the epoch');
      const made = await t.call(acct.key, 'POST', '/v1/webhooks', {
        url: `${PUBLIC_URL}/2`,
        events: ['task.succeeded'],
      });
      assert.equal(made.statusCode, 201, made.body);
      assert.equal(await emit(), 2, 'the epoch moved: both endpoints are read');
      assert.equal((await t.call(acct.key, 'DELETE', `/v1/webhooks/${made.json().id}`)).statusCode, 204);
      assert.equal(await emit(), 1, 'a deleted endpoint gets no further event');
    } finally {
      await other.close();
    }
  });

  test('a task’s move hands its event the endpoints’ epoch: the endpoints are not read again', async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const create = async () => {
      const res = await t.call(acct.key, 'POST', '/v1/tasks', {
        model: 'model-3d',
        settings: { task_type: 'text_to_model', prompt: 'a chair' },
      });
      assert.equal(res.statusCode, 202, res.body);
      return res.json().id as string;
    };
    const [first, second] = [await create(), await create()];
    const cancel = async (id: string) =>
      assert.equal((await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`)).statusCode, 200);
    await cancel(first);
    await unannouncedEndpoint(t, acct.id, 'task.canceled');
    await cancel(second);
    const deliveries = await t.container.db.db
      .selectFrom('webhook_deliveries')
      .select('task_id')
      .where('account_id', '=', acct.id)
      .execute();
    assert.deepEqual(deliveries, [], 'the second cancel used the endpoints kept at the first');
  });

  test('a private, loopback or malformed url is 422 invalid_request naming url; so is webhook_url on a task', async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    for (const url of [
      'http://127.0.0.1:9/hook',
      'http://10.0.0.5/hook',
      'http://169.254.169.254/latest',
      'http://[::1]/x',
      'ftp://93.184.216.34/x',
      'https://user:pw@93.184.216.34/x',
      'not a url',
      'http://93.184.216.34:0/x',
      // The parser would drop the line break: the address stored and shown would not be the one called.
      'http://93.184.216.34/\r\nX: y',
      'http://93.184.216.34/a\tb',
    ]) {
      const res = await t.call(acct.key, 'POST', '/v1/webhooks', { url, events: ['task.succeeded'] });
      expectError(res, 422, 'invalid_request');
      assert.match(res.json().error.message, /^url: /, url);
      const task = await t.call(acct.key, 'POST', '/v1/tasks', {
        model: 'model-3d',
        settings: { task_type: 'text_to_model', prompt: 'a chair' },
        webhook_url: url,
      });
      expectError(task, 422, 'invalid_request');
      assert.match(task.json().error.message, /webhook_url/, url);
    }
    assert.deepEqual((await t.call(acct.key, 'GET', '/v1/webhooks')).json(), { webhooks: [] });
  });

  test('unknown or no events are 422 naming events; a long description is 422', async () => {
    const acct = await t.account();
    for (const events of [['task.exploded'], [], ['task.succeeded', 'nope']]) {
      const res = await t.call(acct.key, 'POST', '/v1/webhooks', { url: PUBLIC_URL, events });
      expectError(res, 422, 'invalid_request');
      assert.match(res.json().error.message, /events/, JSON.stringify(events));
    }
    const res = await t.call(acct.key, 'POST', '/v1/webhooks', {
      url: PUBLIC_URL,
      events: ['task.failed'],
      description: 'x'.repeat(501),
    });
    expectError(res, 422, 'invalid_request');
    const task = await t.call(acct.key, 'POST', '/v1/tasks', {
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt: 'a chair' },
      webhook_url: PUBLIC_URL,
      webhook_events: ['library.ready'],
    });
    expectError(task, 422, 'invalid_request');
  });

  test('at most 10 endpoints: the 11th is 409 too_many_webhooks; a deleted one frees a place', async () => {
    const acct = await t.account();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await t.call(acct.key, 'POST', '/v1/webhooks', {
        url: PUBLIC_URL,
        events: ['task.failed'],
      });
      assert.equal(res.statusCode, 201, res.body);
      ids.push(res.json().id);
    }
    expectError(
      await t.call(acct.key, 'POST', '/v1/webhooks', { url: PUBLIC_URL, events: ['task.failed'] }),
      409,
      'too_many_webhooks',
    );
    assert.equal((await t.call(acct.key, 'DELETE', `/v1/webhooks/${ids[0]}`)).statusCode, 204);
    const again = await t.call(acct.key, 'POST', '/v1/webhooks', {
      url: PUBLIC_URL,
      events: ['task.failed'],
    });
    assert.equal(again.statusCode, 201, again.body);
  });

  test('11 concurrent creations: exactly 10 exist after, the other is 409 too_many_webhooks', async () => {
    const acct = await t.account();
    const answers = await Promise.all(
      Array.from({ length: 11 }, () =>
        t.call(acct.key, 'POST', '/v1/webhooks', { url: PUBLIC_URL, events: ['task.succeeded'] }),
      ),
    );
    assert.equal(answers.filter((r) => r.statusCode === 201).length, 10);
    const refused = answers.filter((r) => r.statusCode !== 201);
    assert.equal(refused.length, 1);
    expectError(refused[0]!, 409, 'too_many_webhooks');
    assert.equal((await t.call(acct.key, 'GET', '/v1/webhooks')).json().webhooks.length, 10);
  });

  test('GET /v1/webhooks/{id} reads what Location names, without the secret; 404 when gone or foreign', async () => {
    const acct = await t.account();
    const stranger = await t.account();
    const created = await t.call(acct.key, 'POST', '/v1/webhooks', {
      url: ` ${PUBLIC_URL} `,
      events: ['task.failed'],
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json().url, PUBLIC_URL, 'kept without the spaces around it');
    const read = await t.call(acct.key, 'GET', String(created.headers.location));
    assert.equal(read.statusCode, 200, read.body);
    const { secret: _secret, ...listed } = created.json();
    assert.deepEqual(read.json(), listed);
    assert.equal(read.json().secret, undefined);
    expectError(await t.call(stranger.key, 'GET', `/v1/webhooks/${listed.id}`), 404, 'webhook_not_found');
    await t.call(acct.key, 'DELETE', `/v1/webhooks/${listed.id}`);
    expectError(await t.call(acct.key, 'GET', `/v1/webhooks/${listed.id}`), 404, 'webhook_not_found');
  });

  test('Idempotency-Key: a repeat answers the same endpoint and secret; concurrent repeats make one', async () => {
    const acct = await t.account();
    const body = { url: PUBLIC_URL, events: ['task.succeeded'] };
    const headers = { 'idempotency-key': 'hook-1' };
    const first = await t.call(acct.key, 'POST', '/v1/webhooks', body, headers);
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const again = await t.call(acct.key, 'POST', '/v1/webhooks', body, headers);
    assert.equal(again.statusCode, 201, again.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.headers.location, `/v1/webhooks/${first.json().id}`);
    assert.deepEqual(again.json(), first.json(), 'the same endpoint, its secret included');
    expectError(
      await t.call(acct.key, 'POST', '/v1/webhooks', { ...body, events: ['task.failed'] }, headers),
      409,
      'idempotency_conflict',
    );
    // The events are a set, and a null description is none, as GET shows it: the same request again.
    const twice = { ...body, events: ['task.succeeded', 'task.succeeded'], description: null };
    const same = await t.call(acct.key, 'POST', '/v1/webhooks', twice, headers);
    assert.equal(same.statusCode, 201, same.body);
    assert.equal(same.json().id, first.json().id);
    const racing = await Promise.all(
      Array.from({ length: 5 }, () =>
        t.call(acct.key, 'POST', '/v1/webhooks', body, { 'idempotency-key': 'hook-2' }),
      ),
    );
    const made = new Set(racing.filter((r) => r.statusCode === 201).map((r) => r.json().id));
    assert.equal(made.size, 1, racing.map((r) => r.body).join('\n'));
    for (const r of racing.filter((x) => x.statusCode !== 201)) expectError(r, 409, 'request_in_progress');
    // Without the header every call makes an endpoint, as before; the object GET shows can be sent back.
    const shown = (await t.call(acct.key, 'GET', `/v1/webhooks/${first.json().id}`)).json();
    assert.equal(shown.description, null);
    const copied = await t.call(acct.key, 'POST', '/v1/webhooks', {
      url: shown.url,
      events: shown.events,
      description: shown.description,
    });
    assert.equal(copied.statusCode, 201, copied.body);
    assert.equal(copied.json().description, null);
    assert.equal((await t.call(acct.key, 'GET', '/v1/webhooks')).json().webhooks.length, 3);
    // Deleted since, the endpoint is replayed as it was (as a library record is), and made no second time.
    assert.equal((await t.call(acct.key, 'DELETE', `/v1/webhooks/${first.json().id}`)).statusCode, 204);
    const afterDelete = await t.call(acct.key, 'POST', '/v1/webhooks', body, headers);
    assert.equal(afterDelete.statusCode, 201, afterDelete.body);
    assert.equal(afterDelete.headers['idempotent-replayed'], 'true');
    assert.deepEqual(afterDelete.json(), first.json());
    assert.equal((await t.call(acct.key, 'GET', '/v1/webhooks')).json().webhooks.length, 2);
  });

  test('Idempotency-Key: a repeat answers its endpoint even where the url would be refused now', async () => {
    // The endpoint was made while its address was allowed (a name resolving to a public address then, a
    // test's allowed loopback here); the repeat of that request must not look at the address again: a
    // name that does not resolve for a moment would otherwise lose the secret the first answer carried.
    const acct = await t.account();
    const { db, clock } = t.container;
    const earlier = new WebhookService({
      db,
      clock,
      urls: { allowAddresses: ['127.0.0.1'] },
      idempotency: new IdempotencyStore({ db, clock }),
    });
    const body = { url: 'http://127.0.0.1:9/hook', events: ['task.succeeded'] };
    const made = await earlier.create(acct.id, body, 'hook-allowed-then');
    const again = await t.call(acct.key, 'POST', '/v1/webhooks', body, {
      'idempotency-key': 'hook-allowed-then',
    });
    assert.equal(again.statusCode, 201, again.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), made.webhook);
    // Without a key, or under a new one, the address is refused as before, and that key stays free.
    expectError(await t.call(acct.key, 'POST', '/v1/webhooks', body), 422, 'invalid_request');
    const fresh = { 'idempotency-key': 'hook-refused' };
    expectError(await t.call(acct.key, 'POST', '/v1/webhooks', body, fresh), 422, 'invalid_request');
    const other = await t.call(acct.key, 'POST', '/v1/webhooks', { ...body, url: PUBLIC_URL }, fresh);
    assert.equal(other.statusCode, 201, other.body);
  });

  test("another account's endpoint and delivery are 404; its log shows only its own", async () => {
    const mine = await t.account();
    const theirs = await t.account();
    const created = (
      await t.call(mine.key, 'POST', '/v1/webhooks', { url: PUBLIC_URL, events: ['task.succeeded'] })
    ).json();
    await queueEvent(t, mine.id);
    const log = (await t.call(mine.key, 'GET', '/v1/webhook-deliveries')).json();
    assert.equal(log.deliveries.length, 1);
    const delivery = log.deliveries[0];
    assert.match(delivery.id, /^msg_[0-9a-f]{32}$/);
    assert.equal(delivery.webhook_id, created.id);
    assert.equal(delivery.state, 'pending');
    assert.equal(delivery.attempts, 0);
    expectError(await t.call(theirs.key, 'DELETE', `/v1/webhooks/${created.id}`), 404, 'webhook_not_found');
    expectError(
      await t.call(theirs.key, 'POST', `/v1/webhooks/${created.id}/rotate-secret`),
      404,
      'webhook_not_found',
    );
    expectError(
      await t.call(theirs.key, 'POST', `/v1/webhook-deliveries/${delivery.id}/retry`),
      404,
      'delivery_not_found',
    );
    assert.deepEqual((await t.call(theirs.key, 'GET', '/v1/webhook-deliveries')).json(), {
      deliveries: [],
      next_cursor: null,
    });
    assert.deepEqual((await t.call(theirs.key, 'GET', '/v1/webhooks')).json(), { webhooks: [] });
  });

  test('the log: newest first, filters by task_id and webhook_id, pages with next_cursor', async () => {
    const acct = await t.account();
    const a = (
      await t.call(acct.key, 'POST', '/v1/webhooks', { url: PUBLIC_URL, events: ['task.succeeded'] })
    ).json();
    const b = (
      await t.call(acct.key, 'POST', '/v1/webhooks', { url: `${PUBLIC_URL}2`, events: ['task.succeeded'] })
    ).json();
    await queueEvent(t, acct.id, 'task-1');
    await queueEvent(t, acct.id, 'task-2');
    await queueEvent(t, acct.id, 'task-3');
    const all = (await t.call(acct.key, 'GET', '/v1/webhook-deliveries')).json().deliveries;
    assert.equal(all.length, 6);
    assert.deepEqual(
      all.map((d: { id: string }) => d.id),
      all
        .map((d: { id: string }) => d.id)
        .toSorted()
        .toReversed(),
    );
    assert.deepEqual(
      (await t.call(acct.key, 'GET', '/v1/webhook-deliveries?task_id=task-2'))
        .json()
        .deliveries.map((d: { webhook_id: string }) => d.webhook_id)
        .toSorted(),
      [a.id, b.id].toSorted(),
    );
    const onlyB = (await t.call(acct.key, 'GET', `/v1/webhook-deliveries?webhook_id=${b.id}`)).json();
    assert.deepEqual(
      onlyB.deliveries.map((d: { task_id: string }) => d.task_id),
      ['task-3', 'task-2', 'task-1'],
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { deliveries: Array<{ id: string }>; next_cursor: string | null } = (
        await t.call(
          acct.key,
          'GET',
          `/v1/webhook-deliveries?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        )
      ).json();
      seen.push(...page.deliveries.map((d: { id: string }) => d.id));
      cursor = page.next_cursor;
    } while (cursor);
    assert.deepEqual(
      seen,
      all.map((d: { id: string }) => d.id),
    );
    expectError(await t.call(acct.key, 'GET', '/v1/webhook-deliveries?cursor=bogus'), 422, 'invalid_request');
    expectError(await t.call(acct.key, 'GET', '/v1/webhook-deliveries?limit=0'), 422, 'invalid_request');
    // Empty fields are none given, as on every list: the first page of every delivery.
    const blank = await t.call(acct.key, 'GET', '/v1/webhook-deliveries?cursor=&task_id=&webhook_id=&limit=');
    assert.equal(blank.statusCode, 200, blank.body);
  });

  test('deleting an endpoint fails its pending deliveries ("endpoint deleted"); retrying one is 404', async () => {
    const acct = await t.account();
    const created = (
      await t.call(acct.key, 'POST', '/v1/webhooks', { url: PUBLIC_URL, events: ['task.succeeded'] })
    ).json();
    await queueEvent(t, acct.id);
    assert.equal((await t.call(acct.key, 'DELETE', `/v1/webhooks/${created.id}`)).statusCode, 204);
    const [delivery] = (await t.call(acct.key, 'GET', '/v1/webhook-deliveries')).json().deliveries;
    assert.equal(delivery.state, 'failed');
    assert.equal(delivery.last_error, 'endpoint deleted');
    assert.equal(delivery.next_attempt_at, null);
    expectError(
      await t.call(acct.key, 'POST', `/v1/webhook-deliveries/${delivery.id}/retry`),
      404,
      'webhook_not_found',
    );
    await queueEvent(t, acct.id);
    assert.equal(
      (await t.call(acct.key, 'GET', '/v1/webhook-deliveries')).json().deliveries.length,
      1,
      'a deleted endpoint gets no new events',
    );
  });

  test('a retry that meets an attempt being recorded sees its outcome: a last attempt failing meanwhile gets one more', async () => {
    const acct = await t.account();
    await t.call(acct.key, 'POST', '/v1/webhooks', { url: PUBLIC_URL, events: ['task.succeeded'] });
    await queueEvent(t, acct.id);
    const [delivery] = (await t.call(acct.key, 'GET', '/v1/webhook-deliveries')).json().deliveries;
    const { db, dialect } = t.container.db;
    let retried: Promise<Awaited<ReturnType<TestApp['call']>>> | undefined;
    // What the sender writes when the schedule's last attempt fails, while the retry is being asked.
    await dialect.transaction(db, async (tx) => {
      await tx
        .updateTable('webhook_deliveries')
        .set({ state: 'failed', attempts: 8, last_status_code: 503, next_attempt_at: null })
        .where('id', '=', delivery.id)
        .execute();
      retried = t.call(acct.key, 'POST', `/v1/webhook-deliveries/${delivery.id}/retry`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    });
    const res = await retried!;
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json().state, 'pending');
    const [after] = (await t.call(acct.key, 'GET', '/v1/webhook-deliveries')).json().deliveries;
    assert.equal(after.state, 'pending', JSON.stringify(after));
    assert.notEqual(after.next_attempt_at, null);
  });

  test('a restricted key manages the account’s endpoints too (account-level)', async () => {
    const acct = await t.account();
    const restricted = (
      await t.admin('POST', `/admin/v1/accounts/${acct.id}/keys`, { models: ['image'] })
    ).json();
    const res = await t.call(restricted.key, 'POST', '/v1/webhooks', {
      url: PUBLIC_URL,
      events: ['task.failed'],
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal((await t.call(acct.key, 'GET', '/v1/webhooks')).json().webhooks.length, 1);
  });
});

describe('webhook routes count against the request limit like any request', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({
      worker: false,
      limits: { accountRequests: 3, wrongKeyAttempts: 100, windowSeconds: 60 },
    });
  });
  after(() => t.close());

  test('the 4th call in the window is 429 rate_limited', async () => {
    const acct = await t.account();
    for (const url of ['/v1/webhooks', '/v1/webhook-deliveries', '/v1/webhooks/default/secret'])
      assert.equal((await t.call(acct.key, 'GET', url)).statusCode, 200);
    expectError(await t.call(acct.key, 'GET', '/v1/webhooks'), 429, 'rate_limited');
  });
});
