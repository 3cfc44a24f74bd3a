/**
 * The libraries page follows learning records with one read of their kind's list per tick, however many
 * records learn: the page's reads count against the account's request budget, which its API keys share, and
 * a read per record let a page with five music styles in training (5 to 10 minutes each) take 150 requests
 * a minute, more than the whole budget of 120, so the account's API calls were refused meanwhile.
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

test('learning records are followed with one list read per tick, not one read per record', async () => {
  const issued = await web.admin('POST', `/admin/v1/accounts/${person.accountId}/keys`, {});
  assert.equal(issued.statusCode, 201, issued.body);
  const { key } = issued.json() as { key: string };
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
