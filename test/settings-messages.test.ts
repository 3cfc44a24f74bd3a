/**
 * Refusals of settings name each field once (`settings.<name>` leading the message), whether the check's
 * own text already names it or not.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { errorOf, startTestApp, type TestAccount, type TestApp } from './helpers.ts';

let t: TestApp;
let acct: TestAccount;
before(async () => {
  t = await startTestApp({ worker: false });
  acct = await t.account({ balanceMinor: 1_000_000 });
});
after(() => t.close());

const refusal = async (model: string, settings: Record<string, unknown>) => {
  const error = errorOf(await t.call(acct.key, 'POST', '/v1/price', { model, settings }));
  assert.equal(error.status, 422, error.message);
  assert.equal(error.code, 'invalid_settings');
  return error.message;
};

test('a wrong mode names settings.task_type once', async () => {
  const message = await refusal('model-3d', { task_type: 'Text_to_model', prompt: 'a chair' });
  assert.match(message, /^settings\.task_type must be one of: /);
  assert.equal(message.split('task_type').length, 2, message);
});

test('a check whose text names its field leads with settings.<field>, once', async () => {
  const message = await refusal('video-elements', {
    model_version: 'v4.0',
    prompt: 'Element_00000000-0000-0000-0000-000000000000 walks',
  });
  assert.match(message, /^settings\.prompt: Element_<id> labels do not work/);
  assert.equal(message.split('prompt').length, 2, message);
});

test('a plain check gets its field in front', async () => {
  const message = await refusal('model-3d', {
    task_type: 'text_to_model',
    prompt: 'a chair',
    face_limit: 47,
  });
  assert.match(message, /^settings\.face_limit: /);
});
