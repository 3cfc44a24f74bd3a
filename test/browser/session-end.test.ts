/**
 * A page left open when its session ends (the person signs out in another tab): what it follows by itself
 * stops asking `/v1` and the page leads to the sign-in page, which brings the person back to it; what the
 * person sends from it is refused in the dashboard's words, not the API's words about keys and headers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { confirmedPerson, launchBrowser, type Person, signIn, startWebApp, type WebApp } from './kit.ts';

const SESSION_ENDED =
  'You were signed out (here, in another tab, or as the session expired) or signed in again elsewhere: reload the page, sign in if asked, and try again.';

describe('a page whose session ends in another tab', () => {
  let web: WebApp;
  let browser: Browser;
  let person: Person;

  before(async () => {
    web = await startWebApp({ worker: true, env: { SIM_SPEED: '60', PAYMENTS: 'test' } });
    browser = await launchBrowser();
    person = await confirmedPerson(web, browser);
    const credit = await web.admin('POST', `/admin/v1/accounts/${person.accountId}/credits`, {
      amount_minor: 100_000,
      reference: `session-end-${person.accountId}`,
    });
    assert.equal(credit.statusCode, 201, credit.body);
  });
  after(async () => {
    await browser?.close();
    await web?.close();
  });

  test("a running task's page stops following it and goes to sign in", async () => {
    const { page, context } = person;
    const csrf = await page.locator('meta[name="csrf-token"]').getAttribute('content');
    const created = await page.request.post(`${web.base}/v1/tasks`, {
      data: { model: 'image', settings: { prompt: 'a fox at dusk [sim:slow]' } },
      headers: { 'x-csrf-token': csrf ?? '' },
    });
    assert.equal(created.status(), 202, await created.text());
    const id = ((await created.json()) as { id: string }).id;
    await page.goto(`${web.base}/tasks/${id}`);
    await page.getByRole('button', { name: 'Cancel', exact: true }).waitFor();
    const asked: string[] = [];
    page.on('response', (response) => {
      if (new URL(response.url()).pathname.startsWith('/v1/')) asked.push(`${response.status()}`);
    });

    const other = await context.newPage();
    await other.goto(`${web.base}/`);
    await other.getByRole('button', { name: 'Sign out' }).click();
    await other.getByRole('button', { name: 'Sign in' }).waitFor();

    await page.waitForURL(`${web.base}/signin?next=${encodeURIComponent(`/tasks/${id}`)}`, {
      timeout: 20_000,
    });
    const seen = asked.length;
    await page.waitForTimeout(4_500);
    assert.equal(asked.length, seen, 'nothing more is asked of /v1');
    assert.ok(asked.filter((status) => status === '401').length <= 1, asked.join(' '));
    await other.close();
  });

  for (const how of ['signed out', 'signed in again'] as const) {
    test(`a top-up sent after the person ${how} in another tab says so and keeps the amount`, async () => {
      const { page, context } = person;
      await page.goto(`${web.base}/topup`);
      // The test before ended this session: signing in again leads back here.
      if (new URL(page.url()).pathname === '/signin')
        assert.equal(await signIn(page, web.base, person.email, person.password), 303);
      assert.equal(new URL(page.url()).pathname, '/topup');
      await page.getByLabel('Amount').fill('150');

      const other = await context.newPage();
      await other.goto(`${web.base}/`);
      await other.getByRole('button', { name: 'Sign out' }).click();
      await other.getByRole('button', { name: 'Sign in' }).waitFor();
      if (how === 'signed in again')
        assert.equal(await signIn(other, web.base, person.email, person.password), 303);
      await other.close();

      const answer = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/topups');
      await page.getByRole('button', { name: 'Top up' }).click();
      assert.equal((await answer).status(), how === 'signed out' ? 401 : 403);
      await page.getByRole('alert').filter({ hasText: SESSION_ENDED }).waitFor();
      assert.equal(await page.getByLabel('Amount').inputValue(), '150');
      assert.equal(new URL(page.url()).pathname, '/topup');
    });
  }
});
