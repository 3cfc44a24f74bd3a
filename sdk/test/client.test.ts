/** The client against the real service on a port: every resource, typed errors, `run` by polling. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { makePng } from '../../src/media/fixtures.ts';
import {
  ApiError,
  AuthenticationError,
  Client,
  ConflictError,
  InvalidRequestError,
  NotFoundError,
  TaskFailedError,
} from '../src/index.ts';
import { type LiveApp, startLiveApp } from './live-app.ts';

describe('Client against the service', () => {
  let live: LiveApp;
  let c: Client;
  before(async () => {
    live = await startLiveApp();
    c = new Client({ apiKey: live.account.key, baseUrl: live.baseUrl });
  });
  after(() => live.close());

  test('price, create, get, list and wait: the task succeeds and its file downloads', async () => {
    const price = await c.price({ model: 'image', settings: { prompt: 'a red fox' } });
    assert.equal(price.currency, 'RUB');
    const created = await c.tasks.create({ model: 'image', settings: { prompt: 'a red fox' } });
    assert.equal(created.status, 'queued');
    assert.equal(created.price.amount_minor, price.amount_minor);
    assert.equal((await c.tasks.get(created.id)).id, created.id);
    const final = await c.tasks.wait(created.id, { timeoutMs: 60_000 });
    assert.equal(final.status, 'succeeded');
    const listed = await c.tasks.list({ model: 'image', limit: 100 });
    assert.ok(listed.tasks.some((task) => task.id === created.id));
    const artifact = final.result!.artifacts[0]!;
    const bytes = await c.tasks.download(created.id, artifact.index);
    assert.ok(bytes instanceof Uint8Array);
    assert.equal(bytes.length, artifact.size);
  });

  test('tasks.all walks every page', async () => {
    for (let i = 0; i < 3; i++) await c.tasks.create({ model: 'image', settings: { prompt: `page ${i}` } });
    const seen = new Set<string>();
    for await (const task of c.tasks.all({ limit: 2 })) seen.add(task.id);
    const total = (await c.tasks.list({ limit: 100 })).tasks.length;
    assert.equal(seen.size, total);
    assert.ok(total >= 3);
  });

  test('run: create and follow to the final task', async () => {
    const states: string[] = [];
    const task = await c.tasks.run(
      { model: 'image', settings: { prompt: 'a blue bird' } },
      { timeoutMs: 60_000, onUpdate: (s) => states.push(s.status) },
    );
    assert.equal(task.status, 'succeeded');
    assert.equal(states.at(-1), 'succeeded');
  });

  test('run: a failed task rejects with TaskFailedError carrying its code', async () => {
    const failed = await c.tasks
      .run({ model: 'image', settings: { prompt: 'broken [sim:fail]' } }, { timeoutMs: 60_000 })
      .then(
        () => null,
        (error: unknown) => error,
      );
    assert.ok(failed instanceof TaskFailedError, String(failed));
    assert.equal(failed.task.status, 'failed');
    assert.equal(failed.code, 'generation_failed');
  });

  test('cancel: the task turns canceled; a second cancel is a ConflictError', async () => {
    const created = await c.tasks.create({ model: 'image', settings: { prompt: 'slow [sim:hang]' } });
    const canceled = await c.tasks.cancel(created.id);
    assert.equal(canceled.status, 'canceled');
    const again = await c.tasks.cancel(created.id).catch((error: unknown) => error);
    assert.ok(again instanceof ConflictError);
    assert.equal(again.code, 'task_not_cancelable');
    assert.equal(again.status, 409);
    assert.match(again.requestId ?? '', /.+/);
  });

  test('models, me and typed refusals', async () => {
    const models = await c.models.list();
    assert.ok(models.some((m) => m.key === 'image'));
    assert.equal((await c.models.get('music')).key, 'music');
    await assert.rejects(c.models.get('nope'), NotFoundError);
    const me = await c.me();
    assert.equal(me.account_id, live.account.id);
    assert.equal(me.currency, 'RUB');

    const missing = await c.tasks.get('00000000-0000-0000-0000-000000000000').catch((e: unknown) => e);
    assert.ok(missing instanceof NotFoundError);
    assert.equal(missing.code, 'task_not_found');
    const invalid = await c.tasks
      .create({ model: 'image', settings: { prompt: '' } })
      .catch((e: unknown) => e);
    assert.ok(invalid instanceof InvalidRequestError);
    assert.equal(invalid.status, 422);
    const wrongKey = new Client({ apiKey: 'gta_wrong', baseUrl: live.baseUrl });
    const refused = await wrongKey.me().catch((e: unknown) => e);
    assert.ok(refused instanceof AuthenticationError && refused instanceof ApiError);
    assert.equal(refused.code, 'invalid_api_key');
  });

  test('files: upload bytes, read the metadata, use the link in a library record, delete', async () => {
    const png = fs.readFileSync(await makePng(live.t.dir, 512, 512));
    const upload = await c.files.upload(new Uint8Array(png), { filename: 'fox.png' });
    assert.equal(upload.kind, 'image');
    assert.equal(upload.content_type, 'image/png');
    assert.equal(upload.size, png.length);
    assert.equal((await c.files.get(upload.id)).id, upload.id);

    const styles = c.libraries('image', 'styles');
    const style = await styles.create({ name: 'Foxes', image_urls: [upload.url] });
    assert.equal(style.name, 'Foxes');
    assert.equal((await styles.get(style.id)).id, style.id);
    assert.ok((await styles.list()).styles.some((s) => s.id === style.id));
    await styles.delete(style.id);
    await assert.rejects(styles.get(style.id), NotFoundError);

    await c.files.delete(upload.id);
    await assert.rejects(c.files.get(upload.id), NotFoundError);
  });

  test('helpers answer through their typed shortcuts', async () => {
    const lyrics = await c.helpers.lyrics({ prompt: 'a song about rain' });
    assert.ok(lyrics.variants.length > 0);
    const enhanced = await c.helpers.enhance({ prompt: 'a cat' });
    assert.ok(enhanced.prompt.length > 0);
  });
});
