/**
 * The dashboard's top-up in the test mode (CONTRACT §13, §14): a confirmed person types 1500 in
 * `Amount`, presses `Top up`, lands on the test payment page, presses Pay, returns to the top-up's page
 * showing it paid, the overview shows the money and the ledger's credit links back to the top-up;
 * Decline ends canceled with no money. Without `PAYMENTS=test` the pay page does not exist. Pay also returns to a return_url on another site, and
 * without scripts the form leads on to YooKassa's checkout through the top-up's page.
 * Screenshots: topup, topup-pay, topup-done.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, Route } from 'playwright-core';
import { YookassaFake } from '../fakes/yookassa.ts';
import { confirmedPerson, launchBrowser, screenshot, startWebApp, type WebApp } from './kit.ts';

describe('top-up in the browser (PAYMENTS=test)', () => {
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

  test('Amount 1500 → Top up → Pay → the page shows it paid and the overview shows 1,500 RUB', async () => {
    const person = await confirmedPerson(web, browser);
    const { page } = person;
    await page.goto(`${web.base}/topup`);
    await page.getByLabel('Amount', { exact: true }).fill('1500');
    await screenshot(page, 'topup');
    await page.getByRole('button', { name: 'Top up', exact: true }).click();
    await page.waitForURL(/\/topups\/tp_[^/]+\/pay$/);
    await screenshot(page, 'topup-pay');
    await page.getByRole('button', { name: 'Pay', exact: true }).click();
    await page.waitForURL(/\/topups\/tp_[^/]+$/);
    const topupUrl = page.url();
    const status = page.getByTestId('topup-status');
    assert.equal(await status.getAttribute('data-status'), 'succeeded');
    await screenshot(page, 'topup-done');
    await page.goto(`${web.base}/`);
    assert.match((await page.getByTestId('available').textContent()) ?? '', /1,500\.00/);
    // The list shows it, and the operator's ledger has the credit with the payment as reference.
    await page.goto(`${web.base}/topup`);
    assert.equal(await page.locator('table.topups tbody tr[data-status="succeeded"]').count(), 1);
    const ledger = await web.admin('GET', `/admin/v1/accounts/${person.accountId}/ledger`);
    const creditsOf = (ledger.json().entries as Array<{ type: string; amount_minor: number }>).filter(
      (e) => e.type === 'credit',
    );
    assert.deepEqual(
      creditsOf.map((e) => e.amount_minor),
      [150_000],
    );
    // The top-up's page leads to its credit in the dashboard's ledger, which names the credit by its
    // top-up and leads back to the top-up's page.
    await page.goto(topupUrl);
    await page.getByRole('link', { name: 'The credit in the ledger', exact: true }).click();
    await page.waitForURL(/\/ledger\?kind=credit&from=\d{4}-\d\d-\d\d$/);
    assert.equal(await page.locator('table.ledger tbody tr').count(), 1);
    const topupId = new URL(topupUrl).pathname.split('/').at(-1) ?? '';
    await page.getByRole('link', { name: `top-up ${topupId}`, exact: true }).click();
    await page.waitForURL(topupUrl);
    assert.equal(await page.getByTestId('topup-status').getAttribute('data-status'), 'succeeded');
    await person.context.close();
  });

  test('Decline: the top-up ends canceled and no money arrives', async () => {
    const person = await confirmedPerson(web, browser);
    const { page } = person;
    await page.goto(`${web.base}/topup`);
    await page.getByLabel('Amount', { exact: true }).fill('250,50');
    await page.getByRole('button', { name: 'Top up', exact: true }).click();
    await page.waitForURL(/\/pay$/);
    // A post with neither button's action is refused and moves nothing (it used to decline).
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    for (const form of [{ _csrf: csrf }, { _csrf: csrf, action: 'later' }] as Array<Record<string, string>>) {
      const odd = await page.request.post(page.url(), { form, maxRedirects: 0 });
      assert.equal(odd.status(), 422);
    }
    await page.reload();
    await page.getByRole('button', { name: 'Decline', exact: true }).click();
    await page.waitForURL(/\/topups\/tp_[^/]+$/);
    assert.equal(await page.getByTestId('topup-status').getAttribute('data-status'), 'canceled');
    await page.goto(`${web.base}/`);
    assert.match((await page.getByTestId('available').textContent()) ?? '', /0\.00/);
    await person.context.close();
  });

  test("Pay takes the payer back to a top-up's return_url on another site", async () => {
    // The browser holds a form's redirect to the page's form-action: another origin is another port.
    const shop = http.createServer((_request, response) => response.end('back at the shop'));
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
    const returnUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}/paid?order=7`;
    const person = await confirmedPerson(web, browser);
    const { page } = person;
    try {
      const csrf = (await page.locator('meta[name="csrf-token"]').getAttribute('content')) ?? '';
      const created = await page.request.post(`${web.base}/v1/topups`, {
        data: { amount_minor: 500, return_url: returnUrl },
        headers: { 'x-csrf-token': csrf },
      });
      assert.equal(created.status(), 201, await created.text());
      const topup = (await created.json()) as { id: string; confirmation_url: string };
      await page.goto(topup.confirmation_url);
      await page.getByRole('button', { name: 'Pay', exact: true }).click();
      await page.waitForURL(returnUrl);
      assert.equal(await page.locator('body').textContent(), 'back at the shop');
      const after = await page.request.get(`${web.base}/v1/topups/${topup.id}`);
      assert.equal(((await after.json()) as { status: string }).status, 'succeeded');
    } finally {
      await person.context.close();
      shop.close();
    }
  });

  test('a bad amount and an API refusal are shown in the form; another person cannot open the pay page', async () => {
    const owner = await confirmedPerson(web, browser);
    await owner.page.goto(`${web.base}/topup`);
    await owner.page.getByLabel('Amount', { exact: true }).fill('0.5');
    await owner.page.getByRole('button', { name: 'Top up', exact: true }).click();
    // Said under the field (form-problems.test.ts checks the accessibility tree).
    await owner.page.locator('.field-problem').waitFor();
    // A refusal of the API (here a provider that does not answer) is shown, and the button, disabled
    // while sending, has the keyboard focus again.
    await owner.page.route('**/v1/topups', (route) =>
      route.fulfill({
        status: 503,
        headers: { 'retry-after': '5' },
        json: { error: { code: 'payments_unavailable', message: 'Payments are unavailable.' } },
      }),
    );
    await owner.page.getByLabel('Amount', { exact: true }).fill('100');
    await owner.page.getByRole('button', { name: 'Top up', exact: true }).click();
    await owner.page
      .locator('[data-topup-error]:not([hidden])', { hasText: 'Payments are unavailable.' })
      .waitFor();
    assert.equal(await owner.page.evaluate(() => document.activeElement?.textContent), 'Top up');
    await owner.page.unroute('**/v1/topups');
    await owner.page.getByRole('button', { name: 'Top up', exact: true }).click();
    await owner.page.waitForURL(/\/pay$/);
    const payUrl = owner.page.url();
    const other = await confirmedPerson(web, browser);
    const answer = await other.page.goto(payUrl);
    assert.equal(answer?.status(), 404);
    await owner.context.close();
    await other.context.close();
  });

  test("a call that gets no answer, or a proxy's page, is said in the page's words", async () => {
    const person = await confirmedPerson(web, browser);
    await person.page.goto(`${web.base}/topup`);
    const said =
      'The service did not answer (the connection failed or it is unavailable for now). Check the connection and try again.';
    const failures: Array<[string, Parameters<Route['fulfill']>[0] | null]> = [
      ['a dropped connection', null],
      ["a proxy's error page", { status: 502, contentType: 'text/html', body: '<html>Bad Gateway</html>' }],
      ['an empty answer', { status: 504, body: '' }],
    ];
    for (const [what, answer] of failures) {
      await person.page.route('**/v1/topups', (route) =>
        answer === null ? route.abort('failed') : route.fulfill(answer),
      );
      await person.page.getByLabel('Amount', { exact: true }).fill('100');
      await person.page.getByRole('button', { name: 'Top up', exact: true }).click();
      const alert = person.page.locator('[data-topup-error]:not([hidden])');
      await alert.waitFor();
      assert.equal(await alert.textContent(), said, what);
      await person.page.unroute('**/v1/topups');
    }
    await person.context.close();
  });
});

describe('the pay page without the test mode', () => {
  test('is 404 with PAYMENTS=off, and the top-up page says top-ups are unavailable', async () => {
    const web = await startWebApp();
    const browser = await launchBrowser();
    try {
      const person = await confirmedPerson(web, browser);
      const answer = await person.page.goto(`${web.base}/topups/tp_x/pay`);
      assert.equal(answer?.status(), 404);
      await person.page.goto(`${web.base}/topup`);
      assert.equal(await person.page.getByRole('button', { name: 'Top up', exact: true }).count(), 0);
      await person.context.close();
    } finally {
      await browser.close();
      await web.close();
    }
  });
});

describe('top-up without scripts (PAYMENTS=yookassa, the fake)', () => {
  test("Top up goes to the top-up's page, whose link leads on to the provider's checkout", async () => {
    const fake = await YookassaFake.start();
    const web = await startWebApp({ env: fake.env });
    const browser = await launchBrowser();
    try {
      const person = await confirmedPerson(web, browser);
      // The form posts itself: a 303 straight to the checkout would be held to form-action 'self'.
      const context = await browser.newContext({ javaScriptEnabled: false });
      await context.addCookies(await person.context.cookies());
      const page = await context.newPage();
      await page.goto(`${web.base}/topup`);
      await page.getByLabel('Amount', { exact: true }).fill('150');
      await page.getByRole('button', { name: 'Top up', exact: true }).click();
      await page.waitForURL(/\/topups\/tp_[^/]+$/);
      assert.equal(await page.getByTestId('topup-status').getAttribute('data-status'), 'pending');
      // Nothing reloads this page without scripts: it does not say it does, and offers a link instead.
      const waiting = (await page.locator('[data-topup-poll]').textContent()) ?? '';
      assert.doesNotMatch(waiting, /refreshes by itself/);
      await page.getByRole('link', { name: 'Check again' }).click();
      await page.waitForURL(/\/topups\/tp_[^/]+$/);
      // With scripts the page says so.
      const scripted = await person.context.newPage();
      await scripted.goto(page.url());
      await scripted.getByText('This page refreshes by itself.').waitFor();
      await scripted.close();
      await page.getByRole('link', { name: 'Continue to the payment' }).click();
      await page.waitForURL(`${fake.url}/checkout/**`);
      await context.close();
      await person.context.close();
    } finally {
      await browser.close();
      await web.close();
      await fake.close();
    }
  });
});
