/**
 * The libraries page and the new-task form with the person's library records, in a real browser:
 * - learning records are followed with one read of their kind's list per tick, however many records learn:
 *   the page's reads count against the account's request budget, which its API keys share, and a read per
 *   record let a page with five music styles in training (5 to 10 minutes each) take 150 requests a
 *   minute, more than the whole budget of 120, so the account's API calls were refused meanwhile;
 * - the new-task form's select offers only records a task can use: a music style still training or failed
 *   was offered too, and choosing it ended in `422 style_not_ready`;
 * - deleting a record that is already gone (deleted in another tab or with an API key meanwhile): the
 *   DELETE answers 404, and the row used to stay with "There is no library record" under the list and the
 *   kind's count unchanged. It leaves the list now.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { ManualClock } from '../../src/lib/clock.ts';
import type { InputResolver } from '../../src/libraries/index.ts';
import { confirmedPerson, launchBrowser, type Person, startWebApp, type WebApp } from './kit.ts';

/** Every linked file reads as what its name says: a minute of MP3, or a PNG picture. */
const probe: InputResolver = async (url) =>
  url.endsWith('.mp3')
    ? { format: 'mp3', sizeBytes: 1000, durationSeconds: 60 }
    : { format: 'png', sizeBytes: 1000 };
// Starts now: the browser drops a session cookie that expired by its own clock.
const clock = new ManualClock(new Date());
let web: WebApp;
let browser: Browser;

before(async () => {
  web = await startWebApp({ clock, resolveLibraryInput: probe });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await web?.close();
});

/** A person of their own for each test (their records apart), with an API key of their account. */
async function personWithKey(): Promise<{ person: Person; key: string }> {
  const person = await confirmedPerson(web, browser);
  const issued = await web.admin('POST', `/admin/v1/accounts/${person.accountId}/keys`, {});
  assert.equal(issued.statusCode, 201, issued.body);
  return { person, key: (issued.json() as { key: string }).key };
}

test('learning records are followed with one list read per tick, not one read per record', async () => {
  const { person, key } = await personWithKey();
  const ids: string[] = [];
  for (let i = 1; i <= 5; i += 1) {
    const made = await web.call(key, 'POST', '/v1/models/music-styles/styles', {
      name: `Стиль ${i} 🎸`,
      track_urls: ['https://files.test/t.mp3'],
    });
    assert.equal(made.statusCode, 201, made.body);
    ids.push((made.json() as { id: string }).id);
  }

  const { page } = person;
  const reads: string[] = [];
  page.on('request', (r) => {
    const { pathname } = new URL(r.url());
    if (r.method() === 'GET' && pathname.startsWith('/v1/')) reads.push(pathname);
  });
  await page.goto(`${web.base}/libraries`);
  await page.waitForTimeout(5000);
  assert.ok(reads.length >= 1, 'the learning records are followed');
  assert.deepEqual(new Set(reads), new Set(['/v1/models/music-styles/styles']), reads.join('\n'));
  assert.ok(reads.length <= 3, `${reads.length} reads in 5 s`);

  // The training ends: every row shows it, and the page stops reading.
  clock.advance(11 * 60_000);
  for (const id of ids) {
    await page.locator(`#record-${id} [data-state="ready"]`).waitFor({ timeout: 10_000 });
  }
  const done = reads.length;
  await page.waitForTimeout(2500);
  assert.equal(reads.length, done, 'no reads once every state is final');
});

test('a music style is offered to a task once it is ready, never while training or failed', async () => {
  const { person, key } = await personWithKey();
  const style = async (name: string): Promise<string> => {
    const made = await web.call(key, 'POST', '/v1/models/music-styles/styles', {
      name,
      track_urls: ['https://files.test/t.mp3'],
    });
    assert.equal(made.statusCode, 201, made.body);
    return (made.json() as { id: string }).id;
  };
  const ready = await style('Готов 🎸');
  const failed = await style('Сбой [sim:fail]');
  clock.advance(11 * 60_000);
  const training = await style('Учится 🎷');

  const { page } = person;
  await page.goto(`${web.base}/new?model=music-styles`);
  const select = page.locator('select[data-records]');
  await select.locator(`option[value="${ready}"]`).waitFor({ state: 'attached' });
  const offered = await select
    .locator('option')
    .evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value).filter((v) => v !== ''));
  assert.deepEqual(offered, [ready], `training ${training}, failed ${failed}`);
});

test('a record deleted elsewhere leaves the list when its Delete is confirmed', async () => {
  const { person, key } = await personWithKey();
  const ids: string[] = [];
  for (const name of ['Акварель 🎨', 'Тушь']) {
    const made = await web.call(key, 'POST', '/v1/models/image/styles', {
      name,
      image_urls: ['https://files.test/p.png'],
    });
    assert.equal(made.statusCode, 201, made.body);
    ids.push((made.json() as { id: string }).id);
  }
  const [gone] = ids;

  const { page } = person;
  await page.goto(`${web.base}/libraries`);
  const count = page.locator('[data-count="image/styles"]');
  assert.equal(await count.textContent(), '2 records');
  const deleted = await web.call(key, 'DELETE', `/v1/models/image/styles/${gone}`);
  assert.equal(deleted.statusCode, 204);

  const row = page.locator(`#record-${gone}`);
  await row.locator('button[data-delete]').click();
  const answer = page.waitForResponse((r) => r.request().method() === 'DELETE');
  await row.locator('.confirm button.danger').click();
  assert.equal((await answer).status(), 404);
  await row.waitFor({ state: 'detached' });
  await page.waitForFunction(
    () => document.querySelector('[data-count="image/styles"]')?.textContent === '1 record',
  );
  assert.equal(await page.locator('[data-list-error]').isHidden(), true);
});
