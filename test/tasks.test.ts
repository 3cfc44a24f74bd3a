import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { NodeIO } from '@gltf-transform/core';
import { PNG } from 'pngjs';
import { balances, expectError, startTestApp, type TestApp, waitForFinal } from './helpers.ts';

const text3d = (prompt = 'a small wooden chair', extra: Record<string, unknown> = {}) => ({
  model: 'model-3d',
  settings: { task_type: 'text_to_model', prompt, ...extra },
});

describe('tasks: create, poll, download', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  /** A finished 3D task of a new account, its first result file and that file downloaded whole. */
  async function downloadedArtifact() {
    const acct = await t.account({ balanceMinor: 100_000 });
    const id = (await t.call(acct.key, 'POST', '/v1/tasks', text3d())).json().id;
    const done = await waitForFinal(t, acct.key, id);
    const artifact = (done.result as { artifacts: Array<{ size: number; download_path: string }> })
      .artifacts[0]!;
    const whole = await t.call(acct.key, 'GET', artifact.download_path);
    return { acct, id: String(id), done, artifact, whole };
  }
  test('POST /v1/tasks answers 202 with Location, holds the price, and the task succeeds with its files', async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const price = (await t.call(acct.key, 'POST', '/v1/price', text3d())).json();
    assert.equal(price.currency, 'RUB');
    assert.equal(price.available_minor, 100_000);
    const res = await t.call(acct.key, 'POST', '/v1/tasks', text3d());
    assert.equal(res.statusCode, 202, res.body);
    const task = res.json();
    assert.match(task.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(res.headers.location, `/v1/tasks/${task.id}`);
    assert.equal(task.status, 'queued');
    assert.equal(res.headers['retry-after'], '5');
    assert.deepEqual(task.price, { amount_minor: price.amount_minor, currency: 'RUB' });
    assert.equal(task.settings.model_version, 'v3.1-20260211', 'defaults filled in');
    assert.equal('finished_at' in task, false, 'finished_at: final states only (CONTRACT §3)');
    assert.equal(task.started_at, null);
    assert.equal((await balances(t, acct.id)).held_minor, price.amount_minor);

    const done = await waitForFinal(t, acct.key, task.id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    const final = await t.call(acct.key, 'GET', `/v1/tasks/${task.id}`);
    assert.equal(final.headers['retry-after'], undefined);
    const result = done.result as {
      caption: string;
      texts: string[];
      files_expire_at: string;
      files_expired: boolean;
      artifacts: Array<{
        index: number;
        kind: string;
        filename: string;
        size: number;
        download_path: string;
      }>;
    };
    assert.match(String(done.finished_at), /Z$/);
    assert.equal(result.files_expired, false);
    assert.ok(Date.parse(result.files_expire_at) > Date.now() + 13 * 86_400_000);
    assert.deepEqual(result.texts, []);
    assert.match(result.caption, /model-3d/);
    const documents = result.artifacts.filter((a) => a.kind === 'document');
    const images = result.artifacts.filter((a) => a.kind === 'image');
    assert.equal(documents.length, 1);
    assert.ok(images.length <= 1);
    assert.deepEqual(
      result.artifacts.map((a) => a.index),
      result.artifacts.map((_, i) => i),
    );

    const glb = await t.call(acct.key, 'GET', documents[0]!.download_path);
    assert.equal(glb.statusCode, 200);
    assert.equal(glb.headers['content-type'], 'model/gltf-binary');
    assert.match(String(glb.headers['content-disposition']), /attachment; filename="model\.glb"/);
    // A stored file opened on its own runs nothing in the service's origin.
    assert.equal(glb.headers['content-security-policy'], "default-src 'none'; sandbox");
    assert.equal(Number(glb.headers['content-length']), documents[0]!.size);
    const doc = await new NodeIO().readBinary(new Uint8Array(glb.rawPayload));
    assert.ok(doc.getRoot().listMeshes().length > 0);

    if (images[0]) {
      const png = await t.call(acct.key, 'GET', images[0].download_path);
      assert.equal(png.headers['content-type'], 'image/png');
      const decoded = PNG.sync.read(png.rawPayload);
      assert.ok(decoded.width > 0);
    }
    const b = await balances(t, acct.id);
    assert.deepEqual(b, { ...b, balance_minor: 100_000 - price.amount_minor, held_minor: 0 });
  });

  test('artifact downloads honour Range; bad ranges are 416; missing indexes 404 artifact_not_found', async () => {
    const { acct, id, artifact, whole } = await downloadedArtifact();
    const part = await t.call(acct.key, 'GET', artifact.download_path, undefined, { range: 'bytes=10-19' });
    assert.equal(part.statusCode, 206);
    assert.equal(part.headers['content-range'], `bytes 10-19/${artifact.size}`);
    assert.deepEqual(part.rawPayload, whole.rawPayload.subarray(10, 20));
    const suffix = await t.call(acct.key, 'GET', artifact.download_path, undefined, { range: 'bytes=-4' });
    assert.deepEqual(suffix.rawPayload, whole.rawPayload.subarray(artifact.size - 4));
    // If-Range (RFC 9110 §13.1.5): the part only while the validator is this file's ETag; else the whole file.
    const etag = String(whole.headers.etag);
    assert.match(etag, /^"[\w-]+"$/);
    assert.equal(part.headers.etag, etag);
    const same = await t.call(acct.key, 'GET', artifact.download_path, undefined, {
      range: 'bytes=10-19',
      'if-range': etag,
    });
    assert.equal(same.statusCode, 206);
    for (const validator of ['"older"', 'Wed, 21 Oct 2015 07:28:00 GMT']) {
      const changed = await t.call(acct.key, 'GET', artifact.download_path, undefined, {
        range: 'bytes=10-19',
        'if-range': validator,
      });
      assert.equal(changed.statusCode, 200, validator);
      assert.deepEqual(changed.rawPayload, whole.rawPayload);
    }
    expectError(
      await t.call(acct.key, 'GET', artifact.download_path, undefined, {
        range: `bytes=${artifact.size + 5}-`,
      }),
      416,
      'range_not_satisfiable',
    );
    // If-None-Match (RFC 9110 §13.1.2): 304 without the file when it names this ETag (in a list, weakly, or
    // `*`), before any Range is looked at; another tag gets the file.
    for (const tag of [etag, `"older", W/${etag}`, '*']) {
      for (const range of [undefined, 'bytes=10-19', `bytes=${artifact.size + 5}-`]) {
        const cached = await t.call(acct.key, 'GET', artifact.download_path, undefined, {
          'if-none-match': tag,
          ...(range ? { range } : {}),
        });
        assert.equal(cached.statusCode, 304, `${tag} ${range}`);
        assert.equal(cached.rawPayload.length, 0);
        assert.equal(cached.headers.etag, etag);
        assert.equal(cached.headers['cache-control'], whole.headers['cache-control']);
      }
    }
    const other = await t.call(acct.key, 'GET', artifact.download_path, undefined, {
      'if-none-match': '"older"',
    });
    assert.equal(other.statusCode, 200);
    assert.deepEqual(other.rawPayload, whole.rawPayload);
    // The validator never answers for another account: its task stays 404.
    const stranger = await t.account();
    expectError(
      await t.call(stranger.key, 'GET', artifact.download_path, undefined, { 'if-none-match': etag }),
      404,
      'task_not_found',
    );
    expectError(await t.call(acct.key, 'GET', `/v1/tasks/${id}/artifacts/9`), 404, 'artifact_not_found');
    expectError(await t.call(acct.key, 'GET', `/v1/tasks/${id}/artifacts/x`), 404, 'artifact_not_found');
    // Only the numbers the list uses name an artifact: no leading zero, no exponent, no overflow.
    for (const index of ['01', '1e0', '99999999999999999999', '-1', '%20']) {
      expectError(
        await t.call(acct.key, 'GET', `/v1/tasks/${id}/artifacts/${index}`),
        404,
        'artifact_not_found',
      );
    }
  });

  test('If-Match: a download is answered only while it names the ETag (strongly), else 412', async () => {
    const { acct, artifact, whole } = await downloadedArtifact();
    const etag = String(whole.headers.etag);
    // RFC 9110 §13.1.1: the listed tag (or `*`) keeps the answer, Range included.
    for (const tag of [etag, `"older", ${etag}`, '*']) {
      const kept = await t.call(acct.key, 'GET', artifact.download_path, undefined, {
        'if-match': tag,
        range: 'bytes=10-19',
      });
      assert.equal(kept.statusCode, 206, tag);
      assert.deepEqual(kept.rawPayload, whole.rawPayload.subarray(10, 20));
    }
    // Another tag, or this one weak (If-Match compares strongly), is 412 before If-None-Match and Range
    // are looked at (§13.2.2), to a HEAD as well; no attachment is offered for the error.
    const beside: Array<Record<string, string>> = [
      {},
      { 'if-none-match': etag },
      { range: `bytes=${artifact.size + 5}-` },
    ];
    for (const tag of ['"older"', `W/${etag}`]) {
      for (const extra of beside) {
        const refused = await t.call(acct.key, 'GET', artifact.download_path, undefined, {
          'if-match': tag,
          ...extra,
        });
        expectError(refused, 412, 'precondition_failed');
        assert.equal(refused.headers['content-disposition'], undefined);
      }
      const head = await t.app.inject({
        method: 'HEAD',
        url: artifact.download_path,
        headers: { authorization: `Bearer ${acct.key}`, 'if-match': tag },
      });
      assert.equal(head.statusCode, 412, tag);
    }
    // The task stays another account's secret: 404 whatever the precondition.
    const stranger = await t.account();
    expectError(
      await t.call(stranger.key, 'GET', artifact.download_path, undefined, { 'if-match': '"older"' }),
      404,
      'task_not_found',
    );
  });

  test('Last-Modified: a download carries the task end, and the date preconditions read it', async () => {
    const { acct, done, artifact, whole } = await downloadedArtifact();
    const modified = String(whole.headers['last-modified']);
    // The task's end, to the second, as an IMF-fixdate (RFC 9110 §5.6.7).
    assert.equal(
      modified,
      new Date(Math.floor(Date.parse(String(done.finished_at)) / 1000) * 1000).toUTCString(),
    );
    const etag = String(whole.headers.etag);
    const earlier = new Date(Date.parse(modified) - 60_000).toUTCString();
    const later = new Date(Date.parse(modified) + 60_000).toUTCString();
    const get = (headers: Record<string, string>) =>
      t.call(acct.key, 'GET', artifact.download_path, undefined, headers);
    // If-Modified-Since (§13.1.3): 304 when the file is not newer, with its validators and no body.
    for (const since of [modified, later]) {
      const kept = await get({ 'if-modified-since': since });
      assert.equal(kept.statusCode, 304, since);
      assert.equal(kept.headers['last-modified'], modified);
      assert.equal(kept.rawPayload.length, 0);
    }
    assert.equal((await get({ 'if-modified-since': earlier })).statusCode, 200);
    // A date that does not parse is ignored; If-None-Match, when sent, decides instead of the date.
    assert.equal((await get({ 'if-modified-since': 'yesterday' })).statusCode, 200);
    assert.equal((await get({ 'if-modified-since': later, 'if-none-match': '"older"' })).statusCode, 200);
    // If-Unmodified-Since (§13.1.4): 412 when the file is newer; If-Match, when sent, decides instead.
    expectError(await get({ 'if-unmodified-since': earlier }), 412, 'precondition_failed');
    assert.equal((await get({ 'if-unmodified-since': modified })).statusCode, 200);
    assert.equal((await get({ 'if-unmodified-since': earlier, 'if-match': etag })).statusCode, 200);
    // If-Range with the exact date keeps the range; another date asks for the whole file (§13.1.5).
    const part = await get({ range: 'bytes=0-9', 'if-range': modified });
    assert.equal(part.statusCode, 206);
    assert.deepEqual(part.rawPayload, whole.rawPayload.subarray(0, 10));
    assert.equal((await get({ range: 'bytes=0-9', 'if-range': earlier })).statusCode, 200);
    // HEAD answers the same.
    const head = await t.app.inject({
      method: 'HEAD',
      url: artifact.download_path,
      headers: { authorization: `Bearer ${acct.key}`, 'if-modified-since': modified },
    });
    assert.equal(head.statusCode, 304);
  });

  test('an unknown task id of any length a client might send is 404 task_not_found', async () => {
    const acct = await t.account();
    for (const id of ['x', 'a'.repeat(101), 'я'.repeat(300), 'b'.repeat(1000)]) {
      const path = `/v1/tasks/${encodeURIComponent(id)}`;
      expectError(await t.call(acct.key, 'GET', path), 404, 'task_not_found');
      expectError(await t.call(acct.key, 'POST', `${path}/cancel`), 404, 'task_not_found');
      expectError(await t.call(acct.key, 'GET', `${path}/events`), 404, 'task_not_found');
      expectError(await t.call(acct.key, 'GET', `${path}/artifacts/0`), 404, 'task_not_found');
    }
  });

  test("another account's task is 404 task_not_found for read, cancel and download", async () => {
    const owner = await t.account({ balanceMinor: 100_000 });
    const stranger = await t.account({ balanceMinor: 100_000 });
    const id = (await t.call(owner.key, 'POST', '/v1/tasks', text3d())).json().id;
    expectError(await t.call(stranger.key, 'GET', `/v1/tasks/${id}`), 404, 'task_not_found');
    expectError(await t.call(stranger.key, 'POST', `/v1/tasks/${id}/cancel`), 404, 'task_not_found');
    expectError(await t.call(stranger.key, 'GET', `/v1/tasks/${id}/artifacts/0`), 404, 'task_not_found');
    expectError(
      await t.call(stranger.key, 'GET', '/v1/tasks/00000000-0000-7000-8000-000000000000'),
      404,
      'task_not_found',
    );
    await waitForFinal(t, owner.key, id);
  });

  test('a quad mesh is a binary FBX', async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const res = await t.call(acct.key, 'POST', '/v1/tasks', text3d('a quad robot', { quad: true }));
    assert.equal(res.statusCode, 202, res.body);
    const done = await waitForFinal(t, acct.key, res.json().id);
    const doc = (
      done.result as { artifacts: Array<{ kind: string; filename: string; download_path: string }> }
    ).artifacts.find((a) => a.kind === 'document')!;
    assert.equal(doc.filename, 'model.fbx');
    const file = await t.call(acct.key, 'GET', doc.download_path);
    assert.equal(file.rawPayload.subarray(0, 21).toString('latin1'), 'Kaydara FBX Binary  \u0000');
  });

  test('an own result file of a type the field does not take is 422 file_type, not a missing file', async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const id = (await t.call(acct.key, 'POST', '/v1/tasks', text3d())).json().id;
    const done = await waitForFinal(t, acct.key, id);
    const artifacts = (done.result as { artifacts: Array<{ kind: string; download_path: string }> })
      .artifacts;
    const photo = (kind: string) => ({
      model: 'model-3d',
      settings: {
        task_type: 'image_to_model',
        image_url: [`http://127.0.0.1${artifacts.find((a) => a.kind === kind)!.download_path}`],
      },
    });
    // The preview PNG is a photo the mode takes; the GLB beside it is a file of the wrong type.
    assert.equal((await t.call(acct.key, 'POST', '/v1/price', photo('image'))).statusCode, 200);
    const refused = await t.call(acct.key, 'POST', '/v1/price', photo('document'));
    expectError(refused, 422, 'file_type');
    assert.match(refused.json().error.message, /settings\.image_url\.0/);
    // The preview's index spelt with a leading zero names no file, as a download of it is 404.
    const image = artifacts.find((a) => a.kind === 'image')!.download_path;
    const spelt = image.replace(/\/(\d+)$/, '/0$1');
    expectError(await t.call(acct.key, 'GET', spelt), 404, 'artifact_not_found');
    const unnamed = {
      model: 'model-3d',
      settings: { task_type: 'image_to_model', image_url: [`http://127.0.0.1${spelt}`] },
    };
    expectError(await t.call(acct.key, 'POST', '/v1/price', unnamed), 422, 'invalid_settings');
  });
});
