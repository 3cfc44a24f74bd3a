/**
 * The optional sender check of YooKassa's notifications (`YOOKASSA_CHECK_IP`, PROVIDERS.md §8), on the real
 * app against the in-repo fake: with the check on, a notification from outside YooKassa's ranges is answered
 * 200 and changes nothing (not even a read-back), one from inside credits once; TRUST_PROXY decides who the
 * sender is, as for the limits per address; with the check off (the default) the sender does not matter.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { YookassaFake } from './fakes/yookassa.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { Captured } from './log-capture.ts';

const NOTIFY = '/v1/payments/yookassa/notifications';
const PROXY = '10.9.8.7';

/** The notification endpoint, a top-up whose payment has succeeded at the fake, and what the app recorded. */
function kit(fakeOf: () => YookassaFake, app: () => TestApp) {
  return {
    notify: (paymentId: string, remoteAddress: string, headers: Record<string, string> = {}) =>
      app().app.inject({
        method: 'POST',
        url: NOTIFY,
        payload: fakeOf().notification(paymentId),
        headers: { 'content-type': 'application/json', ...headers },
        remoteAddress,
      }),
    async paidTopUp(amount_minor: number): Promise<{ accountId: string; id: string; paymentId: string }> {
      const acct = await app().account();
      const res = await app().call(acct.key, 'POST', '/v1/topups', { amount_minor });
      assert.equal(res.statusCode, 201, res.body);
      const id = res.json().id as string;
      const fake = fakeOf();
      const payment = [...fake.payments.values()].find((p) => p.metadata.topup_id === id);
      assert.ok(payment);
      fake.succeed(payment.id);
      return { accountId: acct.id, id, paymentId: payment.id };
    },
    /** The top-up's stored status: the operator's list never reads the payment back. */
    async status(accountId: string, id: string): Promise<string> {
      const list = await app().admin('GET', `/admin/v1/topups?account_id=${accountId}`);
      return (list.json().topups as Array<{ id: string; status: string }>).find((x) => x.id === id)
        ?.status as string;
    },
    async credits(accountId: string): Promise<Array<[string | null, number]>> {
      const ledger = await app().admin('GET', `/admin/v1/accounts/${accountId}/ledger`);
      return (
        ledger.json().entries as Array<{ type: string; reference: string | null; amount_minor: number }>
      )
        .filter((e) => e.type === 'credit')
        .map((e) => [e.reference, e.amount_minor]);
    },
  };
}

describe('YOOKASSA_CHECK_IP=on', () => {
  let fake: YookassaFake;
  let t: TestApp;
  const log = new Captured();
  before(async () => {
    fake = await YookassaFake.start();
    t = await startTestApp({
      worker: false,
      logDestination: log,
      env: {
        LOG_LEVEL: 'info',
        ...fake.env,
        YOOKASSA_CHECK_IP: 'on',
        TRUST_PROXY: PROXY,
      },
    });
  });
  after(async () => {
    await t.close();
    await fake.close();
  });
  const k = kit(
    () => fake,
    () => t,
  );

  test('from outside the ranges: 200, never read back, nothing moves; from inside: credited once', async () => {
    const { accountId, id, paymentId } = await k.paidTopUp(150_000);
    const reads = fake.reads;
    for (const outside of [
      '203.0.113.9',
      '127.0.0.1',
      '185.71.76.32',
      '77.75.156.12',
      '::ffff:185.71.76.32',
      '::185.71.76.1',
      '2a02:5181::1',
    ]) {
      const res = await k.notify(paymentId, outside);
      assert.equal(res.statusCode, 200, `${outside}: ${res.body}`);
      assert.deepEqual(res.json(), { received: true });
    }
    assert.equal(fake.reads, reads, 'no notification from outside made us read the payment');
    assert.equal(await k.status(accountId, id), 'pending');
    assert.deepEqual(await k.credits(accountId), []);

    // IPv4, IPv4-mapped IPv6 and IPv6 senders inside the ranges: read back, credited once in all.
    for (const inside of ['185.71.76.1', '::ffff:77.75.156.11', '2a02:5180::7', '77.75.154.200']) {
      const res = await k.notify(paymentId, inside);
      assert.equal(res.statusCode, 200, `${inside}: ${res.body}`);
    }
    assert.equal(await k.status(accountId, id), 'succeeded');
    assert.deepEqual(await k.credits(accountId), [[paymentId, 150_000]]);
  });

  test('an IPv6 sender of YooKassa credits on its own', async () => {
    const { accountId, id, paymentId } = await k.paidTopUp(4200);
    assert.equal((await k.notify(paymentId, '2a02:5180::1')).statusCode, 200);
    assert.equal(await k.status(accountId, id), 'succeeded');
    assert.deepEqual(await k.credits(accountId), [[paymentId, 4200]]);
  });

  test('behind TRUST_PROXY the forwarded client is the sender; nobody else can name one', async () => {
    const { accountId, id, paymentId } = await k.paidTopUp(7700);
    for (const [peer, forwarded] of [
      // Not a trusted proxy: its X-Forwarded-For is ignored, the peer itself is outside.
      ['10.9.8.6', '185.71.76.1'],
      // The trusted proxy with no forwarded client: the proxy is the sender.
      [PROXY, null],
      // A client naming a YooKassa address before its own: the proxy reports the client's own.
      [PROXY, '185.71.76.1, 203.0.113.9'],
    ] as const) {
      const headers: Record<string, string> = forwarded === null ? {} : { 'x-forwarded-for': forwarded };
      assert.equal((await k.notify(paymentId, peer, headers)).statusCode, 200);
    }
    assert.equal(await k.status(accountId, id), 'pending');
    assert.deepEqual(await k.credits(accountId), []);
    const res = await k.notify(paymentId, PROXY, { 'x-forwarded-for': '185.71.77.5' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(await k.status(accountId, id), 'succeeded');
    assert.deepEqual(await k.credits(accountId), [[paymentId, 7700]]);
  });

  test('a body that is not JSON is 400 from any sender, so the answer never tells the check is on', async () => {
    for (const remoteAddress of ['203.0.113.9', '185.71.76.1']) {
      const res = await t.app.inject({
        method: 'POST',
        url: NOTIFY,
        payload: 'not json',
        headers: { 'content-type': 'application/json' },
        remoteAddress,
      });
      assert.equal(res.statusCode, 400, `${remoteAddress}: ${res.body}`);
    }
  });

  test('an ignored notification is logged with its sender and payment, without secrets', async () => {
    const { paymentId } = await k.paidTopUp(1000);
    await k.notify(paymentId, '198.51.100.4');
    const line = log.lines().find((l) => l.sender === '198.51.100.4' && l.paymentId === paymentId);
    assert.ok(line, 'the ignored notification was logged');
    assert.equal(line.level, 40, 'at warn');
    assert.match(String(line.msg), /outside YooKassa's addresses; ignored/);
    assert.ok(!log.text.includes(fake.secretKey), 'the shop secret is never logged');
  });
});

describe('YOOKASSA_CHECK_IP unset (off)', () => {
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
  const k = kit(
    () => fake,
    () => t,
  );

  test('any sender is acted upon, and repeated notifications still credit once', async () => {
    assert.equal(t.container.config.payments.yookassa?.checkSenderIp, false);
    const { accountId, id, paymentId } = await k.paidTopUp(9900);
    for (const sender of ['203.0.113.9', '127.0.0.1', '185.71.76.1']) {
      assert.equal((await k.notify(paymentId, sender)).statusCode, 200);
    }
    assert.equal(await k.status(accountId, id), 'succeeded');
    assert.deepEqual(await k.credits(accountId), [[paymentId, 9900]]);
  });
});
