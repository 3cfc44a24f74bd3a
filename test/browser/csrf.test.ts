import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { csrfField, launchBrowser, newContext, signUp, startWebApp, type WebApp } from './kit.ts';

/** A page of another site (`localhost` is another site than `127.0.0.1`) whose form posts to `action`. */
async function startForeignSite(action: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(
      `<!doctype html><form id="f" method="post" action="${action}">` +
        '<input name="_csrf" value="guessed"></form><script>document.getElementById("f").submit()</script>',
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://localhost:${port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function signedIn(page: Page, base: string): Promise<boolean> {
  await page.goto(`${base}/`);
  return (await page.getByRole('button', { name: 'Sign out', exact: true }).count()) > 0;
}

describe('CSRF: cookie-authenticated writes need the session token', () => {
  let web: WebApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    web = await startWebApp();
    browser = await launchBrowser();
    context = await newContext(browser);
    page = await context.newPage();
    await signUp(page, web.base, 'linus@example.com', 'not my password');
    assert.ok(await signedIn(page, web.base));
  });
  after(async () => {
    await browser?.close();
    await web?.close();
  });

  test('a form post with the session cookie but without _csrf is refused with 403', async () => {
    const refused = await page.request.post(`${web.base}/signout`, { form: {}, maxRedirects: 0 });
    assert.equal(refused.status(), 403);
    const wrong = await page.request.post(`${web.base}/signout`, {
      form: { _csrf: 'not-the-token' },
      maxRedirects: 0,
    });
    assert.equal(wrong.status(), 403);
    assert.ok(await signedIn(page, web.base), 'still signed in after the refused posts');
  });

  test('a cookie-authenticated /v1 write from the page without X-CSRF-Token is refused (csrf_failed)', async () => {
    await page.goto(`${web.base}/`);
    const answer = await page.evaluate(async () => {
      const res = await fetch('/v1/webhooks', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'https://example.com/hook' }),
      });
      return { status: res.status, body: await res.text() };
    });
    assert.equal(answer.status, 403);
    assert.equal((JSON.parse(answer.body) as { error: { code: string } }).error.code, 'csrf_failed');
    const read = await page.evaluate(async () => (await fetch('/v1/me')).status);
    assert.equal(read, 200, 'a safe method works with the cookie alone');
  });

  test('a form posted from another site carries no session and is refused; the person stays signed in', async () => {
    const foreign = await startForeignSite(`${web.base}/signout`);
    try {
      const posted = page.waitForRequest((r) => r.url() === `${web.base}/signout` && r.method() === 'POST');
      const answered = page.waitForResponse((r) => r.url() === `${web.base}/signout`);
      await page.goto(foreign.url);
      const request = await posted;
      const response = await answered;
      const cookie = (await request.allHeaders()).cookie ?? '';
      assert.doesNotMatch(cookie, /gta_session=/, 'SameSite=Lax keeps the session cookie off');
      assert.equal(response.status(), 403);
    } finally {
      await foreign.close();
    }
    assert.ok(await signedIn(page, web.base));
  });

  test('the same form post with the page token signs out (the refusals above are about the token)', async () => {
    await page.goto(`${web.base}/`);
    const token = await csrfField(page);
    const done = await page.request.post(`${web.base}/signout`, { form: { _csrf: token }, maxRedirects: 0 });
    assert.ok(done.status() >= 300 && done.status() < 400, `redirected, got ${done.status()}`);
    assert.equal(await signedIn(page, web.base), false);
  });
});
