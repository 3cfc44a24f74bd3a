import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, newContext, screenshot, signIn, signUp, startWebApp, type WebApp } from './kit.ts';
import { linkTo, readOutbox, waitForMail } from './mail.ts';

const EMAIL = 'barbara@example.com';
const PASSWORD = 'first password here';
/** Another person for the reset, so its wrong attempts stay apart from the first one's. */
const FORGETFUL = 'forgetful@example.com';

describe('sign-in: wrong passwords, limits, password reset', () => {
  let web: WebApp;
  let browser: Browser;

  before(async () => {
    web = await startWebApp();
    browser = await launchBrowser();
    const context = await newContext(browser);
    const page = await context.newPage();
    await signUp(page, web.base, EMAIL, PASSWORD);
    await context.close();
    const second = await newContext(browser);
    await signUp(await second.newPage(), web.base, FORGETFUL, PASSWORD);
    await second.close();
  });
  after(async () => {
    await browser?.close();
    await web?.close();
  });

  test('a wrong password shows a readable error and keeps the e-mail in the form', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    const status = await signIn(page, web.base, EMAIL, 'not the password');
    assert.equal(status, 401);
    assert.equal(await page.getByLabel('E-mail', { exact: true }).inputValue(), EMAIL);
    const text = (await page.locator('body').textContent()) ?? '';
    assert.match(text, /password/i);
    assert.doesNotMatch(text, /invalid_credentials|\{"error"/, 'words, not a code or JSON');
    await screenshot(page, 'signin-error');
    await context.close();
  });

  test('keyboard: the first Tab shows Skip to content, and Enter puts the focus on the page content', async () => {
    /** Tabs once from a fresh page load and follows the skip link; what was focused, and where. */
    const skip = async (page: import('playwright-core').Page, url: string, name: string) => {
      await page.goto(url);
      await page.keyboard.press('Tab');
      const link = page.getByRole('link', { name, exact: true });
      assert.equal(await link.evaluate((el) => el === document.activeElement), true, `${url}: first Tab`);
      const box = await link.boundingBox();
      assert.ok(box && box.y >= 0 && box.width > 0 && box.height > 0, `${url}: visible when focused`);
      await page.keyboard.press('Enter');
      const focused = await page.evaluate(() => document.activeElement?.id ?? '');
      assert.equal(focused, 'content', `${url}: the focus is on <main>`);
      // The next Tab goes on from the content (into it, or past it when it has nothing to focus), never
      // back through the header's links.
      await page.keyboard.press('Tab');
      const inHeader = await page.evaluate(() => document.activeElement?.closest('header') !== null);
      assert.equal(inHeader, false, `${url}: the next Tab skips the header`);
      return link;
    };
    const context = await newContext(browser);
    const page = await context.newPage();
    const hidden = await (async () => {
      await page.goto(`${web.base}/signin`);
      return page.getByRole('link', { name: 'Skip to content', exact: true }).boundingBox();
    })();
    assert.ok(!hidden || hidden.y + hidden.height <= 0, 'off screen until focused');
    await skip(page, `${web.base}/signin`, 'Skip to content');
    await signIn(page, web.base, EMAIL, PASSWORD);
    for (const path of ['/', '/ledger', '/settings', '/nope'])
      await skip(page, `${web.base}${path}`, 'Skip to content');
    await context.close();
    const russian = await newContext(browser, { acceptLanguage: 'ru' });
    await skip(await russian.newPage(), `${web.base}/signin`, 'К содержимому');
    await russian.close();
  });

  test('a wrong current password in the settings is called that, not a wrong e-mail', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await signUp(page, web.base, 'settings-wrong@example.com', PASSWORD);
    await page.goto(`${web.base}/settings`);
    await page.getByLabel('Current password', { exact: true }).fill('not the password');
    await page.getByLabel('New password', { exact: true }).fill('another password');
    const answer = page.waitForResponse(
      (r) => new URL(r.url()).pathname === '/settings' && r.request().method() === 'POST',
    );
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    assert.equal((await answer).status(), 401);
    // Said at the field it is about (form-problems.test.ts checks the accessibility tree).
    const current = page.getByLabel('Current password', { exact: true });
    assert.equal(await current.getAttribute('aria-invalid'), 'true');
    const note = page.locator(`[id="${await current.getAttribute('aria-describedby')}"]`);
    assert.equal((await note.textContent())?.trim(), 'The current password is wrong.');
    await context.close();
  });

  test('password reset by e-mail: the link opens a form, the new password signs in', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(`${web.base}/reset`);
    await screenshot(page, 'reset');
    await page.getByLabel('E-mail', { exact: true }).fill(FORGETFUL);
    await page.getByLabel('E-mail', { exact: true }).press('Enter');
    await page.waitForLoadState('load');
    const mail = await waitForMail(
      () => readOutbox(web.dir),
      FORGETFUL,
      (m) => m.links.some((l) => new URL(l).pathname === '/reset/new'),
    );
    await page.goto(linkTo(mail, '/reset/new'));
    assert.doesNotMatch(page.url(), /token=/, 'the token leaves the address bar at once');
    await screenshot(page, 'reset-new');
    const next = 'second password here';
    for (const field of await page.locator('input[type="password"]').all()) await field.fill(next);
    await page.locator('input[type="password"]').last().press('Enter');
    await page.waitForLoadState('load');

    const fresh = await newContext(browser);
    const other = await fresh.newPage();
    assert.equal(await signIn(other, web.base, FORGETFUL, PASSWORD), 401, 'the old password is gone');
    const status = await signIn(other, web.base, FORGETFUL, next);
    assert.ok(status < 400, `the new password signs in: ${status}`);
    await other.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
    await fresh.close();
    await context.close();
  });

  test('an e-mail with accents signs up, signs in and gets a reset link through the forms', async () => {
    // The service takes any Unicode local part; an e-mail field (type="email") would refuse it in the
    // browser before any request, so such a person could use none of these forms.
    const typed = 'Zoë@Exämple.com';
    const stored = 'zoë@xn--exmple-cua.com';
    const context = await newContext(browser);
    const page = await context.newPage();
    await signUp(page, web.base, typed, PASSWORD);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForLoadState('load');
    assert.equal(await signIn(page, web.base, 'zoë@exämple.com', PASSWORD), 303);
    assert.ok(
      ((await page.locator('header').textContent()) ?? '').includes(stored),
      'signed in as the stored form',
    );
    await context.close();

    const signedOut = await newContext(browser);
    const reset = await signedOut.newPage();
    await reset.goto(`${web.base}/reset`);
    await reset.getByLabel('E-mail', { exact: true }).fill(typed);
    await reset.getByLabel('E-mail', { exact: true }).press('Enter');
    await reset.waitForLoadState('load');
    // nodemailer writes the domain of the To header back in Unicode.
    const mail = await waitForMail(
      () => readOutbox(web.dir),
      'zoë@',
      (m) => m.links.some((l) => new URL(l).pathname === '/reset/new'),
    );
    assert.ok(linkTo(mail, '/reset/new'));
    await signedOut.close();
  });

  // Last: the limit holds this address too, so nothing may sign in from here after it.
  test('too many wrong attempts: 429 with a readable error, and even the right password waits', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    let status = 0;
    let attempts = 0;
    while (status !== 429 && attempts < 30) {
      attempts += 1;
      status = await signIn(page, web.base, EMAIL, `wrong password ${attempts}`);
      assert.ok(status === 401 || status === 429, `attempt ${attempts}: ${status}`);
    }
    assert.equal(status, 429, `limited within ${attempts} attempts`);
    const text = (await page.locator('body').textContent()) ?? '';
    assert.match(text, /too many|try again|later/i);
    assert.doesNotMatch(text, /rate_limited|\{"error"/);
    await screenshot(page, 'signin-limited');
    assert.equal(
      await signIn(page, web.base, EMAIL, PASSWORD),
      429,
      'the e-mail is limited, not only wrong guesses',
    );
    await context.close();
  });
});
