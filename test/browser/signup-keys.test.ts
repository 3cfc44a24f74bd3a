import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { exited, freePort, type Server, startServer } from '../processes.ts';
import { launchBrowser, me, newContext, screenshot, signUp } from './kit.ts';
import { linkTo, readOutbox, waitForMail } from './mail.ts';

const KEY = /gta_[A-Za-z0-9]{32}/;

/** Waits (up to `ms`) until the key is refused on /v1; true when it is. */
async function refused(base: string, key: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if ((await me(base, key)).status === 401) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/**
 * Clicks `Revoke` on the only key row (its name may go on with the key's prefix), through the page's
 * confirmation (a dialog or a second `Revoke` button).
 */
async function revoke(page: Page, base: string, key: string): Promise<void> {
  page.once('dialog', (dialog) => void dialog.accept());
  await page
    .getByRole('button', { name: /^Revoke\b/ })
    .first()
    .click();
  await page.waitForLoadState('load');
  if (await refused(base, key, 3000)) return;
  // A confirmation step asks once more with its own `Revoke` button, the focus on its question.
  assert.equal(await page.evaluate(() => document.activeElement?.id ?? ''), 'revoke-question');
  await page
    .getByRole('button', { name: /^Revoke\b/ })
    .last()
    .click();
  await page.waitForLoadState('load');
}

describe('sign-up to a working key in the browser, on the real process with the outbox (npm start alone)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-browser-'));
  let server: Server;
  let browser: Browser;

  before(async () => {
    const port = String(await freePort());
    server = await startServer({
      PORT: port,
      DATA_DIR: dir,
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: 'info',
    });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    if (server) {
      server.child.kill('SIGTERM');
      await exited(server.child);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('sign-up → outbox mail → confirm → Create key (shown once) → /v1/me → Revoke → 401', async () => {
    const { base } = server;
    const context = await newContext(browser);
    const page = await context.newPage();
    const email = 'ada@example.com';

    await page.goto(`${base}/signup`);
    await screenshot(page, 'signup');
    await signUp(page, base, email, 'correct horse battery');
    await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();

    // Until the e-mail is confirmed, keys cannot be made.
    await page.goto(`${base}/keys`);
    const early = page.getByRole('button', { name: 'Create key', exact: true });
    if ((await early.count()) > 0) {
      await early.click();
      await page.waitForLoadState('load');
    }
    assert.doesNotMatch(await page.content(), KEY, 'no key before the e-mail is confirmed');
    await screenshot(page, 'keys-unconfirmed');

    const mail = await waitForMail(() => readOutbox(dir), email);
    const link = linkTo(mail, '/confirm');
    assert.match(new URL(link).search, /token=/);
    await page.goto(link);
    assert.doesNotMatch(page.url(), /token=/, 'the token leaves the address bar at once');
    await screenshot(page, 'confirmed');
    await page.goto(`${base}/`);
    await screenshot(page, 'overview');
    // The outbox's own line names the link (that is how `npm start` alone lets people confirm); the
    // request line of the landing GET must not.
    const token = new URL(link).searchParams.get('token') ?? '';
    const lines = server
      .output()
      .split('\n')
      .filter((line) => !line.includes('mail written to the outbox'));
    assert.ok(
      lines.some((line) => line.includes('/confirm')),
      'the landing GET has its request line',
    );
    assert.deepEqual(
      lines.filter((line) => line.includes(token)),
      [],
      'the confirmation token is in no other log line',
    );

    await page.goto(`${base}/keys`);
    await page.getByLabel('Name', { exact: true }).fill('laptop');
    await page.getByRole('button', { name: 'Create key', exact: true }).click();
    await page.waitForLoadState('load');
    const key = KEY.exec(await page.content())?.[0];
    assert.ok(key, 'the new key is shown');
    await screenshot(page, 'keys-created');

    const answer = await me(base, key);
    assert.equal(answer.status, 200);
    assert.equal((answer.body as { email?: string }).email, email);
    assert.equal((answer.body as { email_confirmed?: boolean }).email_confirmed, true);

    await page.goto(`${base}/keys`);
    assert.doesNotMatch(await page.content(), new RegExp(key), 'the key is shown only once');
    await screenshot(page, 'keys');

    await revoke(page, base, key);
    assert.equal(await refused(base, key, 10_000), true, 'the revoked key is refused with 401');
    await context.close();
  });
});
