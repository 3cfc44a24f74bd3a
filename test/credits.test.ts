import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { balances, expectError, startTestApp, type TestApp } from './helpers.ts';

describe('credits once per reference', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ worker: false });
  });
  after(() => t.close());

  /** The amounts of the account's ledger entries under `reference`. */
  const creditedUnder = async (accountId: string, reference: string): Promise<number[]> =>
    (
      await t.container.db.db
        .selectFrom('ledger_entries')
        .select('amount_minor')
        .where('account_id', '=', accountId)
        .where('reference', '=', reference)
        .execute()
    ).map((e) => Number(e.amount_minor));

  test('[10.12] a reused reference with another amount is 409 credit_reference_conflict; the same amount replays', async () => {
    const id = (await t.admin('POST', '/admin/v1/accounts', { name: 'Acme' })).json().id as string;
    const url = `/admin/v1/accounts/${id}/credits`;
    const first = await t.admin('POST', url, { amount_minor: 50_000, reference: 'invoice-17' });
    assert.equal(first.statusCode, 201, first.body);
    const replay = await t.admin('POST', url, { amount_minor: 50_000, reference: 'invoice-17' });
    assert.equal(replay.statusCode, 200, replay.body);
    assert.equal(replay.json().id, first.json().id);
    const conflict = await t.admin('POST', url, { amount_minor: 70_000, reference: 'invoice-17' });
    expectError(conflict, 409, 'credit_reference_conflict');
    assert.match(conflict.json().error.message, /invoice-17/);
    const russian = await t.admin('POST', `${url}?lang=ru`, {
      amount_minor: 70_000,
      reference: 'invoice-17',
    });
    expectError(russian, 409, 'credit_reference_conflict');
    assert.match(russian.json().error.message, /[а-я]/);
    assert.equal((await balances(t, id)).balance_minor, 50_000);
  });

  test('the same reference sent ten times at once credits once (the partial unique index holds)', async () => {
    const id = (await t.admin('POST', '/admin/v1/accounts', { name: 'Race' })).json().id as string;
    const url = `/admin/v1/accounts/${id}/credits`;
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => t.admin('POST', url, { amount_minor: 12_345, reference: 'race-1' })),
    );
    const codes = answers.map((a) => a.statusCode).sort();
    assert.deepEqual(codes, [200, 200, 200, 200, 200, 200, 200, 200, 200, 201], answers[0]?.body);
    assert.equal(new Set(answers.map((a) => a.json().id)).size, 1);
    assert.deepEqual(await creditedUnder(id, 'race-1'), [12_345]);
    assert.equal((await balances(t, id)).balance_minor, 12_345);
  });

  test('ten amounts sent at once under one reference: one is credited, the nine others are 409', async () => {
    const id = (await t.admin('POST', '/admin/v1/accounts', { name: 'Race amounts' })).json().id as string;
    const url = `/admin/v1/accounts/${id}/credits`;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        t.admin('POST', url, { amount_minor: 1_000 + i, reference: 'race-2' }),
      ),
    );
    const won = answers.filter((a) => a.statusCode === 201);
    assert.equal(won.length, 1, answers.map((a) => a.body).join('\n'));
    for (const answer of answers.filter((a) => a.statusCode !== 201)) {
      expectError(answer, 409, 'credit_reference_conflict');
    }
    const amount = won[0]?.json().amount_minor as number;
    assert.deepEqual(await creditedUnder(id, 'race-2'), [amount]);
    assert.equal((await balances(t, id)).balance_minor, amount);
  });
});
