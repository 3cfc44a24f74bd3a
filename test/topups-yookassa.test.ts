/**
 * Top-ups through YooKassa (CONTRACT §14, PROVIDERS.md §8), against the in-repo fake: the payment's wire
 * shape, success and cancel by notification, duplicated, forged, unknown and unparsable notifications, a
 * provider that is down, and a lost notification recovered by a read-back and by the background sweep.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { YookassaFake } from './fakes/yookassa.ts';
import { expectError, startTestApp, type TestApp } from './helpers.ts';

const NOTIFY = '/v1/payments/yookassa/notifications';

describe('top-ups through YooKassa', () => {
  let fake: YookassaFake;
  let t: TestApp;
  before(async () => {
    fake = await YookassaFake.start();
    t = await startTestApp({
      worker: false,
      env: {
        ...fake.env,
      },
    });
  });
  after(async () => {
    await t.close();
    await fake.close();
  });

  const notify = (body: unknown) =>
    t.app.inject({
      method: 'POST',
      url: NOTIFY,
      payload: body as object,
      headers: { 'content-type': 'application/json' },
    });

  async function credits(accountId: string, reference?: string): Promise<number[]> {
    const ledger = await t.admin('GET', `/admin/v1/accounts/${accountId}/ledger`);
    return (ledger.json().entries as Array<{ type: string; reference: string | null; amount_minor: number }>)
      .filter((e) => e.type === 'credit' && (reference === undefined || e.reference === reference))
      .map((e) => e.amount_minor);
  }

  async function topUp(key: string, amount_minor: number): Promise<{ id: string; paymentId: string }> {
    const res = await t.call(key, 'POST', '/v1/topups', { amount_minor });
    assert.equal(res.statusCode, 201, res.body);
    const id = res.json().id as string;
    const payment = [...fake.payments.values()].find((p) => p.metadata.topup_id === id);
    assert.ok(payment, 'the payment was created at YooKassa');
    assert.equal(res.json().confirmation_url, payment.confirmation.confirmation_url);
    return { id, paymentId: payment.id };
  }

  test('the payment: Basic auth, Idempotence-Key = the top-up id, "1500.00" RUB, redirect, metadata', async () => {
    const acct = await t.account();
    const before = fake.payments.size;
    const { id } = await topUp(acct.key, 150_000);
    assert.equal(fake.payments.size, before + 1);
    const call = fake.calls.findLast((c) => c.method === 'POST' && c.path === '/v3/payments');
    assert.ok(call);
    assert.equal(call.headers['idempotence-key'], id);
    assert.equal(
      call.headers.authorization,
      `Basic ${Buffer.from(`${fake.shopId}:${fake.secretKey}`).toString('base64')}`,
    );
    assert.deepEqual(call.body, {
      amount: { value: '1500.00', currency: 'RUB' },
      capture: true,
      confirmation: { type: 'redirect', return_url: `http://api.test/topups/${id}` },
      description: `Top-up ${id}`,
      metadata: { topup_id: id },
    });
  });

  test('a payment id YooKassa already gave another top-up is 503, never a second top-up of it', async () => {
    const acct = await t.account();
    const { paymentId } = await topUp(acct.key, 10_000);
    fake.nextId = paymentId;
    const res = await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 20_000 });
    expectError(res, 503, 'payments_unavailable');
    const rows = await t.container.db.db
      .selectFrom('topups')
      .select('id')
      .where('payment_id', '=', paymentId)
      .execute();
    assert.equal(rows.length, 1);
  });

  test('success: the notification is read back and credits once, however often it comes', async () => {
    const acct = await t.account();
    const { id, paymentId } = await topUp(acct.key, 150_000);
    fake.succeed(paymentId);
    const answers = await Promise.all([1, 2, 3].map(() => notify(fake.notification(paymentId))));
    for (const res of answers) assert.equal(res.statusCode, 200, res.body);
    assert.equal((await notify(fake.notification(paymentId))).statusCode, 200);
    assert.equal((await t.call(acct.key, 'GET', `/v1/topups/${id}`)).json().status, 'succeeded');
    assert.deepEqual(await credits(acct.id, paymentId), [150_000]);
    assert.equal((await t.call(acct.key, 'GET', '/v1/me')).json().available_minor, 150_000);
  });

  test('a success the balance cannot take (past 2^53 kopecks) is 200 and stays pending, not resent forever', async () => {
    const acct = await t.account();
    const full = await t.admin('POST', `/admin/v1/accounts/${acct.id}/credits`, {
      amount_minor: Number.MAX_SAFE_INTEGER - 50,
      reference: 'nearly-full',
    });
    assert.equal(full.statusCode, 201, full.body);
    const { id, paymentId } = await topUp(acct.key, 100);
    fake.succeed(paymentId);
    const res = await notify(fake.notification(paymentId));
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await t.call(acct.key, 'GET', `/v1/topups/${id}`)).json().status, 'pending');
    assert.deepEqual(await credits(acct.id, paymentId), []);
  });

  test('two successes settled at once never take the balance past 2^53 kopecks together', async () => {
    const acct = await t.account();
    const full = await t.admin('POST', `/admin/v1/accounts/${acct.id}/credits`, {
      amount_minor: Number.MAX_SAFE_INTEGER - 150,
      reference: 'nearly-full',
    });
    assert.equal(full.statusCode, 201, full.body);
    // Room for one of them only.
    const payments = [await topUp(acct.key, 100), await topUp(acct.key, 100)];
    for (const p of payments) fake.succeed(p.paymentId);
    const { db, dialect } = t.container.db;
    // On PostgreSQL another transaction holds the account's row while both credits start, so both have
    // begun before either commits (SQLite runs one writer at a time anyway).
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const blocker =
      dialect.name === 'postgres'
        ? dialect.transaction(db, async (tx) => {
            await sql`select id from accounts where id = ${acct.id} for update`.execute(tx);
            await gate;
          })
        : Promise.resolve();
    const answers = Promise.all(payments.map((p) => notify(fake.notification(p.paymentId))));
    if (dialect.name === 'postgres') {
      for (let i = 0; i < 200; i++) {
        const { rows } = await sql<{ n: string }>`
          select count(*) as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`.execute(db);
        if (Number(rows[0]?.n ?? 0) >= 2) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    release();
    await blocker;
    for (const res of await answers) assert.equal(res.statusCode, 200, res.body);
    const credited = payments.map((p) => credits(acct.id, p.paymentId));
    assert.deepEqual((await Promise.all(credited)).flat(), [100]);
    const account = (await t.admin('GET', `/admin/v1/accounts/${acct.id}`)).json();
    assert.equal(account.balance_minor, Number.MAX_SAFE_INTEGER - 50);
  });

  test('cancel: the top-up ends canceled with the reason, no money', async () => {
    const acct = await t.account();
    const { id, paymentId } = await topUp(acct.key, 5000);
    fake.cancel(paymentId, 'insufficient_funds');
    assert.equal((await notify(fake.notification(paymentId))).statusCode, 200);
    const view = (await t.call(acct.key, 'GET', `/v1/topups/${id}`)).json();
    assert.equal(view.status, 'canceled');
    assert.equal(view.cancellation_reason, 'insufficient_funds');
    // A later success claim (forged or not) cannot revive it.
    assert.equal((await notify(fake.notification(paymentId, { status: 'succeeded' }))).statusCode, 200);
    assert.deepEqual(await credits(acct.id), []);
  });

  test('forged notifications credit nothing: the payment is still pending at YooKassa', async () => {
    const acct = await t.account();
    const { id, paymentId } = await topUp(acct.key, 9900);
    const forged = [
      fake.notification(paymentId, { status: 'succeeded', paid: true }),
      fake.notification(paymentId, { status: 'succeeded', amount: { value: '999999.00', currency: 'RUB' } }),
      { type: 'notification', event: 'payment.succeeded', object: { id: paymentId, status: 'succeeded' } },
    ];
    for (const body of forged) assert.equal((await notify(body)).statusCode, 200);
    assert.equal((await t.call(acct.key, 'GET', `/v1/topups/${id}`)).json().status, 'pending');
    assert.deepEqual(await credits(acct.id), []);
  });

  test('a burst of notifications for one payment reads it from YooKassa twice, not once per request', async () => {
    const acct = await t.account();
    const { id, paymentId } = await topUp(acct.key, 9900);
    const before = fake.reads;
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => notify({ object: { id: paymentId } })),
    );
    for (const res of answers) assert.equal(res.statusCode, 200, res.body);
    // The first read, then one shared by everyone who came while it ran: the shop's rate limit is safe.
    assert.ok(fake.reads - before <= 2, `${fake.reads - before} reads`);
    assert.equal((await t.call(acct.key, 'GET', `/v1/topups/${id}`)).json().status, 'pending');
    // A notification after the payment succeeded still gets a read of its own, which credits.
    fake.succeed(paymentId);
    assert.equal((await notify(fake.notification(paymentId))).statusCode, 200);
    assert.deepEqual(await credits(acct.id, paymentId), [9900]);
  });

  test('unknown and malformed notifications are 200 without effect; an unparsable body is 400', async () => {
    const reads = fake.reads;
    for (const body of [
      fake.notification('no-such-payment', { status: 'succeeded' }),
      { type: 'notification' },
      { object: { id: 42 } },
      // No payment id has a NUL, which PostgreSQL refuses in text: still no effect, never a 500.
      { object: { id: 'no-such\u0000payment' } },
      [],
      'text',
      null,
    ]) {
      const res = await t.app.inject({
        method: 'POST',
        url: NOTIFY,
        payload: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    assert.equal(fake.reads, reads, 'a payment no top-up has is never even read');
    for (const payload of ['{"object":', 'not json', '']) {
      const res = await t.app.inject({
        method: 'POST',
        url: NOTIFY,
        payload,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.statusCode, 400, `${payload}: ${res.body}`);
    }
    // Its message speaks the request's language, as every refusal does (CONTRACT §8).
    for (const [headers, message] of [
      [{ 'accept-language': 'ru' }, 'Тело запроса — некорректный JSON.'],
      [{}, 'The body is not valid JSON.'],
    ] as const) {
      const res = await t.app.inject({
        method: 'POST',
        url: NOTIFY,
        payload: 'not json',
        headers: { 'content-type': 'application/json', ...headers },
      });
      assert.deepEqual(res.json(), { error: { code: 'invalid_request', message } });
    }
    // No notification of YooKassa's is near 64 KB; a larger body is refused, its message naming the limit.
    const huge = await t.app.inject({
      method: 'POST',
      url: NOTIFY,
      payload: JSON.stringify({ pad: 'x'.repeat(70_000) }),
      headers: { 'content-type': 'application/json' },
    });
    expectError(huge, 413, 'request_too_large');
    assert.match(huge.json().error.message, /64 KB/);
  });

  test('provider down (500, 429, wrong credentials): 503 with Retry-After, nothing recorded', async () => {
    const acct = await t.account();
    // A 5xx is repeated twice with the same key first (outcome unknown); a 429 is not.
    for (const [status, count] of [
      [500, 3],
      [429, 1],
      [503, 3],
    ] as const) {
      fake.failing = { status, count };
      const res = await t.call(
        acct.key,
        'POST',
        '/v1/topups',
        { amount_minor: 1000 },
        { 'idempotency-key': 'k' },
      );
      expectError(res, 503, 'payments_unavailable');
      assert.ok(Number(res.headers['retry-after']) >= 1, res.body);
    }
    fake.failing = null;
    assert.equal((await t.call(acct.key, 'GET', '/v1/topups')).json().topups.length, 0);
    // The refusal did not bind the key.
    const ok = await t.call(
      acct.key,
      'POST',
      '/v1/topups',
      { amount_minor: 1000 },
      { 'idempotency-key': 'k' },
    );
    assert.equal(ok.statusCode, 201, ok.body);
    assert.deepEqual(await credits(acct.id), []);
  });

  test('a creation answered 500 after it was carried out is repeated with the same key: one payment', async () => {
    const acct = await t.account();
    const before = fake.payments.size;
    const posts = () => fake.calls.filter((c) => c.method === 'POST' && c.path === '/v3/payments');
    const postsBefore = posts().length;
    fake.failAfterCreate = 1;
    const res = await t.call(
      acct.key,
      'POST',
      '/v1/topups',
      { amount_minor: 2500 },
      { 'idempotency-key': 'once' },
    );
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(fake.payments.size, before + 1, 'one payment at the provider');
    const sent = posts().slice(postsBefore);
    assert.equal(sent.length, 2);
    assert.equal(sent[0]?.headers['idempotence-key'], sent[1]?.headers['idempotence-key']);
    assert.equal(sent[0]?.headers['idempotence-key'], res.json().id);
  });

  test('a read-back that fails answers the notification 500 (resent later), then credits once', async () => {
    const acct = await t.account();
    const { paymentId } = await topUp(acct.key, 3000);
    fake.succeed(paymentId);
    fake.failing = { status: 500, count: 1 };
    const failed = await t.app.inject({
      method: 'POST',
      url: `${NOTIFY}?lang=ru`,
      payload: fake.notification(paymentId) as object,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(failed.statusCode, 500);
    assert.deepEqual(failed.json().error, {
      code: 'internal_error',
      message: 'На нашей стороне произошла ошибка; повторите позже.',
    });
    assert.deepEqual(await credits(acct.id), []);
    assert.equal((await notify(fake.notification(paymentId))).statusCode, 200);
    assert.deepEqual(await credits(acct.id, paymentId), [3000]);
  });

  test('a lost notification: reading the top-up reads the payment back and credits', async () => {
    const acct = await t.account();
    const { id, paymentId } = await topUp(acct.key, 4200);
    fake.succeed(paymentId);
    assert.equal((await t.call(acct.key, 'GET', `/v1/topups/${id}`)).json().status, 'succeeded');
    assert.deepEqual(await credits(acct.id, paymentId), [4200]);
  });

  test('a lost notification: the background sweep credits it without anyone asking', async () => {
    const acct = await t.account();
    const paid = await topUp(acct.key, 7700);
    const dropped = await topUp(acct.key, 1100);
    fake.succeed(paid.paymentId);
    fake.cancel(dropped.paymentId);
    t.container.topupSweep.start(50, { idleMs: 0 });
    try {
      for (let i = 0; i < 200 && (await credits(acct.id)).length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    } finally {
      t.container.topupSweep.stop();
    }
    assert.deepEqual(await credits(acct.id, paid.paymentId), [7700]);
    const list = (await t.call(acct.key, 'GET', '/v1/topups')).json().topups as Array<{
      id: string;
      status: string;
    }>;
    const states = Object.fromEntries(list.map((x) => [x.id, x.status]));
    assert.equal(states[paid.id], 'succeeded');
    // The sweep's pass reads both; the canceled one ends canceled.
    await t.container.services.topups.sweep({ idleMs: 0 });
    assert.equal(
      (await t.call(acct.key, 'GET', '/v1/topups'))
        .json()
        .topups.find((x: { id: string }) => x.id === dropped.id).status,
      'canceled',
    );
    assert.deepEqual(await credits(acct.id), [7700]);
  });
});

describe('YooKassa with wrong credentials or unreachable', () => {
  test('401 from YooKassa and a closed port are both 503 payments_unavailable', async () => {
    const fake = await YookassaFake.start();
    const closed = await YookassaFake.start();
    const closedUrl = closed.baseUrl;
    await closed.close();
    for (const [base, secret] of [
      [fake.baseUrl, 'wrong-secret'],
      [closedUrl, fake.secretKey],
    ] as const) {
      const t = await startTestApp({
        worker: false,
        env: {
          PAYMENTS: 'yookassa',
          YOOKASSA_SHOP_ID: fake.shopId,
          YOOKASSA_SECRET_KEY: secret,
          YOOKASSA_BASE_URL: base,
        },
      });
      try {
        const acct = await t.account();
        expectError(
          await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 1000 }),
          503,
          'payments_unavailable',
        );
        assert.equal((await t.call(acct.key, 'GET', '/v1/topups')).json().topups.length, 0);
      } finally {
        await t.close();
      }
    }
    assert.equal(fake.payments.size, 0);
    await fake.close();
  });
});
