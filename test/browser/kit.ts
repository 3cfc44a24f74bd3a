import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { startTestApp, type TestApp, type TestAppOptions } from '../helpers.ts';
import { freePort, ROOT } from '../processes.ts';
import { linkTo, readOutbox, waitForMail } from './mail.ts';

/** Debian's chromium, which scripts/ensure-chromium.sh installs. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The flags verified on the project's machines (docs/browser-tests.md). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];

/** Every page is taken at this size, so the screenshots of two runs line up. */
export const VIEWPORT = { width: 1280, height: 800 };

/**
 * Installs chromium with scripts/ensure-chromium.sh when it is missing: at most once per run, even with
 * several browser test files starting together (a lock directory serialises apt-get; the others wait for it
 * and find chromium there).
 */
export function ensureChromium(): void {
  if (fs.existsSync(CHROMIUM)) return;
  const lock = path.join(ROOT, '.tmp', 'ensure-chromium.lock');
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`${lock} is held for 15 minutes; remove it if stale`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    }
  }
  try {
    if (!fs.existsSync(CHROMIUM)) {
      execFileSync('bash', [path.join(ROOT, 'scripts', 'ensure-chromium.sh')], {
        stdio: ['ignore', 'inherit', 'inherit'],
      });
    }
  } finally {
    fs.rmdirSync(lock);
  }
}

/** Launches headless chromium (installing it first when missing). */
export async function launchBrowser(): Promise<Browser> {
  ensureChromium();
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/**
 * A fresh browser context: fixed viewport, English, Moscow time, no motion. `acceptLanguage` sets the
 * header every request sends.
 */
export async function newContext(
  browser: Browser,
  options: { acceptLanguage?: string } = {},
): Promise<BrowserContext> {
  const acceptLanguage = options.acceptLanguage ?? 'en';
  const context = await browser.newContext({
    viewport: VIEWPORT,
    deviceScaleFactor: 1,
    locale: acceptLanguage.startsWith('ru') ? 'ru-RU' : 'en-US',
    timezoneId: 'Europe/Moscow',
    reducedMotion: 'reduce',
    extraHTTPHeaders: { 'Accept-Language': acceptLanguage },
  });
  // A missing button fails its test in seconds rather than Playwright's default half minute.
  context.setDefaultTimeout(10_000);
  return context;
}

/** The real app listening on 127.0.0.1, its mail links pointing at itself. */
export interface WebApp extends TestApp {
  /** `http://127.0.0.1:<port>` */
  base: string;
}

/**
 * Starts the real app (test/helpers.ts `startTestApp`: SQLite, or PostgreSQL + S3 with TEST_DATABASE_URL /
 * TEST_STORAGE_URL) listening on a free loopback port, with `PUBLIC_BASE_URL` set to that address so the
 * links of its mails open in the browser as they are. Mail goes to `dir/outbox` unless `env.SMTP_URL`.
 */
export async function startWebApp(options: TestAppOptions = {}): Promise<WebApp> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const testApp = await startTestApp({
    worker: false,
    ...options,
    env: { PUBLIC_BASE_URL: base, ...options.env },
  });
  await testApp.app.listen({ port, host: '127.0.0.1' });
  return Object.assign(testApp, { base });
}

/**
 * Where screenshots go: `docs/screenshots/` when `UPDATE_SCREENSHOTS=1` (`npm run screenshots`), otherwise
 * `.tmp/screenshots/`, so an ordinary test run still takes every picture without touching the committed ones.
 */
export const SCREENSHOT_DIR =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? path.join(ROOT, 'docs', 'screenshots')
    : path.join(ROOT, '.tmp', 'screenshots');

/** Tries of a screenshot: Chromium under load sometimes answers "Unable to capture screenshot" once. */
const SCREENSHOT_TRIES = 3;

/** Saves the whole page as `<name>.png`: 1280 wide, animations stopped, no caret. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.setViewportSize(VIEWPORT);
  for (let attempt = 1; ; attempt += 1) {
    try {
      await page.screenshot({ path: file, fullPage: true, animations: 'disabled', caret: 'hide' });
      return file;
    } catch (error) {
      // Only the compositor's transient refusal is tried again; a closed page or a timeout is a failure.
      if (attempt >= SCREENSHOT_TRIES || !String(error).includes('Unable to capture screenshot')) throw error;
      await page.waitForTimeout(250 * attempt);
    }
  }
}

/** The value of the page's first CSRF field (`_csrf`), as its forms carry it. */
export async function csrfField(page: Page): Promise<string> {
  const value = await page.locator('input[name="_csrf"]').first().getAttribute('value');
  if (!value) throw new Error(`no _csrf field on ${page.url()}`);
  return value;
}

/** Fills the sign-up form of `/signup`, sends it, and signs in if the sign-up did not. */
export async function signUp(
  page: Page,
  base: string,
  email: string,
  password: string,
  words: { button: string } = { button: 'Sign up' },
): Promise<void> {
  await page.goto(`${base}/signup`);
  await page.getByLabel(/^(E-mail|Эл\. почта)$/).fill(email);
  await page.getByLabel(/^(Password|Пароль)$/).fill(password);
  await page.getByRole('button', { name: words.button, exact: true }).click();
  await page.waitForLoadState('load');
  if ((await page.getByRole('button', { name: /^(Sign out|Выйти)$/ }).count()) === 0) {
    const status = await signIn(page, base, email, password);
    if (status >= 400) throw new Error(`sign-in after sign-up answered ${status}`);
  }
}

/** Fills the sign-in form of `/signin` and sends it; returns the status of the form's answer. */
export async function signIn(page: Page, base: string, email: string, password: string): Promise<number> {
  if (new URL(page.url()).pathname !== '/signin') await page.goto(`${base}/signin`);
  await page.getByLabel(/^(E-mail|Эл\. почта)$/).fill(email);
  await page.getByLabel(/^(Password|Пароль)$/).fill(password);
  const answer = page.waitForResponse(
    (r) => new URL(r.url()).pathname === '/signin' && r.request().method() === 'POST',
  );
  await page.getByRole('button', { name: /^(Sign in|Войти)$/ }).click();
  const status = (await answer).status();
  await page.waitForLoadState('load');
  return status;
}

/**
 * Chooses a language in the page's `Language` control (labelled Language or Язык) and waits for the page
 * it leads to: the control's form is sent by its island on change, or by its own button.
 */
export async function chooseLanguage(page: Page, label: 'English' | 'Русский'): Promise<void> {
  const select = page.getByLabel(/^(Language|Язык)$/);
  const loaded = page.waitForEvent('load');
  await select.selectOption({ label });
  const button = select.locator('xpath=ancestor::form[1]').locator('button, input[type="submit"]');
  if ((await button.count()) > 0 && (await button.first().isVisible())) await button.first().click();
  await loaded;
}

/** GET /v1/me with a key from outside the browser (no cookie). */
export async function me(base: string, key: string): Promise<{ status: number; body: unknown }> {
  const answer = await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
  return { status: answer.status, body: await answer.json() };
}

/** A person signed in and confirmed in a browser context of their own. */
export interface Person {
  context: BrowserContext;
  page: Page;
  email: string;
  password: string;
  /** Their account, from `GET /v1/me` with the session cookie. */
  accountId: string;
}

let people = 0;

/**
 * Signs a new person up on `web` in a fresh context, opens the confirmation link of their mail in
 * `DATA_DIR/outbox`, and leaves them signed in on the overview. Give the account money with
 * `web.admin('POST', `/admin/v1/accounts/${accountId}/credits`, …)`.
 */
export async function confirmedPerson(
  web: WebApp,
  browser: Browser,
  options: { email?: string; password?: string; acceptLanguage?: string } = {},
): Promise<Person> {
  people += 1;
  const email = options.email ?? `person${people}-${process.pid}@example.com`;
  const password = options.password ?? 'correct horse battery';
  const context = await newContext(browser, { acceptLanguage: options.acceptLanguage ?? 'en' });
  const page = await context.newPage();
  await signUp(page, web.base, email, password, {
    button: options.acceptLanguage?.startsWith('ru') ? 'Зарегистрироваться' : 'Sign up',
  });
  const mail = await waitForMail(() => readOutbox(web.dir), email);
  await page.goto(linkTo(mail, '/confirm'));
  await page.waitForLoadState('load');
  const answer = await page.request.get(`${web.base}/v1/me`);
  const accountId = ((await answer.json()) as { account_id?: string }).account_id;
  if (answer.status() !== 200 || !accountId) throw new Error(`GET /v1/me answered ${answer.status()}`);
  return { context, page, email, password, accountId };
}
