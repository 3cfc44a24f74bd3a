/**
 * The new-task form's select of the person's records offers only records a task can use: a music style
 * still training (5 to 10 minutes) or failed was offered too, and choosing it ended in `422
 * style_not_ready`.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { ManualClock } from '../../src/lib/clock.ts';
import type { InputResolver } from '../../src/libraries/index.ts';
import { confirmedPerson, launchBrowser, type Person, startWebApp, type WebApp } from './kit.ts';

const probe: InputResolver = async () => ({ format: 'mp3', sizeBytes: 1000, durationSeconds: 60 });
// Starts now: the browser drops a session cookie that expired by its own clock.
const clock = new ManualClock(new Date());
let web: WebApp;
let browser: Browser;
let person: Person;

before(async () => {
  web = await startWebApp({ clock, resolveLibraryInput: probe });
  browser = await launchBrowser();
  person = await confirmedPerson(web, browser);
});
after(async () => {
  await browser?.close();
  await web?.close();
});

test('a music style is offered to a task once it is ready, never while training or failed', async () => {
  const issued = await web.admin('POST', `/admin/v1/accounts/${person.accountId}/keys`, {});
  assert.equal(issued.statusCode, 201, issued.body);
  const { key } = issued.json() as { key: string };
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
