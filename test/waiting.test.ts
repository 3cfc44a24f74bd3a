/**
 * Waiting for a task (CONTRACT §12): `GET /v1/tasks/{id}?wait=N` and `POST /v1/tasks` with
 * `Prefer: wait=N` (RFC 7240). Woken by the task's own changes, not by a sleep loop. Timings are never
 * asserted tightly: a woken call must come back well before its wait runs out.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectError, startTestApp, type TestAccount, type TestApp } from './helpers.ts';

const chair = (prompt = 'a small wooden chair') => ({
  model: 'model-3d',
  settings: { task_type: 'text_to_model', prompt },
});
const FINAL = ['succeeded', 'failed', 'canceled'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('GET /v1/tasks/{id}?wait=N', () => {
  let t: TestApp;
  let acct: TestAccount;
  before(async () => {
    t = await startTestApp({ worker: false });
    acct = await t.account({ balanceMinor: 10_000_000 });
  });
  after(() => t.close());

  const create = async (prompt?: string): Promise<string> => {
    const res = await t.call(acct.key, 'POST', '/v1/tasks', chair(prompt));
    assert.equal(res.statusCode, 202, res.body);
    return res.json().id as string;
  };

  test('answers as soon as the task becomes final, well before the wait runs out', async () => {
    const id = await create();
    const started = Date.now();
    const waiting = t.call(acct.key, 'GET', `/v1/tasks/${id}?wait=40`);
    await sleep(300);
    t.container.worker.start();
    const res = await waiting;
    const elapsed = Date.now() - started;
    await t.container.worker.stop();
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 'succeeded', res.body);
    assert.equal(res.headers['retry-after'], undefined, 'a final task asks for no further poll');
    assert.ok(elapsed < 30_000, `answered after ${elapsed} ms of a 40 s wait`);
    // The same body a plain GET answers.
    assert.equal(res.body, (await t.call(acct.key, 'GET', `/v1/tasks/${id}`)).body);
  });

  test('a final task is answered at once', async () => {
    const id = await create();
    await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`);
    const started = Date.now();
    const res = await t.call(acct.key, 'GET', `/v1/tasks/${id}?wait=60`);
    assert.equal(res.json().status, 'canceled');
    assert.ok(Date.now() - started < 30_000);
  });

  test('a cancel wakes a waiting call', async () => {
    const id = await create();
    const started = Date.now();
    const waiting = t.call(acct.key, 'GET', `/v1/tasks/${id}?wait=50`);
    await sleep(300);
    assert.equal((await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`)).statusCode, 200);
    const res = await waiting;
    assert.equal(res.json().status, 'canceled', res.body);
    assert.ok(Date.now() - started < 40_000, 'woken by the cancel, not by the end of the wait');
  });

  test('a key revoked while it waits gets 401 invalid_api_key, not the task', async () => {
    const other = await t.account({ balanceMinor: 10_000_000 });
    const created = await t.call(other.key, 'POST', '/v1/tasks', chair('revoked while waiting'));
    assert.equal(created.statusCode, 202, created.body);
    const id = created.json().id as string;
    const waiting = t.call(other.key, 'GET', `/v1/tasks/${id}?wait=50`);
    await sleep(300);
    const revoked = await t.admin('DELETE', `/admin/v1/keys/${other.keyId}`);
    assert.equal(revoked.statusCode, 204, revoked.body);
    // The task ends (the operator's cancel of the account's task is not the key's): the wait wakes.
    t.container.worker.start();
    const res = await waiting;
    await t.container.worker.stop();
    expectError(res, 401, 'invalid_api_key');
  });

  test('after N seconds a task that is not final is answered as it is, with Retry-After', async () => {
    const id = await create();
    const started = Date.now();
    const res = await t.call(acct.key, 'GET', `/v1/tasks/${id}?wait=1`);
    const elapsed = Date.now() - started;
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 'queued');
    assert.equal(res.headers['retry-after'], '5');
    assert.ok(elapsed >= 900, `waited ${elapsed} ms of 1 s`);
    await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`);
  });

  test('wait out of range or not a whole number is 422 invalid_request naming wait; 0 is a plain read', async () => {
    const id = await create();
    for (const bad of ['61', '-1', 'abc', '1.5', '1e1', '1000000000000']) {
      const res = await t.call(acct.key, 'GET', `/v1/tasks/${id}?wait=${bad}`);
      expectError(res, 422, 'invalid_request');
      assert.match(res.json().error.message, /wait/, bad);
    }
    const ru = await t.call(acct.key, 'GET', `/v1/tasks/${id}?wait=99&lang=ru`);
    expectError(ru, 422, 'invalid_request');
    assert.match(ru.json().error.message, /wait: должно/);
    const plain = await t.call(acct.key, 'GET', `/v1/tasks/${id}?wait=0`);
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.headers['retry-after'], '5');
    await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`);
  });

  test("another account's task, or a restricted key's other model, is 404 at once", async () => {
    const id = await create();
    const other = await t.account({ balanceMinor: 1000 });
    const started = Date.now();
    expectError(await t.call(other.key, 'GET', `/v1/tasks/${id}?wait=30`), 404, 'task_not_found');
    const restricted = await t.admin('POST', `/admin/v1/accounts/${acct.id}/keys`, { models: ['image'] });
    expectError(await t.call(restricted.json().key, 'GET', `/v1/tasks/${id}?wait=30`), 404, 'task_not_found');
    assert.ok(Date.now() - started < 20_000);
    await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`);
  });
});

describe('POST /v1/tasks with Prefer: wait=N', () => {
  let t: TestApp;
  let acct: TestAccount;
  before(async () => {
    t = await startTestApp();
    acct = await t.account({ balanceMinor: 10_000_000 });
  });
  after(() => t.close());

  test('final within the wait: 200 with the final task and Preference-Applied', async () => {
    const res = await t.call(acct.key, 'POST', '/v1/tasks', chair(), { prefer: 'wait=40' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['preference-applied'], 'wait=40');
    assert.ok(FINAL.includes(res.json().status), res.body);
    assert.equal(res.headers['retry-after'], undefined);
    assert.equal(res.headers.location, `/v1/tasks/${res.json().id}`);
    assert.equal(res.body, (await t.call(acct.key, 'GET', `/v1/tasks/${res.json().id}`)).body);
  });

  test('not final within the wait: 202 with the task as it is then and Preference-Applied', async () => {
    // A run that never answers stays running past the wait.
    const res = await t.call(acct.key, 'POST', '/v1/tasks', chair('a chair [sim:hang]'), {
      prefer: 'wait=1',
    });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.headers['preference-applied'], 'wait=1');
    assert.ok(['queued', 'running'].includes(res.json().status), res.body);
    assert.equal(res.headers['retry-after'], '5');
    await t.call(acct.key, 'POST', `/v1/tasks/${res.json().id}/cancel`);
  });

  test('RFC 7240: among other preferences, any case, more than 60 taken as 60', async () => {
    const res = await t.call(acct.key, 'POST', '/v1/tasks', chair(), {
      prefer: 'respond-async, WAIT=600; x=1, wait=5',
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['preference-applied'], 'wait=60');
  });

  test('a malformed or zero wait is ignored, not refused', async () => {
    for (const prefer of ['wait=abc', 'wait=0', 'wait', 'return=minimal']) {
      const res = await t.call(acct.key, 'POST', '/v1/tasks', chair(), { prefer });
      assert.equal(res.statusCode, 202, `${prefer}: ${res.body}`);
      assert.equal(res.headers['preference-applied'], undefined, prefer);
    }
  });

  test('an idempotent replay honours the wait too', async () => {
    const headers = { 'idempotency-key': `prefer-${Date.now()}`, prefer: 'wait=30' };
    const first = await t.call(acct.key, 'POST', '/v1/tasks', chair('a replayed chair'), headers);
    assert.equal(first.statusCode, 200, first.body);
    const again = await t.call(acct.key, 'POST', '/v1/tasks', chair('a replayed chair'), headers);
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.headers['preference-applied'], 'wait=30');
    assert.equal(again.json().id, first.json().id);
  });

  test('a replay answers with the original’s status code, whatever its own wait (CONTRACT §4)', async () => {
    // Answered 200 after its wait: a replay without the preference is 200 too.
    const waited = { 'idempotency-key': `waited-${Date.now()}`, prefer: 'wait=30' };
    const first = await t.call(acct.key, 'POST', '/v1/tasks', chair('a waited chair'), waited);
    assert.equal(first.statusCode, 200, first.body);
    const plain = await t.call(acct.key, 'POST', '/v1/tasks', chair('a waited chair'), {
      'idempotency-key': waited['idempotency-key'],
    });
    assert.equal(plain.statusCode, 200, plain.body);
    assert.equal(plain.headers['idempotent-replayed'], 'true');
    assert.equal(plain.json().id, first.json().id);

    // Answered 202 at once: a replay that waits for the task to end is still 202, with the final task.
    const key = `unwaited-${Date.now()}`;
    const created = await t.call(acct.key, 'POST', '/v1/tasks', chair('an unwaited chair'), {
      'idempotency-key': key,
    });
    assert.equal(created.statusCode, 202, created.body);
    const replay = await t.call(acct.key, 'POST', '/v1/tasks', chair('an unwaited chair'), {
      'idempotency-key': key,
      prefer: 'wait=30',
    });
    assert.equal(replay.statusCode, 202, replay.body);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.headers['preference-applied'], 'wait=30');
    assert.equal(replay.json().id, created.json().id);
    assert.ok(FINAL.includes(replay.json().status), replay.body);
  });

  test('a replay while the original still waits is 409 request_in_progress, then gets the original’s code', async () => {
    const key = `in-wait-${Date.now()}`;
    const prompt = `a chair ${key} [sim:hang]`;
    const headers = { 'idempotency-key': key, prefer: 'wait=3' };
    // A run that never answers: the original waits its 3 s and answers 202.
    const original = t.call(acct.key, 'POST', '/v1/tasks', chair(prompt), headers);
    // Once its task exists, the original is waiting, no longer creating.
    for (let i = 0; i < 100; i += 1) {
      const list = (await t.call(acct.key, 'GET', '/v1/tasks?limit=5')).json() as {
        tasks: Array<{ settings?: { prompt?: string } }>;
      };
      if (list.tasks.some((task) => task.settings?.prompt === prompt)) break;
      await sleep(20);
    }
    const during = await t.call(acct.key, 'POST', '/v1/tasks', chair(prompt), headers);
    expectError(during, 409, 'request_in_progress');
    assert.equal(during.headers['retry-after'], '1');
    const first = await original;
    assert.equal(first.statusCode, 202, first.body);
    const after = await t.call(acct.key, 'POST', '/v1/tasks', chair(prompt), headers);
    assert.equal(after.statusCode, 202, after.body);
    assert.equal(after.headers['idempotent-replayed'], 'true');
    assert.equal(after.json().id, first.json().id);
    await t.call(acct.key, 'POST', `/v1/tasks/${first.json().id}/cancel`);

    // Ended within the wait: the original is 200, and so is a replay after it.
    const quick = { 'idempotency-key': `${key}-quick`, prefer: 'wait=30' };
    const [answered, raced] = await Promise.all([
      t.call(acct.key, 'POST', '/v1/tasks', chair('a quick chair'), quick),
      sleep(100).then(() => t.call(acct.key, 'POST', '/v1/tasks', chair('a quick chair'), quick)),
    ]);
    assert.equal(answered.statusCode, 200, answered.body);
    // Raced against the wait: refused as in progress, or (the wait already over) the original's 200.
    if (raced.statusCode !== 409) assert.equal(raced.statusCode, 200, raced.body);
    const replay = await t.call(acct.key, 'POST', '/v1/tasks', chair('a quick chair'), {
      'idempotency-key': quick['idempotency-key'],
    });
    assert.equal(replay.statusCode, 200, replay.body);
  });

  test('refusals are unchanged by the preference', async () => {
    const poor = await t.account({ balanceMinor: 1 });
    expectError(
      await t.call(poor.key, 'POST', '/v1/tasks', chair(), { prefer: 'wait=10' }),
      402,
      'insufficient_funds',
    );
    expectError(
      await t.call(acct.key, 'POST', '/v1/tasks', { model: 'model-3d', settings: {} }, { prefer: 'wait=10' }),
      422,
      'invalid_settings',
    );
  });
});
