/**
 * Wallet top-ups as the API answers them (CONTRACT §14), in the test mode (`PAYMENTS=test`): amounts,
 * Idempotency-Key, tenancy, the list's cursor, the operator's list, `PAYMENTS=off`, an unconfirmed
 * person, and concurrent settlements of one payment crediting once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { credit } from '../src/ledger/index.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { expectError, sharedProcessEnv, startTestApp, type TestApp } from './helpers.ts';
import { Captured } from './log-capture.ts';
import { operatorSignedIn, textOf } from './web-kit.ts';

async function creditsOf(t: TestApp, accountId: string, reference: string): Promise<number[]> {
  const ledger = await t.admin('GET', `/admin/v1/accounts/${accountId}/ledger`);
  assert.equal(ledger.statusCode, 200, ledger.body);
  return (ledger.json().entries as Array<{ type: string; reference: string | null; amount_minor: number }>)
    .filter((e) => e.type === 'credit' && e.reference === reference)
    .map((e) => e.amount_minor);
}

async function paymentOf(t: TestApp, topupId: string): Promise<string> {
  const found = await t.admin('GET', '/admin/v1/topups');
  const row = (found.json().topups as Array<{ id: string; payment_id: string }>).find(
    (x) => x.id === topupId,
  );
  assert.ok(row, found.body);
  return row.payment_id;
}

/**
 * Pays a top-up at the test provider behind the service's back (no notification, no settle): what a lost
 * notification leaves. Answers its payment id.
 */
async function paidUnnoticed(t: TestApp, topupId: string): Promise<string> {
  const paymentId = await paymentOf(t, topupId);
  await t.container.db.db
    .updateTable('test_payments')
    .set({ status: 'succeeded' })
    .where('id', '=', paymentId)
    .execute();
  return paymentId;
}

describe('top-ups in the test mode', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ worker: false, env: { PAYMENTS: 'test' } });
  });
  after(() => t.close());

  test('amounts: 99 and 100,000,001 kopecks are 422; 100 and 100,000,000 are accepted, pending', async () => {
    const acct = await t.account();
    for (const amount_minor of [99, 100_000_001, 150.5, -100, 0]) {
      expectError(await t.call(acct.key, 'POST', '/v1/topups', { amount_minor }), 422, 'invalid_request');
    }
    expectError(
      await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: '1500' }),
      422,
      'invalid_request',
    );
    expectError(
      await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 1500, return_url: 'javascript:alert(1)' }),
      422,
      'invalid_request',
    );
    // Strings the URL parser refuses outright, not only the url check: 422 too, never 500.
    for (const return_url of ['', 'http://', 'https://', 'http://exa mple.com/']) {
      expectError(
        await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 1500, return_url }),
        422,
        'invalid_request',
      );
    }
    for (const amount_minor of [100, 100_000_000]) {
      const res = await t.call(acct.key, 'POST', '/v1/topups', { amount_minor });
      assert.equal(res.statusCode, 201, res.body);
      const topup = res.json();
      assert.match(topup.id, /^tp_/);
      assert.equal(topup.status, 'pending');
      assert.equal(topup.amount_minor, amount_minor);
      assert.equal(topup.confirmation_url, `http://api.test/topups/${topup.id}/pay`);
      assert.equal(topup.return_url, `http://api.test/topups/${topup.id}`);
      assert.equal(res.headers.location, `/v1/topups/${topup.id}`);
    }
    const me = await t.call(acct.key, 'GET', '/v1/me');
    assert.equal(me.json().available_minor, 0, 'nothing is credited before the payment succeeds');
  });

  test('return_url is kept percent-encoded, so it goes into a Location header as it is', async () => {
    const acct = await t.account();
    for (const [given, kept] of [
      ['https://shop.example/ключ', 'https://shop.example/%D0%BA%D0%BB%D1%8E%D1%87'],
      ['https://shop.example/a\u2028b?q=é', 'https://shop.example/a%E2%80%A8b?q=%C3%A9'],
      ['https://Shop.Example/a b', 'https://shop.example/a%20b'],
    ]) {
      const res = await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 1500, return_url: given });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().return_url, kept);
    }
    // 2,048 characters is the bound of the URL as kept and sent to YooKassa, encoded: 2,021 characters of
    // Cyrillic as sent are 12,021 once encoded, and refused before any payment is made.
    const long = await t.call(acct.key, 'POST', '/v1/topups', {
      amount_minor: 1500,
      return_url: `https://shop.example/${'ключ'.repeat(500)}`,
    });
    expectError(long, 422, 'invalid_request');
    assert.match(long.json().error.message, /return_url/);
    const fits = `https://shop.example/${'a'.repeat(2048 - 'https://shop.example/'.length)}`;
    assert.equal(
      (await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 1500, return_url: fits })).statusCode,
      201,
    );
  });

  test('Idempotency-Key: the same body replays the top-up, another body is 409, no second payment', async () => {
    const acct = await t.account();
    const headers = { 'idempotency-key': 'topup-1' };
    const first = await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 5000 }, headers);
    assert.equal(first.statusCode, 201, first.body);
    const again = await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 5000 }, headers);
    assert.equal(again.statusCode, 201, again.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.json().id, first.json().id);
    expectError(
      await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 6000 }, headers),
      409,
      'idempotency_conflict',
    );
    const list = await t.call(acct.key, 'GET', '/v1/topups');
    assert.equal(list.json().topups.length, 1);
  });

  test("another account's top-up is 404 topup_not_found, for reading and for paying", async () => {
    const owner = await t.account();
    const other = await t.account();
    const created = (await t.call(owner.key, 'POST', '/v1/topups', { amount_minor: 1000 })).json();
    expectError(await t.call(other.key, 'GET', `/v1/topups/${created.id}`), 404, 'topup_not_found');
    expectError(await t.call(owner.key, 'GET', '/v1/topups/tp_nothing'), 404, 'topup_not_found');
    await assert.rejects(
      t.container.services.topups.decideTest(other.id, created.id, 'succeeded'),
      /topup_not_found/,
    );
    assert.equal((await t.call(other.key, 'GET', '/v1/topups')).json().topups.length, 0);
  });

  test('Pay credits once with the payment id as reference; Decline cancels without money', async () => {
    const acct = await t.account();
    const paid = (await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 150_000 })).json();
    const declined = (await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 70_000 })).json();
    const topups = t.container.services.topups;
    assert.equal((await topups.decideTest(acct.id, paid.id, 'succeeded')).status, 'succeeded');
    assert.equal((await topups.decideTest(acct.id, paid.id, 'succeeded')).status, 'succeeded');
    assert.equal((await topups.decideTest(acct.id, declined.id, 'canceled')).status, 'canceled');
    // A decision after the final state changes nothing.
    assert.equal((await topups.decideTest(acct.id, declined.id, 'succeeded')).status, 'canceled');
    const view = (await t.call(acct.key, 'GET', `/v1/topups/${paid.id}`)).json();
    assert.equal(view.status, 'succeeded');
    assert.equal(view.confirmation_url, null);
    assert.deepEqual(await creditsOf(t, acct.id, await paymentOf(t, paid.id)), [150_000]);
    assert.deepEqual(await creditsOf(t, acct.id, await paymentOf(t, declined.id)), []);
    assert.equal((await t.call(acct.key, 'GET', '/v1/me')).json().available_minor, 150_000);
  });

  test('twenty concurrent settlements of one succeeded payment credit it once', async () => {
    const acct = await t.account();
    const created = (await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 2500 })).json();
    const paymentId = await paidUnnoticed(t, created.id);
    const topups = t.container.services.topups;
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => topups.settle(paymentId)));
    assert.deepEqual(new Set(outcomes), new Set(['succeeded']));
    const reads = await Promise.all(
      Array.from({ length: 10 }, () => t.call(acct.key, 'GET', `/v1/topups/${created.id}`)),
    );
    for (const res of reads) assert.equal(res.json().status, 'succeeded');
    assert.deepEqual(await creditsOf(t, acct.id, paymentId), [2500]);
    assert.equal((await t.call(acct.key, 'GET', '/v1/me')).json().available_minor, 2500);
  });

  test('Pay and Decline pressed at once in two processes: succeeded with one credit, or canceled with none', {
    // Two services in one process on one SQLite file would wait for each other's write lock on the one
    // event loop (busy_timeout blocks it); on PostgreSQL each has its own connections, as two processes do.
    skip: process.env.TEST_DATABASE_URL ? false : 'PostgreSQL only (TEST_DATABASE_URL)',
  }, async () => {
    // A second process's services on the same database: its own reads of a payment, not shared with ours.
    const other = await createContainer(
      loadConfig({ ...sharedProcessEnv(t), PAYMENTS: 'test', LOG_LEVEL: 'silent' }),
    );
    try {
      const acct = await t.account();
      const made = await Promise.all(
        Array.from({ length: 12 }, async () => {
          const res = await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 1_000 });
          assert.equal(res.statusCode, 201, res.body);
          return res.json().id as string;
        }),
      );
      // Each top-up gets both buttons at once, from both processes, in both orders.
      await Promise.all(
        made.flatMap((id, i) => {
          const [pay, decline] = i % 2 === 0 ? [t.container, other] : [other, t.container];
          return [
            pay.services.topups.decideTest(acct.id, id, 'succeeded'),
            decline.services.topups.decideTest(acct.id, id, 'canceled'),
          ];
        }),
      );
      let succeeded = 0;
      for (const id of made) {
        const topup = (await t.call(acct.key, 'GET', `/v1/topups/${id}`)).json();
        const paymentId = await paymentOf(t, id);
        const payment = await t.container.db.db
          .selectFrom('test_payments')
          .select('status')
          .where('id', '=', paymentId)
          .executeTakeFirstOrThrow();
        assert.equal(topup.status, payment.status, `top-up ${id}`);
        assert.deepEqual(
          await creditsOf(t, acct.id, paymentId),
          topup.status === 'succeeded' ? [1_000] : [],
          `top-up ${id}`,
        );
        if (topup.status === 'succeeded') succeeded += 1;
      }
      assert.equal((await t.call(acct.key, 'GET', '/v1/me')).json().available_minor, succeeded * 1_000);
    } finally {
      await other.close();
    }
  });

  test('ten creations sent at once with one Idempotency-Key make one top-up and one payment', async () => {
    const acct = await t.account();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 4000 }, { 'idempotency-key': 'burst' }),
      ),
    );
    const created = answers.filter((a) => a.statusCode === 201);
    for (const answer of answers.filter((a) => a.statusCode !== 201)) {
      expectError(answer, 409, 'request_in_progress');
    }
    assert.ok(created.length >= 1);
    assert.equal(new Set(created.map((a) => a.json().id)).size, 1);
    assert.equal((await t.call(acct.key, 'GET', '/v1/topups')).json().topups.length, 1);
    const payments = await t.container.db.db
      .selectFrom('test_payments')
      .select('id')
      .where('topup_id', '=', created[0]?.json().id)
      .execute();
    assert.equal(payments.length, 1);
  });

  test("an operator's credit cannot take a top-up's payment id; a taken one leaves the top-up pending", async () => {
    const acct = await t.account();
    const other = await t.account();
    const created = (await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 10_000 })).json();
    const paymentId = await paymentOf(t, created.id);
    const taken = await t.admin('POST', `/admin/v1/accounts/${acct.id}/credits`, {
      amount_minor: 500,
      reference: paymentId,
    });
    expectError(taken, 409, 'credit_reference_conflict');
    assert.match(taken.json().error.message, /payment id/);
    // References are per account: another account may use the same text.
    const elsewhere = await t.admin('POST', `/admin/v1/accounts/${other.id}/credits`, {
      amount_minor: 500,
      reference: paymentId,
    });
    assert.equal(elsewhere.statusCode, 201, elsewhere.body);
    // A credit made under the payment id before the API refused it: the payment's success is not
    // credited under another reference and not answered with an error the provider would resend.
    const db = t.container.db;
    await db.dialect.transaction(db.db, (tx) =>
      credit(tx, { accountId: acct.id, amountMinor: 500, reference: paymentId, at: new Date() }),
    );
    await db.db
      .updateTable('test_payments')
      .set({ status: 'succeeded' })
      .where('id', '=', paymentId)
      .execute();
    assert.equal(await t.container.services.topups.settle(paymentId), 'pending');
    assert.equal((await t.call(acct.key, 'GET', `/v1/topups/${created.id}`)).json().status, 'pending');
    assert.deepEqual(await creditsOf(t, acct.id, paymentId), [500]);
  });

  test('the list is newest first with a cursor; the operator filters by account and status', async () => {
    const acct = await t.account();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 100 + i })).json().id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/v1/topups?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await t.call(acct.key, 'GET', url);
      assert.equal(page.statusCode, 200, page.body);
      seen.push(...page.json().topups.map((x: { id: string }) => x.id));
      cursor = page.json().next_cursor;
    } while (cursor);
    assert.deepEqual(seen, [...ids].reverse());
    expectError(await t.call(acct.key, 'GET', '/v1/topups?cursor=bogus'), 422, 'invalid_request');
    // ?lang= chooses the language of messages here as on every route (CONTRACT §8).
    assert.equal((await t.call(acct.key, 'GET', '/v1/topups?lang=ru')).statusCode, 200);
    const ru = await t.call(acct.key, 'GET', '/v1/topups?cursor=bogus&lang=ru');
    expectError(ru, 422, 'invalid_request');
    assert.match(ru.json().error.message, /[а-я]/i);
    assert.equal((await t.admin('GET', '/admin/v1/topups?lang=en')).statusCode, 200);
    await t.container.services.topups.decideTest(acct.id, ids[0] as string, 'succeeded');
    const mine = await t.admin('GET', `/admin/v1/topups?account_id=${acct.id}&status=succeeded`);
    assert.equal(mine.statusCode, 200, mine.body);
    assert.deepEqual(
      mine.json().topups.map((x: { id: string; account_id: string }) => [x.id, x.account_id]),
      [[ids[0], acct.id]],
    );
    expectError(await t.admin('GET', '/admin/v1/topups?status=paid'), 422, 'invalid_request');
    // Every field sent empty, as docs/payments.md writes the query, is no filter (docs/decisions.md).
    const mineEmpty = await t.call(acct.key, 'GET', '/v1/topups?cursor=&limit=');
    assert.equal(mineEmpty.statusCode, 200, mineEmpty.body);
    assert.deepEqual(
      mineEmpty.json().topups.map((x: { id: string }) => x.id),
      [...ids].reverse(),
    );
    const all = await t.admin('GET', '/admin/v1/topups?account_id=&status=&cursor=');
    assert.equal(all.statusCode, 200, all.body);
    assert.deepEqual(all.json(), (await t.admin('GET', '/admin/v1/topups')).json());
    assert.ok(all.json().topups.some((x: { id: string }) => x.id === ids[0]));
  });

  test('an account whose person has not confirmed the e-mail cannot top up (403 email_not_confirmed)', async () => {
    const acct = await t.account();
    await t.container.db.db
      .insertInto('people')
      .values({
        id: `p-${acct.id}`,
        account_id: acct.id,
        email: `${acct.id}@example.com`,
        password_hash: null,
        email_confirmed_at: null,
        lang: null,
        created_at: new Date().toISOString(),
      })
      .execute();
    expectError(
      await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 1000 }),
      403,
      'email_not_confirmed',
    );
  });
});

describe('top-ups switched off (PAYMENTS=off, the default)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ worker: false });
  });
  after(() => t.close());

  test('creating is 503 payments_unavailable with Retry-After; nothing is kept', async () => {
    const acct = await t.account();
    const res = await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 1000 });
    expectError(res, 503, 'payments_unavailable');
    assert.ok(Number(res.headers['retry-after']) >= 1);
    assert.equal((await t.call(acct.key, 'GET', '/v1/topups')).json().topups.length, 0);
    // The notification endpoint takes anything and does nothing.
    const note = await t.app.inject({
      method: 'POST',
      url: '/v1/payments/yookassa/notifications',
      payload: { type: 'notification', event: 'payment.succeeded', object: { id: 'x' } },
    });
    assert.equal(note.statusCode, 200);
  });
});

describe('the sweep of pending top-ups (test mode, a manual clock)', () => {
  const clock = new ManualClock(new Date());
  const captured = new Captured();
  let t: TestApp;
  before(async () => {
    t = await startTestApp({
      worker: false,
      clock,
      env: { PAYMENTS: 'test', LOG_LEVEL: 'error' },
      logDestination: captured,
    });
  });
  after(() => t.close());

  test('a paid top-up is credited by the sweep once idle for a minute; one unpaid for a day ends canceled', async () => {
    const acct = await t.account();
    const paid = (await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 1200 })).json();
    const unpaid = (await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 3400 })).json();
    const paymentId = await paidUnnoticed(t, paid.id);
    const topups = t.container.services.topups;
    assert.equal(await topups.sweep(), 0, 'nothing idle for a minute yet');
    clock.advance(61_000);
    assert.equal(await topups.sweep(), 2);
    assert.deepEqual(await creditsOf(t, acct.id, paymentId), [1200]);
    const stillPending = await t.admin('GET', `/admin/v1/topups?account_id=${acct.id}&status=pending`);
    assert.deepEqual(
      stillPending.json().topups.map((x: { id: string }) => x.id),
      [unpaid.id],
    );
    clock.advance(24 * 60 * 60 * 1000);
    await topups.sweep();
    const view = (await t.call(acct.key, 'GET', `/v1/topups/${unpaid.id}`)).json();
    assert.equal(view.status, 'canceled');
    assert.equal(view.cancellation_reason, 'expired_on_confirmation');
    assert.deepEqual(await creditsOf(t, acct.id, paymentId), [1200]);
  });

  test('a paid top-up that cannot be credited is logged once, left to the operator, not swept again', async () => {
    const acct = await t.account();
    const created = (await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 7700 })).json();
    const paymentId = await paidUnnoticed(t, created.id);
    // The provider's payment says another amount than the top-up asked for: never credited.
    await t.container.db.db
      .updateTable('test_payments')
      .set({ amount_minor: 7701 })
      .where('id', '=', paymentId)
      .execute();
    const topups = t.container.services.topups;
    const told = () =>
      captured
        .lines()
        .filter((line) => line['msg'] === 'a succeeded payment does not match its top-up; not credited');
    const operatorRow = async () =>
      (await t.admin('GET', `/admin/v1/topups?account_id=${acct.id}`))
        .json()
        .topups.find((x: { id: string }) => x.id === created.id);
    clock.advance(61_000);
    assert.equal(await topups.sweep(), 1, 'read back once');
    assert.equal(told().length, 1);
    assert.equal(told()[0]?.['topupId'], created.id);
    const marked = clock.now().toISOString();
    assert.deepEqual(
      [(await operatorRow()).status, (await operatorRow()).needs_operator_at],
      ['pending', marked],
    );
    for (let pass = 0; pass < 3; pass++) {
      clock.advance(61_000);
      assert.equal(await topups.sweep(), 0, 'the sweep reads it no more');
    }
    clock.advance(24 * 60 * 60 * 1000);
    assert.equal(await topups.sweep(), 0, 'nor ends it after a day: the payer paid');
    // The payer's read still reads it back, changes nothing and tells nobody again.
    assert.equal((await t.call(acct.key, 'GET', `/v1/topups/${created.id}`)).json().status, 'pending');
    assert.equal(await topups.settle(paymentId), 'pending');
    assert.equal(told().length, 1);
    assert.equal((await operatorRow()).needs_operator_at, marked);
    assert.deepEqual(await creditsOf(t, acct.id, paymentId), []);
    // The console says so on the operator's list.
    const page = await (await operatorSignedIn(t)).get(`/admin/topups?account=${acct.id}`);
    assert.match(textOf(page.body), /Waiting for payment paid, not credited: see the log/);
  });

  test('top-ups a day old that the provider cannot end go to the back of the sweep, not stay first', async () => {
    const acct = await t.account();
    const topups = t.container.services.topups;
    // Pending since before a switch of the payment mode: the test provider has no payment of theirs.
    const stale: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = (await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 100 + i })).json();
      const paymentId = await paymentOf(t, created.id);
      await t.container.db.db.deleteFrom('test_payments').where('id', '=', paymentId).execute();
      stale.push(created.id);
    }
    clock.advance(24 * 60 * 60 * 1000 + 61_000);
    const paid = (await t.call(acct.key, 'POST', '/v1/topups', { amount_minor: 5600 })).json();
    const paymentId = await paidUnnoticed(t, paid.id);
    clock.advance(61_000);
    // Passes of two: the three stale ones must not take every pass's places.
    for (let pass = 0; pass < 3; pass++) await topups.sweep({ limit: 2 });
    assert.deepEqual(await creditsOf(t, acct.id, paymentId), [5600]);
    for (const id of stale)
      assert.equal((await t.call(acct.key, 'GET', `/v1/topups/${id}`)).json().status, 'pending');
  });
});
