import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, expectError, startTestApp, type TestApp } from './helpers.ts';

describe('authentication and keys', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('a valid key opens /v1; missing, malformed, unknown and revoked keys are 401 invalid_api_key', async () => {
    const acct = await t.account({ balanceMinor: 1000 });
    assert.equal((await t.call(acct.key, 'GET', '/v1/models')).statusCode, 200);
    expectError(await t.app.inject({ method: 'GET', url: '/v1/models' }), 401, 'invalid_api_key');
    for (const header of [
      'Basic abc',
      'Bearer',
      'Bearer ',
      `Token ${acct.key}`,
      `Bearer ${acct.key}x`,
      'Bearer gta_unknown',
    ]) {
      expectError(
        await t.app.inject({ method: 'GET', url: '/v1/models', headers: { authorization: header } }),
        401,
        'invalid_api_key',
      );
    }
  });

  test('two Authorization headers are 401 whichever holds the key: one request, one credential', async () => {
    // Node keeps the first of several Authorization lines, where a proxy in front may read the last: a
    // valid key in the first line was served, in the second refused. Neither is taken now, nor counted as
    // a guess; the key, just used alone, is in the key cache, which must not answer for it either.
    const acct = await t.account();
    assert.equal((await t.call(acct.key, 'GET', '/v1/me')).statusCode, 200);
    for (const authorization of [
      [`Bearer ${acct.key}`, 'Bearer gta_unknown'],
      ['Bearer gta_unknown', `Bearer ${acct.key}`],
      [`Bearer ${acct.key}`, `Bearer ${acct.key}`],
    ]) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/v1/me',
        headers: { Authorization: authorization },
      });
      expectError(res, 401, 'invalid_api_key');
      assert.equal(res.headers['www-authenticate'], 'Bearer', 'no token was taken');
    }
    for (const authorization of [
      [`Bearer ${ADMIN_TOKEN}`, 'Bearer wrong-token'],
      [`Bearer ${ADMIN_TOKEN}`, `Bearer ${ADMIN_TOKEN}`],
    ]) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/admin/v1/accounts',
        headers: { Authorization: authorization },
      });
      expectError(res, 401, 'invalid_admin_token');
    }
  });

  test('revoking a key answers 204 and the key is 401 from then on; other keys of the account still work', async () => {
    const acct = await t.account();
    const second = await t.admin('POST', `/admin/v1/accounts/${acct.id}/keys`, { name: 'second' });
    // Used just before: the key is in the process's key cache, which must forget it on revocation.
    assert.equal((await t.call(acct.key, 'GET', '/v1/me')).statusCode, 200);
    const revoke = await t.admin('DELETE', `/admin/v1/keys/${acct.keyId}`);
    assert.equal(revoke.statusCode, 204);
    expectError(await t.call(acct.key, 'GET', '/v1/me'), 401, 'invalid_api_key');
    assert.equal((await t.call(second.json().key, 'GET', '/v1/me')).statusCode, 200);
    expectError(
      await t.admin('DELETE', '/admin/v1/keys/00000000-0000-0000-0000-000000000000'),
      404,
      'key_not_found',
    );
  });

  test('keys are stored hashed: the database never holds a plain key', async () => {
    const acct = await t.account();
    const rows = await t.container.db.db.selectFrom('api_keys').selectAll().execute();
    const dump = JSON.stringify(rows);
    assert.ok(!dump.includes(acct.key), 'plain key found in api_keys');
    const row = rows.find((r) => r.id === acct.keyId);
    assert.match(row?.key_hash ?? '', /^[0-9a-f]{64}$/);
    assert.equal(row?.prefix, acct.key.slice(0, 12));
  });

  test('at most 10 active keys per account: the 11th is 409 too_many_keys, a revoked one frees a place', async () => {
    const acct = await t.account();
    const ids = [acct.keyId];
    for (let i = 0; i < 9; i++) {
      const res = await t.admin('POST', `/admin/v1/accounts/${acct.id}/keys`, {});
      assert.equal(res.statusCode, 201);
      ids.push(res.json().id);
    }
    expectError(await t.admin('POST', `/admin/v1/accounts/${acct.id}/keys`, {}), 409, 'too_many_keys');
    await t.admin('DELETE', `/admin/v1/keys/${ids[3]}`);
    assert.equal((await t.admin('POST', `/admin/v1/accounts/${acct.id}/keys`, {})).statusCode, 201);
  });

  test('a restricted key lists only its models; the models must exist', async () => {
    const acct = await t.account({ models: ['music', 'model-3d'] });
    const res = await t.call(acct.key, 'GET', '/v1/models');
    assert.deepEqual(
      res.json().models.map((m: { key: string }) => m.key),
      ['model-3d', 'music'],
    );
    expectError(
      await t.admin('POST', `/admin/v1/accounts/${acct.id}/keys`, { models: ['no-such-model'] }),
      404,
      'model_not_found',
    );
  });
});
