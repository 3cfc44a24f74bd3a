/**
 * Library records hold the uploads they are made from (files/upload-holds.ts, migration 0026): the sweeper
 * keeps them and their direct links past UPLOAD_RETENTION while a live record names them, and removes them
 * once the last such record is deleted. Runs on SQLite, and on PostgreSQL when TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { HOUR_MS } from '../src/config.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { makePng } from '../src/media/fixtures.ts';
import { errorOf, expectError, startTestApp, type TestApp } from './helpers.ts';

describe('uploads held by library records', () => {
  const clock = new ManualClock(new Date());
  let t: TestApp;
  let png: Buffer;
  before(async () => {
    t = await startTestApp({ clock, env: { UPLOAD_RETENTION: '1h' }, worker: false });
    png = fs.readFileSync(await makePng(t.dir, 64, 64));
  });
  after(async () => {
    await t.close();
  });

  async function upload(key: string): Promise<{ id: string; url: string }> {
    const res = await t.call(key, 'POST', '/v1/files?filename=photo.png', png, {
      'content-type': 'image/png',
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  }

  async function character(key: string, portrait: string, fullBody: string): Promise<string> {
    const res = await t.call(key, 'POST', '/v1/models/video-omni/characters', {
      name: 'Ann',
      portrait_url: portrait,
      full_body_url: fullBody,
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id;
  }

  const link = (url: string) => t.app.inject({ method: 'GET', url: new URL(url).pathname });

  /** Whether the upload is flagged deleted and its bytes are gone. */
  async function swept(id: string): Promise<boolean> {
    const row = await t.container.db.db
      .selectFrom('uploads')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const bytes = await t.container.storage.stat(row.storage_key);
    assert.equal(row.deleted_at === null, bytes !== null, 'flag and bytes agree');
    return row.deleted_at !== null;
  }

  /** Past every upload's retention, then one sweep. */
  async function expireAndSweep(): Promise<void> {
    clock.advance(HOUR_MS + 1_000);
    await t.container.sweeper.sweepOnce();
  }

  test('a record keeps its uploads past their retention; they go once it is deleted', async () => {
    const a = await t.account();
    const portrait = await upload(a.key);
    const fullBody = await upload(a.key);
    const loose = await upload(a.key);
    const id = await character(a.key, portrait.url, fullBody.url);
    // The dashboard's uploads page says the held ones are kept rather than showing their expiry.
    const principal = { keyId: null, accountId: a.id, prefix: '', models: null, dailyLimitMinor: null };
    const listed = await t.container.services.uploads.list(principal);
    assert.deepEqual(Object.fromEntries(listed.files.map((f) => [f.id, f.held])), {
      [portrait.id]: true,
      [fullBody.id]: true,
      [loose.id]: false,
    });

    await expireAndSweep();
    assert.equal(await swept(loose.id), true, 'an upload no record names expires as before');
    expectError(await link(loose.url), 404, 'file_not_found');
    for (const held of [portrait, fullBody]) {
      assert.equal(await swept(held.id), false);
      assert.equal((await link(held.url)).statusCode, 200, 'the link the provider is sent still works');
      assert.equal((await t.call(a.key, 'GET', `/v1/files/${held.id}`)).statusCode, 200);
    }

    assert.equal((await t.call(a.key, 'DELETE', `/v1/models/video-omni/characters/${id}`)).statusCode, 204);
    // Already past its retention: gone at once, its bytes at the next sweep.
    expectError(await link(portrait.url), 404, 'file_not_found');
    await t.container.sweeper.sweepOnce();
    assert.equal(await swept(portrait.id), true);
    assert.equal(await swept(fullBody.id), true);
  });

  /**
   * Creates a character whose generator step waits until `meanwhile` has run (the upload's expiry, a
   * sweep, a DELETE), and answers the creation's response.
   */
  async function characterAcross(key: string, url: string, meanwhile: () => Promise<void>) {
    const generator = t.container.services.libraries.deps.generator;
    const original = generator.createRecord.bind(generator);
    let reached = (): void => {};
    const atGenerator = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    generator.createRecord = async (request, signal) => {
      reached();
      await gate;
      return original(request, signal);
    };
    try {
      const pending = t.call(key, 'POST', '/v1/models/video-omni/characters', {
        name: 'Ann',
        portrait_url: url,
        full_body_url: url,
      });
      await atGenerator;
      await meanwhile();
      release();
      return await pending;
    } finally {
      generator.createRecord = original;
    }
  }

  test('an upload that expires while its record is made is held all the same, and lives again', async () => {
    const a = await t.account();
    const portrait = await upload(a.key);
    const res = await characterAcross(a.key, portrait.url, async () => {
      clock.advance(HOUR_MS + 1_000);
    });
    assert.equal(res.statusCode, 201, res.body);
    await t.container.sweeper.sweepOnce();
    assert.equal(await swept(portrait.id), false);
    assert.equal((await link(portrait.url)).statusCode, 200);
  });

  test('an upload swept or deleted while its record is made refuses the record: 422, nothing kept', async () => {
    const a = await t.account();
    const before = (await t.call(a.key, 'GET', '/v1/models/video-omni/characters')).json();
    const sweptAway = await upload(a.key);
    const res = await characterAcross(a.key, sweptAway.url, expireAndSweep);
    expectError(res, 422, 'invalid_request');
    assert.match(errorOf(res).message, /body\.portrait_url: the upload at .* was deleted or has expired/);
    assert.equal(await swept(sweptAway.id), true);
    const deleting = await upload(a.key);
    const deleted = await characterAcross(a.key, deleting.url, async () => {
      assert.equal((await t.call(a.key, 'DELETE', `/v1/files/${deleting.id}`)).statusCode, 204);
    });
    expectError(deleted, 422, 'invalid_request');
    const after = (await t.call(a.key, 'GET', '/v1/models/video-omni/characters')).json();
    assert.deepEqual(after, before, 'no record made');
  });

  test("an element's cover link (its first picture) outlives the upload's retention", async () => {
    const a = await t.account();
    const picture = await upload(a.key);
    const res = await t.call(a.key, 'POST', '/v1/models/video-elements/elements', {
      name: 'Red car',
      tag: 'vehicle',
      image_urls: [picture.url],
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().cover_url, picture.url);
    await expireAndSweep();
    assert.equal((await link(res.json().cover_url)).statusCode, 200);
    assert.equal(await swept(picture.id), false);
  });

  test('an upload named by two records stays until both are deleted', async () => {
    const a = await t.account();
    const shared = await upload(a.key);
    const first = await character(a.key, shared.url, shared.url);
    const second = await character(a.key, shared.url, shared.url);
    await expireAndSweep();
    await t.call(a.key, 'DELETE', `/v1/models/video-omni/characters/${first}`);
    await t.container.sweeper.sweepOnce();
    assert.equal(await swept(shared.id), false, 'still held by the second record');
    await t.call(a.key, 'DELETE', `/v1/models/video-omni/characters/${second}`);
    await t.container.sweeper.sweepOnce();
    assert.equal(await swept(shared.id), true);
  });

  test("another account's record never keeps an upload alive", async () => {
    const a = await t.account();
    const b = await t.account();
    const theirs = await upload(a.key);
    await character(b.key, theirs.url, theirs.url);
    await expireAndSweep();
    assert.equal(await swept(theirs.id), true, "a's upload expires by its own rule");
    expectError(await t.call(b.key, 'GET', `/v1/files/${theirs.id}`), 404, 'file_not_found');
  });

  test('DELETE of a held upload deletes it; the record stays', async () => {
    const a = await t.account();
    const portrait = await upload(a.key);
    const id = await character(a.key, portrait.url, portrait.url);
    assert.equal((await t.call(a.key, 'DELETE', `/v1/files/${portrait.id}`)).statusCode, 204);
    expectError(await link(portrait.url), 404, 'file_not_found');
    assert.equal(await swept(portrait.id), true);
    assert.equal((await t.call(a.key, 'GET', `/v1/models/video-omni/characters/${id}`)).statusCode, 200);
    assert.equal((await t.call(a.key, 'DELETE', `/v1/models/video-omni/characters/${id}`)).statusCode, 204);
  });
});
