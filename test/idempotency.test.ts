import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { balances, expectError, startTestApp, type TestApp } from './helpers.ts';

const body = (prompt = 'a vase') => ({
  model: 'model-3d',
  settings: { task_type: 'text_to_model', prompt, texture: false, pbr: false },
});

describe('Idempotency-Key (CONTRACT §4)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('same key, same request: the same task with the original status and Idempotent-Replayed; no second hold', async () => {
    const acct = await t.account({ balanceMinor: 10_000 });
    const headers = { 'idempotency-key': 'order-1' };
    const first = await t.call(acct.key, 'POST', '/v1/tasks', body(), headers);
    assert.equal(first.statusCode, 202);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    // Key order inside settings does not matter: the request is compared as canonical JSON.
    const reordered = {
      settings: { pbr: false, prompt: 'a vase', texture: false, task_type: 'text_to_model' },
      model: 'model-3d',
    };
    const again = await t.call(acct.key, 'POST', '/v1/tasks', reordered, headers);
    assert.equal(again.statusCode, 202);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.json().id, first.json().id);
    const after = await balances(t, acct.id);
    assert.equal(
      after.balance_minor - after.available_minor + (10_000 - after.balance_minor),
      first.json().price.amount_minor,
    );
    const ledger = (await t.admin('GET', `/admin/v1/accounts/${acct.id}/ledger`)).json().entries as Array<{
      type: string;
    }>;
    assert.equal(ledger.filter((e) => e.type === 'hold').length, 1);
  });

  test('same key, other request: 409 idempotency_conflict; the key is per account', async () => {
    const acct = await t.account({ balanceMinor: 10_000 });
    const headers = { 'idempotency-key': 'order-2' };
    await t.call(acct.key, 'POST', '/v1/tasks', body('one'), headers);
    expectError(
      await t.call(acct.key, 'POST', '/v1/tasks', body('two'), headers),
      409,
      'idempotency_conflict',
    );
    // All keys of the account share the scope.
    const second = (await t.admin('POST', `/admin/v1/accounts/${acct.id}/keys`, {})).json().key;
    expectError(await t.call(second, 'POST', '/v1/tasks', body('two'), headers), 409, 'idempotency_conflict');
    // Another account may use the same key freely.
    const other = await t.account({ balanceMinor: 10_000 });
    assert.equal((await t.call(other.key, 'POST', '/v1/tasks', body('two'), headers)).statusCode, 202);
  });

  test('a refused request does not bind the key', async () => {
    const acct = await t.account({ balanceMinor: 100 });
    const headers = { 'idempotency-key': 'order-3' };
    expectError(await t.call(acct.key, 'POST', '/v1/tasks', body(), headers), 402, 'insufficient_funds');
    await t.admin('POST', `/admin/v1/accounts/${acct.id}/credits`, {
      amount_minor: 10_000,
      reference: 'top-up',
    });
    assert.equal((await t.call(acct.key, 'POST', '/v1/tasks', body('other now'), headers)).statusCode, 202);
  });

  test('20 concurrent identical requests make one task and one hold', async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const headers = { 'idempotency-key': 'burst' };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => t.call(acct.key, 'POST', '/v1/tasks', body('burst'), headers)),
    );
    const accepted = answers.filter((r) => r.statusCode === 202);
    const inProgress = answers.filter((r) => r.statusCode === 409);
    assert.equal(accepted.length + inProgress.length, 20);
    assert.equal(new Set(accepted.map((r) => r.json().id)).size, 1);
    for (const r of inProgress) {
      expectError(r, 409, 'request_in_progress');
      assert.equal(r.headers['retry-after'], '1');
    }
    const tasks = await t.container.db.db
      .selectFrom('tasks')
      .select('id')
      .where('account_id', '=', acct.id)
      .execute();
    assert.equal(tasks.length, 1);
    const ledger = (await t.admin('GET', `/admin/v1/accounts/${acct.id}/ledger`)).json().entries as Array<{
      type: string;
    }>;
    assert.equal(ledger.filter((e) => e.type === 'hold').length, 1);
    const replay = await t.call(acct.key, 'POST', '/v1/tasks', body('burst'), headers);
    assert.equal(replay.json().id, tasks[0]!.id);
  });

  test('a malformed Idempotency-Key is 422 invalid_request', async () => {
    const acct = await t.account({ balanceMinor: 10_000 });
    expectError(
      await t.call(acct.key, 'POST', '/v1/tasks', body(), { 'idempotency-key': 'x'.repeat(256) }),
      422,
      'invalid_request',
    );
  });

  test('a space is a printable character: a key with one is taken and replayed', async () => {
    const acct = await t.account({ balanceMinor: 10_000 });
    const headers = { 'idempotency-key': 'order 42' };
    const first = await t.call(acct.key, 'POST', '/v1/tasks', body('spaced'), headers);
    assert.equal(first.statusCode, 202, first.body);
    const again = await t.call(acct.key, 'POST', '/v1/tasks', body('spaced'), headers);
    assert.equal(again.statusCode, 202);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.json().id, first.json().id);
    // Other bytes are still refused.
    expectError(
      await t.call(acct.key, 'POST', '/v1/tasks', body(), { 'idempotency-key': 'tab\there' }),
      422,
      'invalid_request',
    );
  });

  test('two Idempotency-Key headers are 422, not one key joined from both', async () => {
    const acct = await t.account({ balanceMinor: 10_000 });
    const twice = await t.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: { authorization: `Bearer ${acct.key}`, 'idempotency-key': ['order-a', 'order-b'] },
      payload: body('twice'),
    });
    expectError(twice, 422, 'invalid_request');
    assert.match(twice.json().error.message, /one Idempotency-Key/);
    const listed = await t.call(acct.key, 'GET', '/v1/tasks');
    assert.equal(listed.json().tasks.length, 0, 'no task was made');
    // Each key alone is still a key of its own.
    const first = await t.call(acct.key, 'POST', '/v1/tasks', body('twice'), {
      'idempotency-key': 'order-a',
    });
    assert.equal(first.statusCode, 202, first.body);
  });
});
