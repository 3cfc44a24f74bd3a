/**
 * Deleting a record in the libraries page that is already gone (deleted in another tab or with an API key
 * meanwhile): the DELETE answers 404, and the row used to stay with "There is no library record" under the
 * list and the kind's count unchanged, a row that no click could take away. It leaves the list now.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import type { InputResolver } from '../../src/libraries/index.ts';
import { confirmedPerson, launchBrowser, type Person, startWebApp, type WebApp } from './kit.ts';

const probe: InputResolver = async () => ({ format: 'png', sizeBytes: 1000 });
let web: WebApp;
let browser: Browser;
let person: Person;

before(async () => {
  web = await startWebApp({ resolveLibraryInput: probe });
  browser = await launchBrowser();
  person = await confirmedPerson(web, browser);
});
after(async () => {
  await browser?.close();
  await web?.close();
});

test('a record deleted elsewhere leaves the list when its Delete is confirmed', async () => {
  const issued = await web.admin('POST', `/admin/v1/accounts/${person.accountId}/keys`, {});
  assert.equal(issued.statusCode, 201, issued.body);
  const { key } = issued.json() as { key: string };
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
