import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, me, newContext, signUp, startWebApp, type WebApp } from './kit.ts';
import { linkTo, readOutbox, type SmtpCatcher, startSmtpServer } from './mail.ts';

describe('sign-up with SMTP_URL: the confirmation goes through a real SMTP server on loopback', () => {
  let smtp: SmtpCatcher;
  let web: WebApp;
  let browser: Browser;

  before(async () => {
    smtp = await startSmtpServer();
    web = await startWebApp({ env: { SMTP_URL: smtp.url, MAIL_FROM: 'Dashboard <noreply@example.com>' } });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await web?.close();
    await smtp?.close();
  });

  test('the message arrives over authenticated SMTP, nothing in the outbox, and its link confirms', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    const email = 'grace@example.com';
    await signUp(page, web.base, email, 'a long enough secret');

    const deadline = Date.now() + 15_000;
    while (!smtp.messages.some((m) => m.to.includes(email)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const mail = smtp.messages.find((m) => m.to.includes(email));
    assert.ok(mail, 'the SMTP server received the confirmation');
    assert.equal(smtp.refusedLogins, 0);
    assert.match(mail.raw, /^From: .*noreply@example\.com/im);
    assert.equal(readOutbox(web.dir).length, 0, 'with SMTP_URL nothing is written to the outbox');

    await page.goto(linkTo(mail, '/confirm'));
    assert.doesNotMatch(page.url(), /token=/);
    await page.goto(`${web.base}/keys`);
    await page.getByLabel('Name', { exact: true }).fill('server');
    await page.getByRole('button', { name: 'Create key', exact: true }).click();
    await page.waitForLoadState('load');
    const key = /gta_[A-Za-z0-9]{32}/.exec(await page.content())?.[0];
    assert.ok(key, 'a confirmed person makes a key');
    assert.equal((await me(web.base, key)).status, 200);
    await context.close();
  });
});
