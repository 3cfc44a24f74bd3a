/**
 * The operator console in a real browser (CONTRACT §13): a person signs up; in another context the
 * operator signs in at /admin with the token, finds the person by e-mail and credits 1 234,56 RUB; the
 * person's overview then shows the new available amount, the ledger page shows the credit and its CSV
 * download has it. The operator makes a key on an account's page: shown once, it works on /v1/me, and the
 * eleventh is refused in the form.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { ADMIN_TOKEN } from '../helpers.ts';
import {
  confirmedPerson,
  launchBrowser,
  me,
  newContext,
  screenshot,
  startWebApp,
  type WebApp,
} from './kit.ts';

describe('operator console in the browser', () => {
  let web: WebApp;
  let browser: Browser;
  before(async () => {
    web = await startWebApp({ env: { PAYMENTS: 'test' } });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await web?.close();
  });

  test('the operator credits a person found by e-mail; the overview, ledger and CSV show it', async () => {
    const person = await confirmedPerson(web, browser, { email: 'credit-me@example.com' });

    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(`${web.base}/admin`);
    await page.getByLabel('Token', { exact: true }).waitFor();
    await screenshot(page, 'admin-signin');
    await page.getByLabel('Token', { exact: true }).fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();

    await page.getByLabel('E-mail or name').fill(person.email);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('row', { name: /credit-me@example\.com/ }).waitFor();
    await screenshot(page, 'admin-accounts');
    await page
      .getByRole('row', { name: /credit-me@example\.com/ })
      .getByRole('link')
      .click();

    await page.getByLabel('Amount', { exact: true }).fill('1 234,56');
    await page.getByRole('button', { name: 'Credit', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Credited.' }).waitFor();
    assert.match((await page.getByTestId('available').textContent()) ?? '', /1,234\.56/);
    await screenshot(page, 'admin-account');

    await page.getByRole('link', { name: 'Models', exact: true }).click();
    await page.getByRole('button', { name: /^Turn off model-3d$/ }).waitFor();
    await screenshot(page, 'admin-models');
    await page.getByRole('link', { name: 'Channels', exact: true }).click();
    await page.getByRole('heading', { name: 'Channels' }).waitFor();
    await screenshot(page, 'admin-channels');

    // The person's overview, reloaded, shows the money.
    await person.page.goto(`${web.base}/`);
    assert.match((await person.page.getByTestId('available').textContent()) ?? '', /1,234\.56/);

    await person.page.goto(`${web.base}/ledger`);
    const row = person.page.getByRole('row', { name: /Credit/ });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /\+RUB\s?1,234\.56/);
    await screenshot(person.page, 'ledger');
    const [download] = await Promise.all([
      person.page.waitForEvent('download'),
      person.page.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    assert.match(download.suggestedFilename(), /^ledger-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = fs.readFileSync(await download.path(), 'utf8');
    assert.match(csv, /^id,created_at,kind,amount_minor,amount_rub,currency,task_id,reference,topup_id\r\n/);
    assert.match(csv, /,credit,123456,1234\.56,RUB,,console-[0-9a-f-]{36},\r\n/);

    // The person tops up in test mode; the console's top-ups list it, paid, with a link to the account.
    await person.page.goto(`${web.base}/topup`);
    await person.page.getByLabel('Amount', { exact: true }).fill('500');
    await person.page.getByRole('button', { name: 'Top up', exact: true }).click();
    await person.page.waitForURL(/\/topups\/tp_[^/]+\/pay$/);
    await person.page.getByRole('button', { name: 'Pay', exact: true }).click();
    await person.page.waitForURL(/\/topups\/tp_[^/]+$/);
    await page.getByRole('link', { name: 'Top-ups', exact: true }).click();
    const paid = page.getByRole('row', { name: /Paid/ });
    await paid.waitFor();
    assert.match((await paid.textContent()) ?? '', /RUB\s?500\.00/);
    await screenshot(page, 'admin-topups');
    await context.close();
    await person.context.close();
  });

  test('Back after a credit does not bring the amount back, so Credit again needs a new amount', async () => {
    const person = await confirmedPerson(web, browser, { email: 'credit-back@example.com' });
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(`${web.base}/admin`);
    await page.getByLabel('Token', { exact: true }).fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
    await page.getByLabel('E-mail or name').fill(person.email);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page
      .getByRole('row', { name: /credit-back@example\.com/ })
      .getByRole('link')
      .click();
    const accountUrl = page.url();

    await page.getByLabel('Amount', { exact: true }).fill('100');
    await page.getByRole('button', { name: 'Credit', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Credited.' }).waitFor();

    // The page comes back from the server (no-store) with a fresh reference; the browser must not
    // restore the typed amount into it, or one more click credits the same money a second time.
    await page.goBack();
    await page.waitForURL(accountUrl);
    await page.getByLabel('Amount', { exact: true }).waitFor();
    assert.equal(await page.getByLabel('Amount', { exact: true }).inputValue(), '');
    assert.match((await page.getByTestId('available').textContent()) ?? '', /RUB\s?100\.00/);
    await context.close();
    await person.context.close();
  });
  test('Create key on an account: shown once with Copy, works on /v1/me; the 11th is refused at the form', async () => {
    const id = (await web.admin('POST', '/admin/v1/accounts', { name: 'Console keys' })).json().id as string;
    const context = await newContext(browser);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: web.base });
    const page = await context.newPage();
    await page.goto(`${web.base}/admin`);
    await page.getByLabel('Token', { exact: true }).fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
    await page.goto(`${web.base}/admin/accounts/${id}`);

    await page.getByLabel('Name', { exact: true }).fill('ops');
    await page.getByLabel('Daily limit, RUB', { exact: true }).fill('99,50');
    await page.getByRole('button', { name: 'Create key', exact: true }).click();
    const shown = page.getByLabel('New key', { exact: true });
    await shown.waitFor();
    const key = await shown.inputValue();
    assert.match(key, /^gta_[A-Za-z0-9]+$/);
    assert.equal(new URL(page.url()).pathname, `/admin/accounts/${id}`);
    assert.doesNotMatch(page.url(), /gta_|\?/, 'never in the address');
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByRole('button', { name: 'Copied', exact: true }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key);
    const answer = await me(web.base, key);
    assert.equal(answer.status, 200);
    assert.equal((answer.body as { account_id: string }).account_id, id);
    assert.equal((answer.body as { daily_limit_minor: number }).daily_limit_minor, 9_950);
    assert.ok(
      !(await context.cookies()).some((c) => c.value.includes(key)),
      'no cookie keeps it past the page',
    );
    await page.reload();
    await page.getByRole('button', { name: 'Create key', exact: true }).waitFor();
    assert.equal(await page.getByLabel('New key', { exact: true }).count(), 0);
    assert.ok(!(await page.content()).includes(key), 'shown once: not again on reload');

    // Nine more make ten; the eleventh is refused in the page, what was typed kept.
    for (let i = 2; i <= 10; i++) {
      await page.getByLabel('Name', { exact: true }).fill(`k${i}`);
      await page.getByRole('button', { name: 'Create key', exact: true }).click();
      await page.getByLabel('New key', { exact: true }).waitFor();
    }
    await page.getByLabel('Name', { exact: true }).fill('k11');
    await page.getByRole('button', { name: 'Create key', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'already has 10 active keys' }).waitFor();
    assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'k11');
    assert.equal(await page.getByLabel('New key', { exact: true }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /^Revoke gta_/ }).count(), 10);

    // A bad daily limit is said at its field, which takes the focus.
    await page.getByLabel('Daily limit, RUB', { exact: true }).fill('lots');
    await page.getByRole('button', { name: 'Create key', exact: true }).click();
    const limit = page.getByLabel('Daily limit, RUB', { exact: true });
    await page.waitForFunction(() => document.activeElement?.getAttribute('name') === 'daily_limit');
    assert.equal(await limit.getAttribute('aria-invalid'), 'true');
    assert.match((await limit.evaluate((el) => el.getAttribute('aria-describedby'))) ?? '', /problem/);
    await context.close();
  });
  test("models: each row's controls are named with its model, and its limit is saved from the keyboard", async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(`${web.base}/admin`);
    await page.getByLabel('Token', { exact: true }).fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('link', { name: 'Models', exact: true }).click();
    // Every row has its own Save: a screen reader's list of buttons must tell them apart, as it tells
    // the rows' Turn off buttons apart.
    const limit = page.getByLabel('Active tasks limit video', { exact: true });
    await limit.fill('7');
    await limit.press('Tab');
    const save = page.getByRole('button', { name: 'Save video', exact: true });
    assert.equal(await save.evaluate((button) => button === document.activeElement), true);
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    // The page after the post is read again from the service: the saved limit is what it shows.
    assert.equal(await page.getByLabel('Active tasks limit video', { exact: true }).inputValue(), '7');
    await context.close();
  });
  test("the console's text fields are as tall as the dashboard's, never a 21 px target", async () => {
    const id = (await web.admin('POST', '/admin/v1/accounts', { name: 'Fields' })).json().id as string;
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(`${web.base}/admin`);
    await page.getByLabel('Token', { exact: true }).fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
    const height = async (label: string) =>
      (await page.getByLabel(label, { exact: true }).boundingBox())?.height ?? 0;
    await page.goto(`${web.base}/admin/accounts/${id}`);
    const email = await height('E-mail');
    assert.ok(email >= 30, `E-mail ${email} px`);
    // Amount and Reference had no type, and the search and the models' limits are `search` and
    // `number` fields: the stylesheet's field rule missed them all, leaving the browser's bare boxes in
    // its small font, 21 px tall, under a phone's 24 px target.
    for (const label of ['Amount', 'Reference']) assert.equal(await height(label), email, label);
    await page.goto(`${web.base}/admin/accounts`);
    assert.equal(await height('E-mail or name'), email);
    await page.goto(`${web.base}/admin/models`);
    assert.equal(await height('Active tasks limit video'), email);
    await context.close();
  });
});
