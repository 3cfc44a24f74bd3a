/**
 * Every time the dashboard and the console show is Moscow time, as the ledger, tasks and top-ups pages
 * say: an upload, a library record, a key and an account made at 22:30 UTC on 10 March were made at 01:30
 * on 11 March in Moscow, and no page shows the UTC date or hour instead.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { drawPicture, encodePng } from '../src/generators/simulator/media/png.ts';
import { ManualClock } from '../src/lib/clock.ts';
import type { InputResolver } from '../src/libraries/index.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from './helpers.ts';
import { outboxLink } from './mail-kit.ts';
import { Browser, textOf } from './web-kit.ts';

const fakeProbe: InputResolver = async () => ({ format: 'png', sizeBytes: 1000 });

describe('dashboard times are Moscow times', () => {
  // 22:30 UTC is 01:30 of the next day in Moscow (UTC+3).
  const clock = new ManualClock('2026-03-10T22:30:00.000Z');
  let t: TestApp;
  let browser: Browser;
  let accountId: string;
  before(async () => {
    t = await startTestApp({ worker: false, clock, resolveLibraryInput: fakeProbe });
    browser = new Browser(t);
    const email = 'moscow-times@example.com';
    await browser.signUp(email, 'correct horse battery');
    await browser.get(`/confirm?token=${outboxLink(t.dir, email, 'confirm')}`);
    accountId = (await browser.get('/v1/me')).json().account_id as string;
  });
  after(() => t.close());

  const moscow = /2026-03-11 01:30/;
  const utc = /2026-03-10/;

  test('uploads: uploaded and expires', async () => {
    const key = await t.container.services.admin.issueKey(accountId, {
      name: 'uploader',
      models: null,
      dailyLimitMinor: null,
    });
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/files?filename=dot.png',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'image/png' },
      payload: encodePng(4, 4, drawPicture(4, 4, 'moscow')),
    });
    assert.equal(res.statusCode, 201, res.body);
    const text = textOf((await browser.get('/uploads')).body);
    assert.match(text, moscow);
    assert.doesNotMatch(text, /22:30/);
  });

  test('libraries: a record created', async () => {
    const key = await t.container.services.admin.issueKey(accountId, {
      name: 'styler',
      models: null,
      dailyLimitMinor: null,
    });
    const made = await t.call(key.key, 'POST', '/v1/models/image/styles', {
      name: 'Night style',
      image_urls: ['https://files.test/i.png'],
    });
    assert.equal(made.statusCode, 201, made.body);
    const text = textOf((await browser.get('/libraries')).body);
    assert.match(text, moscow);
    assert.doesNotMatch(text, /22:30/);
  });

  test('keys: created and revoked dates', async () => {
    await browser.get('/keys');
    const made = await browser.post('/keys', { action: 'create', name: 'night key' });
    assert.equal(made.statusCode, 303, made.body);
    const id = /name="revoke" value="([^"]+)"/.exec((await browser.get('/keys')).body)?.[1];
    assert.ok(id);
    await browser.get(`/keys?revoke=${id}`);
    assert.equal((await browser.post('/keys', { action: 'revoke', id })).statusCode, 303);
    const text = textOf((await browser.get('/keys')).body);
    assert.match(text, /night key .*2026-03-11 Revoked 2026-03-11/);
    assert.doesNotMatch(text, utc);
  });

  test("the console: an account's and its keys' created dates", async () => {
    const operator = new Browser(t);
    await operator.get('/admin/signin');
    assert.equal((await operator.post('/admin/signin', { token: ADMIN_TOKEN })).statusCode, 303);
    const list = textOf((await operator.get('/admin/accounts')).body);
    assert.match(list, /2026-03-11/);
    assert.doesNotMatch(list, utc);
    const account = textOf((await operator.get(`/admin/accounts/${accountId}`)).body);
    assert.match(account, /2026-03-11/);
    assert.doesNotMatch(account, utc);
  });
});
