/**
 * A succeeded task's row keeps what its views show of its files (migration 0027), so reading and listing
 * it read no `artifacts` rows; a row that succeeded before the copy existed still shows its files from
 * those rows, the same view either way.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp, waitForFinal } from './helpers.ts';

const BODY = { model: 'model-3d', settings: { task_type: 'text_to_model', prompt: 'a chair' } };

describe('the files a succeeded task keeps on its row', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('the row keeps the files the artifacts table holds, and the views read them from the row', async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const created = await t.call(acct.key, 'POST', '/v1/tasks', BODY);
    assert.equal(created.statusCode, 202, created.body);
    const id = created.json().id as string;
    const done = await waitForFinal(t, acct.key, id);
    assert.equal(done.status, 'succeeded');
    const db = t.container.db.db;
    const row = await db
      .selectFrom('tasks')
      .select('artifact_views')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const files = await db
      .selectFrom('artifacts')
      .select(['idx', 'kind', 'filename', 'content_type', 'size_bytes', 'caption'])
      .where('task_id', '=', id)
      .orderBy('idx')
      .execute();
    assert.ok(files.length > 0);
    assert.deepEqual(
      JSON.parse(row.artifact_views ?? 'null'),
      files.map((f) => ({ ...f, size_bytes: Number(f.size_bytes) })),
    );
    const listed = async () => (await t.call(acct.key, 'GET', '/v1/tasks?limit=5')).json().tasks[0];
    const before = await listed();
    assert.deepEqual(before.result.artifacts, (done.result as { artifacts: unknown }).artifacts);

    // The list reads the row's copy: with the artifacts rows hidden from it, the files are still listed.
    await db
      .updateTable('artifacts')
      .set({ task_id: `${id}-hidden` })
      .where('task_id', '=', id)
      .execute();
    assert.deepEqual(await listed(), before);
    await db.updateTable('artifacts').set({ task_id: id }).where('task_id', '=', `${id}-hidden`).execute();

    // A row without the copy (succeeded before migration 0027) shows the same files from the table.
    await db.updateTable('tasks').set({ artifact_views: null }).where('id', '=', id).execute();
    assert.deepEqual(await listed(), before);
  });

  test('a task that did not succeed keeps no files on its row', async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const created = await t.call(acct.key, 'POST', '/v1/tasks', BODY);
    const id = created.json().id as string;
    const canceled = await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`);
    assert.equal(canceled.statusCode, 200, canceled.body);
    const row = await t.container.db.db
      .selectFrom('tasks')
      .select('artifact_views')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(row.artifact_views, null);
  });
});
