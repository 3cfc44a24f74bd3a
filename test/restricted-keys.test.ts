import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectError, startTestApp, type TestApp, waitForFinal } from './helpers.ts';

const chair = (prompt: string) => ({
  model: 'model-3d',
  settings: { task_type: 'text_to_model', prompt, texture: false, pbr: false },
});

describe('a key restricted to some models', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test("[10.19] a restricted key sees only its models' tasks: read, download, cancel, list and replay", async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const issued = await t.admin('POST', `/admin/v1/accounts/${acct.id}/keys`, { models: ['music'] });
    assert.equal(issued.statusCode, 201, issued.body);
    const musicOnly = issued.json().key as string;
    const headers = { 'idempotency-key': 'chair-1' };
    const done = await t.call(acct.key, 'POST', '/v1/tasks', chair('a chair'), headers);
    assert.equal(done.statusCode, 202, done.body);
    const doneId = done.json().id as string;
    assert.equal((await waitForFinal(t, acct.key, doneId)).status, 'succeeded');
    const running = await t.call(acct.key, 'POST', '/v1/tasks', chair('a slow chair [sim:slow]'));
    const runningId = running.json().id as string;

    for (const id of [doneId, runningId]) {
      expectError(await t.call(musicOnly, 'GET', `/v1/tasks/${id}`), 404, 'task_not_found');
      expectError(await t.call(musicOnly, 'GET', `/v1/tasks/${id}/artifacts/0`), 404, 'task_not_found');
      expectError(await t.call(musicOnly, 'POST', `/v1/tasks/${id}/cancel`), 404, 'task_not_found');
    }
    assert.deepEqual((await t.call(musicOnly, 'GET', '/v1/tasks')).json().tasks, []);
    assert.deepEqual((await t.call(musicOnly, 'GET', '/v1/tasks?model=model-3d')).json().tasks, []);
    // The same Idempotency-Key and body from the restricted key is a request for a model it may not use.
    const replay = await t.call(musicOnly, 'POST', '/v1/tasks', chair('a chair'), headers);
    expectError(replay, 403, 'model_not_allowed_for_key');

    // The unrestricted key of the same account still sees both, and the running task was not canceled.
    assert.equal((await t.call(acct.key, 'GET', `/v1/tasks/${doneId}`)).statusCode, 200);
    assert.equal((await t.call(acct.key, 'GET', `/v1/tasks/${doneId}/artifacts/0`)).statusCode, 200);
    const listed = (await t.call(acct.key, 'GET', '/v1/tasks')).json().tasks as Array<{ id: string }>;
    assert.deepEqual(listed.map((task) => task.id).sort(), [doneId, runningId].sort());
    assert.equal((await t.call(acct.key, 'POST', `/v1/tasks/${runningId}/cancel`)).statusCode, 200);
  });

  test("a restricted key cannot use another model's result file as an input by its artifact link", async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const issued = await t.admin('POST', `/admin/v1/accounts/${acct.id}/keys`, { models: ['video'] });
    assert.equal(issued.statusCode, 201, issued.body);
    const videoOnly = issued.json().key as string;
    const made = await t.call(acct.key, 'POST', '/v1/tasks', chair('a chair'));
    assert.equal(made.statusCode, 202, made.body);
    const task = await waitForFinal(t, acct.key, made.json().id as string);
    const artifacts = (task.result as { artifacts: Array<{ kind: string; download_path: string }> })
      .artifacts;
    const preview = artifacts.find((a) => a.kind === 'image');
    assert.ok(preview, JSON.stringify(artifacts));
    const request = {
      model: 'video',
      settings: {
        mode: 'frames',
        prompt: 'the chair turns',
        image_urls: [`http://127.0.0.1${preview.download_path}`],
      },
    };

    // The key reads the model-3d task as missing, so its file is no file of the key's tasks either.
    expectError(await t.call(videoOnly, 'GET', preview.download_path), 404, 'task_not_found');
    for (const path of ['/v1/price', '/v1/tasks']) {
      const refused = await t.call(videoOnly, 'POST', path, request);
      expectError(refused, 422, 'invalid_settings');
      assert.match(refused.json().error.message, /settings\.image_urls\.0: no file of your tasks/);
    }
    assert.deepEqual((await t.call(acct.key, 'GET', '/v1/tasks?model=video')).json().tasks, []);
    // The account's unrestricted key may use it.
    assert.equal((await t.call(acct.key, 'POST', '/v1/price', request)).statusCode, 200);
  });
});
