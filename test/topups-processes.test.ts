/**
 * Exactly-once top-up credits across real processes (CONTRACT §14): an API process killed with -9 while
 * it reads a succeeded payment back (between YooKassa's success and our credit) loses nothing and credits
 * once after a restart; two API processes on one database settling the same payments at once, many times
 * over, leave exactly one ledger credit per payment. Runs on SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { YookassaFake } from './fakes/yookassa.ts';
import { sharedProcessEnv, startTestApp, type TestApp } from './helpers.ts';
import { exited, freePort, type Server, startServer } from './processes.ts';

async function call(server: Server, key: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: () => JSON.parse(text) as Record<string, unknown> };
}

describe('top-up credits across processes', () => {
  let fake: YookassaFake;
  let t: TestApp;
  const env = (port: number): Record<string, string> => ({
    ...sharedProcessEnv(t),
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    ...fake.env,
    WORKER: 'off',
  });
  const credits = async (
    accountId: string,
  ): Promise<Array<{ reference: string | null; amount_minor: number }>> =>
    (
      await t.container.db.db
        .selectFrom('ledger_entries')
        .select(['reference', 'amount_minor'])
        .where('account_id', '=', accountId)
        .where('type', '=', 'credit')
        .execute()
    ).map((e) => ({ reference: e.reference, amount_minor: Number(e.amount_minor) }));

  before(async () => {
    fake = await YookassaFake.start();
    t = await startTestApp({ worker: false });
  });
  after(async () => {
    await t.close();
    await fake.close();
  });

  test('kill -9 between the provider’s success and our credit, then a restart: one credit', async () => {
    const port = await freePort();
    const first = await startServer(env(port));
    fake.notifyUrl = `${first.base}/v1/payments/yookassa/notifications`;
    const account = await t.account();
    const created = await call(first, account.key, 'POST', '/v1/topups', { amount_minor: 150_000 });
    assert.equal(created.status, 201);
    const topupId = created.json().id as string;
    const payment = [...fake.payments.values()].find((p) => p.metadata.topup_id === topupId);
    assert.ok(payment);
    fake.succeed(payment.id);
    // The process takes the notification and reads the payment back; YooKassa's answer never comes.
    fake.holdReads = true;
    const reads = fake.reads;
    const lost = fake.notify(payment.id);
    for (let i = 0; i < 400 && fake.reads === reads; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(fake.reads, reads + 1, 'the process is reading the payment back');
    first.child.kill('SIGKILL');
    await exited(first.child);
    assert.equal(await lost, null, 'the notification got no answer, so YooKassa will send it again');
    assert.deepEqual(await credits(account.id), []);
    fake.holdReads = false;

    const second = await startServer(env(port));
    try {
      // YooKassa resends (twice, as it may), and the payer's browser reads the top-up too.
      const resent = await Promise.all([fake.notify(payment.id), fake.notify(payment.id)]);
      assert.deepEqual(resent, [200, 200]);
      const view = await call(second, account.key, 'GET', `/v1/topups/${topupId}`);
      assert.equal(view.json().status, 'succeeded');
      assert.deepEqual(await credits(account.id), [{ reference: payment.id, amount_minor: 150_000 }]);
    } finally {
      second.child.kill('SIGTERM');
      await exited(second.child);
    }
  });

  test('two API processes settling the same payments concurrently, many times: one credit each', async () => {
    const [portA, portB] = [await freePort(), await freePort()];
    const a = await startServer(env(portA));
    const b = await startServer(env(portB));
    try {
      const account = await t.account();
      const payments: string[] = [];
      for (let i = 0; i < 8; i++) {
        const created = await call(i % 2 ? a : b, account.key, 'POST', '/v1/topups', {
          amount_minor: 1000 + i,
        });
        assert.equal(created.status, 201);
        const id = created.json().id as string;
        const payment = [...fake.payments.values()].find((p) => p.metadata.topup_id === id);
        assert.ok(payment);
        fake.succeed(payment.id);
        payments.push(payment.id);
      }
      const urls = [a, b].map((s) => `${s.base}/v1/payments/yookassa/notifications`);
      const answers = await Promise.all(
        payments.flatMap((id) =>
          Array.from({ length: 6 }, async (_, n) => {
            const answer = await fetch(urls[n % 2] as string, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(fake.notification(id)),
            });
            await answer.arrayBuffer();
            return answer.status;
          }),
        ),
      );
      assert.deepEqual(new Set(answers), new Set([200]));
      const got = await credits(account.id);
      assert.equal(got.length, payments.length, JSON.stringify(got));
      assert.deepEqual(new Set(got.map((c) => c.reference)), new Set(payments));
      const me = await call(a, account.key, 'GET', '/v1/me');
      assert.equal(
        me.json().available_minor,
        payments.reduce((sum, _, i) => sum + 1000 + i, 0),
      );
    } finally {
      for (const s of [a, b]) {
        s.child.kill('SIGTERM');
        await exited(s.child);
      }
    }
  });
});
