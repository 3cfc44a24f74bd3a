/**
 * The uploads page over `app.inject` (issue 15) and the uploads service's listing it reads: only the
 * account's live files (neither deleted nor expired), newest first, with the bytes held against the
 * quota; names escaped; direct links with copy buttons, previews and delete buttons; signed-out visits
 * go to the sign-in page.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { drawPicture, encodePng } from '../src/generators/simulator/media/png.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { sessionPrincipal } from '../src/people/index.ts';
import type { TestApp } from './helpers.ts';
import { Browser, type FakePeople, startWithFakePeople, textOf } from './web-kit.ts';

const png = encodePng(8, 8, drawPicture(8, 8, 'uploads'));

describe('dashboard: uploads page', () => {
  const clock = new ManualClock();
  let t: TestApp;
  let people: FakePeople;
  before(async () => {
    ({ t, people } = await startWithFakePeople({
      clock,
    }));
  });
  after(() => t.close());

  async function person(): Promise<{ browser: Browser; key: string; accountId: string }> {
    const browser = new Browser(t);
    const email = await browser.signUp();
    const accountId = people.persons.get(email)?.accountId;
    assert.ok(accountId);
    const issued = await t.container.services.admin.issueKey(accountId, {
      name: 'test',
      models: null,
      dailyLimitMinor: null,
    });
    return { browser, key: issued.key, accountId };
  }

  async function upload(key: string, filename: string): Promise<{ id: string; url: string }> {
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/files?filename=${encodeURIComponent(filename)}`,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'image/png' },
      payload: png,
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { id: string; url: string };
  }

  test('the service lists live files of the account only, newest first, with the quota', async () => {
    const a = await person();
    const b = await person();
    const first = await upload(a.key, 'first.png');
    clock.advance(1000);
    const second = await upload(a.key, 'second.png');
    clock.advance(1000);
    const gone = await upload(a.key, 'gone.png');
    await upload(b.key, 'theirs.png');
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/v1/files/${gone.id}`,
      headers: { authorization: `Bearer ${a.key}` },
    });
    assert.equal(del.statusCode, 204);
    const uploads = t.container.services.uploads;
    const listed = await uploads.list(sessionPrincipal({ accountId: a.accountId }));
    assert.deepEqual(
      listed.files.map((f) => f.id),
      [second.id, first.id],
    );
    assert.equal(listed.usedBytes, png.length * 2);
    assert.ok(listed.quotaBytes > 0);
    clock.advance(400 * 24 * 3600_000);
    const later = await uploads.list(sessionPrincipal({ accountId: a.accountId }));
    assert.deepEqual(later.files, [], 'expired files are not listed');
    assert.equal(later.usedBytes, 0);
  });

  test('signed-out visits go to /signin', async () => {
    const res = await new Browser(t).get('/uploads');
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/signin?next=%2Fuploads');
  });

  test('the page lists own files with links, copy, preview and delete; names escaped', async () => {
    const me = await person();
    const other = await person();
    const mine = await upload(me.key, '<i>me</i>.png');
    await upload(other.key, 'not-mine.png');
    const res = await me.browser.get('/uploads');
    assert.equal(res.statusCode, 200);
    const text = textOf(res.body);
    assert.ok(!res.body.includes('<i>me</i>'), 'escaped');
    assert.ok(!text.includes('not-mine'), "another account's file");
    const url = mine.url.replace(/&/g, '&amp;');
    assert.ok(res.body.includes(`value="${url}"`), 'the direct link in a copyable box');
    assert.ok(res.body.includes(`data-copy="link-${mine.id}"`));
    assert.ok(res.body.includes(`<img src="${url}"`), 'a preview');
    assert.ok(res.body.includes(`data-delete="/v1/files/${mine.id}"`));
    assert.match(text, /image\/png/);
    assert.match(text, /\d+ B of [\d.,]+ [KMG]?B used/);
    const none = await (await person()).browser.get('/uploads');
    assert.match(textOf(none.body), /No files yet\./);
    assert.match(none.body, /<input type="file" name="file" multiple/);
  });

  test('a file a library record uses says it is kept instead of its expiry', async () => {
    const me = await person();
    const photo = encodePng(64, 64, drawPicture(64, 64, 'held'));
    const made = await Promise.all(
      ['portrait.png', 'body.png', 'loose.png'].map(async (filename) => {
        const res = await t.app.inject({
          method: 'POST',
          url: `/v1/files?filename=${filename}`,
          headers: { authorization: `Bearer ${me.key}`, 'content-type': 'image/png' },
          payload: photo,
        });
        assert.equal(res.statusCode, 201, res.body);
        return res.json() as { id: string; url: string };
      }),
    );
    const [portrait, fullBody] = made;
    const character = await t.call(me.key, 'POST', '/v1/models/video-omni/characters', {
      name: 'Ann',
      portrait_url: portrait?.url,
      full_body_url: fullBody?.url,
    });
    assert.equal(character.statusCode, 201, character.body);
    const rows = (await me.browser.get('/uploads')).body.split('<tr id="upload-').slice(1);
    const held = rows.filter((row) => textOf(row).includes('Kept while a library record uses it'));
    assert.equal(held.length, 2, 'the portrait and the full body');
    const loose = rows.find((row) => row.includes('loose.png'));
    assert.ok(loose && !held.includes(loose));
    assert.equal((loose.match(/<time /g) ?? []).length, 2, 'uploaded and expires');
  });

  test("the form's refusals about the file name it as the form labels it, in the page's language", async () => {
    const me = await person();
    const refusals = (body: string) => {
      const raw = /data-refusals="([^"]*)"/.exec(body)?.[1] ?? '{}';
      return JSON.parse(raw.replace(/&quot;/g, '"').replace(/&amp;/g, '&')) as Record<string, string>;
    };
    const en = refusals((await me.browser.get('/uploads')).body);
    assert.equal(en.file_type, 'The file in “Files” is of a type that is not accepted here.');
    assert.equal(en.file_empty, 'The file in “Files” is empty.');
    assert.equal(en.file_too_large, 'The file in “Files” is larger than 100 MB.');
    await me.browser.post('/language', { lang: 'ru', next: '/uploads' });
    const ru = refusals((await me.browser.get('/uploads')).body);
    assert.equal(ru.file_type, 'Файл в поле «Файлы» имеет недопустимый здесь формат.');
    assert.equal(ru.file_empty, 'Файл в поле «Файлы» пуст.');
    // The API itself keeps naming its field `file`.
    const api = await t.app.inject({
      method: 'POST',
      url: '/v1/files?filename=notes.txt',
      headers: { authorization: `Bearer ${me.key}`, 'content-type': 'text/plain' },
      payload: 'not a picture',
    });
    assert.equal(api.statusCode, 422);
    assert.equal(api.json().error.message, 'The file in file is of a type that is not accepted here.');
  });
});
