/**
 * The uploads page in a real browser (issue 15): two files uploaded with the form are listed with
 * working direct links, a link is copied with its button, one file is deleted after the confirmation
 * (its link answers 404 then), and a file the API refuses shows the API's message (the field named as
 * the form labels it); a batch where one file is refused still lists the others.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { drawPicture, encodePng } from '../../src/generators/simulator/media/png.ts';
import { confirmedPerson, launchBrowser, type Person, screenshot, startWebApp, type WebApp } from './kit.ts';

/** A mono 16-bit WAV of a tone, `seconds` long. */
function wav(seconds: number, rate = 8000): Buffer {
  const samples = Math.round(seconds * rate);
  const out = Buffer.alloc(44 + samples * 2);
  out.write('RIFF', 0);
  out.writeUInt32LE(36 + samples * 2, 4);
  out.write('WAVEfmt ', 8);
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20);
  out.writeUInt16LE(1, 22);
  out.writeUInt32LE(rate, 24);
  out.writeUInt32LE(rate * 2, 28);
  out.writeUInt16LE(2, 32);
  out.writeUInt16LE(16, 34);
  out.write('data', 36);
  out.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i += 1) out.writeInt16LE(Math.round(Math.sin(i / 6) * 8000), 44 + i * 2);
  return out;
}

describe('uploads page in the browser', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-uploads-'));
  const picture = path.join(dir, 'picture.png');
  const tone = path.join(dir, 'tone.wav');
  const text = path.join(dir, 'notes.txt');
  let web: WebApp;
  let browser: Browser;
  let person: Person;

  before(async () => {
    fs.writeFileSync(picture, encodePng(96, 96, drawPicture(96, 96, 'uploads')));
    fs.writeFileSync(tone, wav(3));
    fs.writeFileSync(text, 'not a picture, a recording or a video\n');
    web = await startWebApp();
    browser = await launchBrowser();
    person = await confirmedPerson(web, browser);
  });
  after(async () => {
    await browser?.close();
    await web?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('upload two files, open their links, copy one, delete one', async () => {
    const page = person.page;
    await person.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: web.base });
    await page.goto(`${web.base}/uploads`);
    await page.getByLabel('Files').setInputFiles([picture, tone]);
    const reloaded = page.waitForEvent('load');
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await reloaded;
    const rows = page.locator('table.uploads tbody tr');
    await rows.nth(1).waitFor();
    assert.equal(await rows.count(), 2);
    const links = await page
      .locator('table.uploads input[readonly]')
      .evaluateAll((inputs) => inputs.map((i) => (i as HTMLInputElement).value));
    for (const link of links) {
      const answer = await page.request.get(link);
      assert.equal(answer.status(), 200, link);
    }
    const pictureLink = links.find((l) => l.endsWith('.png'));
    assert.ok(pictureLink);
    assert.equal(await page.locator(`img[src="${pictureLink}"]`).count(), 1, 'a preview of the picture');
    assert.equal(await page.locator('audio').count(), 1, 'a player for the recording');
    await screenshot(page, 'uploads');

    const row = rows.filter({ hasText: 'picture.png' });
    await row.getByRole('button', { name: 'Copy' }).click();
    await row.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), pictureLink);

    const usage = page.getByTestId('upload-usage');
    const usedWithBoth = await usage.textContent();
    await row.getByRole('button', { name: 'Delete picture.png' }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await page.request.get(pictureLink)).status(), 404);
    // The bytes used follow the delete without a reload, and say what a reload says.
    await page.waitForFunction(
      (before) => document.querySelector('[data-testid="upload-usage"]')?.textContent !== before,
      usedWithBoth,
    );
    const usedLive = await usage.textContent();
    await page.reload();
    assert.equal(await rows.count(), 1);
    assert.equal(await usage.textContent(), usedLive);
  });

  test('keyboard: Delete puts the focus on the question, Cancel and Yes, delete keep it in the list', async () => {
    const page = person.page;
    await page.goto(`${web.base}/uploads`);
    await page.getByLabel('Files').setInputFiles([picture, tone]);
    const reloaded = page.waitForEvent('load');
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await reloaded;
    const focused = () =>
      page.evaluate(
        () =>
          (document.activeElement as HTMLElement | null)?.getAttribute('aria-label') ??
          document.activeElement?.textContent?.trim() ??
          '',
      );
    const first = page.getByRole('button', { name: /^Delete / }).first();
    await first.focus();
    const name = await focused();
    await page.keyboard.press('Enter');
    assert.equal(await focused(), 'Yes, delete');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'Cancel');
    await page.keyboard.press('Enter');
    assert.equal(await focused(), name, 'Cancel gives the focus back to the Delete button');
    const rows = await page.locator('table.uploads tbody tr').count();
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      (n) => document.querySelectorAll('table.uploads tbody tr').length === n - 1,
      rows,
    );
    assert.match(await focused(), /^Delete /, "the focus goes on from the next row's Delete");
  });

  test('a batch with a refused file still lists the files that went in, and keeps the refusal', async () => {
    const page = person.page;
    await page.goto(`${web.base}/uploads`);
    const before = await page.locator('table.uploads tbody tr').count();
    await page.getByLabel('Files').setInputFiles([text, picture]);
    const reloaded = page.waitForEvent('load');
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await reloaded;
    await page.locator('table.uploads tbody tr').nth(before).waitFor();
    assert.equal(await page.locator('table.uploads tbody tr').count(), before + 1);
    const alert = page.locator('[data-form-error]:not([hidden])');
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /^notes\.txt: The file in “Files” is of a type/);
    await page.reload();
    assert.equal(await page.locator('[data-form-error]:not([hidden])').count(), 0, 'shown once');
  });

  test("a file the API refuses shows the API's message, naming the form's field by its label", async () => {
    const page = person.page;
    await page.goto(`${web.base}/uploads`);
    await page.getByLabel('Files').setInputFiles([text]);
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    const alert = page.locator('[data-form-error]:not([hidden])');
    await alert.waitFor();
    assert.match(
      (await alert.textContent()) ?? '',
      /^notes\.txt: The file in “Files” is of a type that is not accepted here\.$/,
    );
    // The button, disabled while sending, has the keyboard focus again.
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Upload');
  });
});
