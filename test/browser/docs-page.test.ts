/**
 * The API reference page `/docs` (Swagger UI over /openapi.json) in a real browser: it renders the
 * document's operations, and its Content-Security-Policy refuses nothing the page itself needs (a refused
 * style or script is a console error and, for scripts, a broken page).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, newContext, startWebApp, type WebApp } from './kit.ts';

describe('the /docs page in the browser', () => {
  let web: WebApp;
  let browser: Browser;
  before(async () => {
    web = await startWebApp();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await web?.close();
  });

  test('renders the operations, with no refusal of its own policy in the console', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    const answer = await page.goto(`${web.base}/docs`);
    assert.equal(answer?.status(), 200);
    await page.locator('.opblock').first().waitFor();
    assert.ok((await page.locator('.opblock').count()) > 10, 'the operations are listed');
    assert.match((await page.locator('.swagger-ui .info .title').textContent()) ?? '', /\S/);
    await page.waitForTimeout(300);
    assert.deepEqual(problems, []);
    await context.close();
  });
});
