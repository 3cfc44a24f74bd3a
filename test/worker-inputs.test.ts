import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { HOUR_MS } from '../src/config.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { makePng } from '../src/media/fixtures.ts';
import { balances, startTestApp, type TestApp, waitForFinal } from './helpers.ts';

async function upload(t: TestApp, key: string, file: string): Promise<{ id: string; url: string }> {
  const res = await t.call(key, 'POST', '/v1/files?filename=photo.png', fs.readFileSync(file), {
    'content-type': 'application/octet-stream',
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

describe('inputs of queued tasks', () => {
  test('[10.14] an upload deleted while its task waits fails the task with input_unavailable, hold voided', async () => {
    const t = await startTestApp({ worker: false });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const photo = await upload(t, acct.key, await makePng(t.dir, 64, 64));
      const created = await t.call(acct.key, 'POST', '/v1/tasks', {
        model: 'model-3d',
        settings: { task_type: 'image_to_model', image_url: [photo.url], texture: false, pbr: false },
      });
      assert.equal(created.statusCode, 202, created.body);
      assert.ok((await balances(t, acct.id)).held_minor > 0);
      assert.equal((await t.call(acct.key, 'DELETE', `/v1/files/${photo.id}`)).statusCode, 204);
      t.container.worker.start();
      const done = await waitForFinal(t, acct.key, created.json().id);
      assert.equal(done.status, 'failed');
      assert.equal((done.error as { code: string }).code, 'input_unavailable');
      assert.equal((await balances(t, acct.id)).available_minor, 10_000);
    } finally {
      await t.close();
    }
  });

  test('[10.14] a library item deleted while its task waits fails the task with input_unavailable, hold voided', async () => {
    const t = await startTestApp({ worker: false });
    try {
      const acct = await t.account({ balanceMinor: 100_000 });
      const photo = await upload(t, acct.key, await makePng(t.dir, 64, 64));
      const style = await t.call(acct.key, 'POST', '/v1/models/image/styles', {
        name: 'Paint',
        image_urls: [photo.url],
      });
      assert.equal(style.statusCode, 201, style.body);
      const styleId = style.json().id as string;
      const created = await t.call(acct.key, 'POST', '/v1/tasks', {
        model: 'image',
        settings: { prompt: 'a fox', style_id: styleId },
      });
      assert.equal(created.statusCode, 202, created.body);
      const removed = await t.call(acct.key, 'DELETE', `/v1/models/image/styles/${styleId}`);
      assert.equal(removed.statusCode, 204, removed.body);
      t.container.worker.start();
      const done = await waitForFinal(t, acct.key, created.json().id);
      assert.equal(done.status, 'failed');
      assert.equal((done.error as { code: string }).code, 'input_unavailable');
      assert.equal((await balances(t, acct.id)).available_minor, 100_000);
    } finally {
      await t.close();
    }
  });

  test('an upload that expires while its task waits fails the task with input_unavailable', async () => {
    const clock = new ManualClock();
    const t = await startTestApp({ clock, worker: false, env: { UPLOAD_RETENTION: '1h' } });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const photo = await upload(t, acct.key, await makePng(t.dir, 64, 64));
      const created = await t.call(acct.key, 'POST', '/v1/tasks', {
        model: 'model-3d',
        settings: { task_type: 'image_to_model', image_url: [photo.url], texture: false, pbr: false },
      });
      assert.equal(created.statusCode, 202, created.body);
      clock.advance(2 * HOUR_MS);
      t.container.worker.start();
      const done = await waitForFinal(t, acct.key, created.json().id);
      assert.equal((done.error as { code: string }).code, 'input_unavailable');
      assert.equal((await balances(t, acct.id)).available_minor, 10_000);
    } finally {
      await t.close();
    }
  });

  test('an upload a library record holds past its expiry is still there when its task runs', async () => {
    const clock = new ManualClock();
    const t = await startTestApp({ clock, worker: false, env: { UPLOAD_RETENTION: '1h' } });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const photo = await upload(t, acct.key, await makePng(t.dir, 64, 64));
      const element = await t.call(acct.key, 'POST', '/v1/models/video-elements/elements', {
        name: 'Vase',
        description: 'a vase',
        tag: 'object',
        image_urls: [photo.url],
      });
      assert.equal(element.statusCode, 201, element.body);
      clock.advance(2 * HOUR_MS);
      // The element keeps the upload live: its link works, and a task accepts it.
      assert.equal((await t.app.inject({ method: 'GET', url: new URL(photo.url).pathname })).statusCode, 200);
      const created = await t.call(acct.key, 'POST', '/v1/tasks', {
        model: 'model-3d',
        settings: { task_type: 'image_to_model', image_url: [photo.url], texture: false, pbr: false },
      });
      assert.equal(created.statusCode, 202, created.body);
      t.container.worker.start();
      // Past the check of its inputs the run starts (the manual clock keeps it running).
      const started = () =>
        t.container.db.db
          .selectFrom('tasks')
          .select(['status', 'error_code'])
          .where('id', '=', created.json().id)
          .executeTakeFirstOrThrow();
      let task = await started();
      for (; task.status === 'queued'; task = await started())
        await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(task.status, 'running', String(task.error_code));
    } finally {
      await t.close();
    }
  });

  test('a result file whose files expire while its task waits fails the task with input_unavailable', async () => {
    const t = await startTestApp();
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const made = await t.call(acct.key, 'POST', '/v1/tasks', {
        model: 'image',
        settings: { prompt: 'a vase' },
      });
      assert.equal(made.statusCode, 202, made.body);
      const source = made.json().id as string;
      assert.equal((await waitForFinal(t, acct.key, source)).status, 'succeeded');
      const spent = 10_000 - (await balances(t, acct.id)).available_minor;
      await t.container.worker.stop();
      const created = await t.call(acct.key, 'POST', '/v1/tasks', {
        model: 'model-3d',
        settings: {
          task_type: 'image_to_model',
          image_url: [`${t.container.config.publicBaseUrl}/v1/tasks/${source}/artifacts/0`],
          texture: false,
          pbr: false,
        },
      });
      assert.equal(created.statusCode, 202, created.body);
      // The source task's files expire (the sweeper's flag) before the worker takes the task.
      await t.container.db.db
        .updateTable('tasks')
        .set({ files_expired: 1 })
        .where('id', '=', source)
        .execute();
      t.container.worker.start();
      const done = await waitForFinal(t, acct.key, created.json().id);
      assert.equal(done.status, 'failed');
      assert.equal((done.error as { code: string }).code, 'input_unavailable');
      assert.equal((await balances(t, acct.id)).available_minor, 10_000 - spent, 'its hold voided');
    } finally {
      await t.close();
    }
  });

  test('a task whose inputs are all still there runs as usual', async () => {
    const t = await startTestApp({ worker: false });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const photo = await upload(t, acct.key, await makePng(t.dir, 64, 64));
      const created = await t.call(acct.key, 'POST', '/v1/tasks', {
        model: 'model-3d',
        settings: { task_type: 'image_to_model', image_url: [photo.url], texture: false, pbr: false },
      });
      t.container.worker.start();
      assert.equal((await waitForFinal(t, acct.key, created.json().id)).status, 'succeeded');
    } finally {
      await t.close();
    }
  });
});
