import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import {
  chooseLanguage,
  launchBrowser,
  newContext,
  screenshot,
  signIn,
  signUp,
  startWebApp,
  type WebApp,
} from './kit.ts';

describe('the Russian interface', () => {
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

  test('Русский chosen before sign-in: Russian words, kept after reload over Accept-Language: en', async () => {
    const context = await newContext(browser, { acceptLanguage: 'en' });
    const page = await context.newPage();
    await page.goto(`${web.base}/signin`);
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    await screenshot(page, 'signin');

    await chooseLanguage(page, 'Русский');
    await page.goto(`${web.base}/signin`);
    await page.getByRole('button', { name: 'Войти', exact: true }).waitFor();
    assert.equal(await page.getByLabel('Пароль', { exact: true }).count(), 1);
    assert.equal(await page.getByLabel('Эл. почта', { exact: true }).count(), 1);
    assert.equal(
      await page.getByLabel('Язык', { exact: true }).count(),
      1,
      'the control names itself in Russian',
    );
    assert.equal(await page.locator('html').getAttribute('lang'), 'ru');
    assert.equal(await page.getByRole('button', { name: 'Sign in', exact: true }).count(), 0);

    await page.reload();
    await page.getByRole('button', { name: 'Войти', exact: true }).waitFor();
    await screenshot(page, 'signin-ru');

    await page.goto(`${web.base}/signup`);
    await page.getByRole('button', { name: 'Зарегистрироваться', exact: true }).waitFor();
    await signUp(page, web.base, 'ivan@example.com', 'длинный пароль', { button: 'Зарегистрироваться' });
    await page.getByRole('button', { name: 'Выйти', exact: true }).waitFor();
    await screenshot(page, 'overview-ru');
    await page.goto(`${web.base}/keys`);
    await screenshot(page, 'keys-ru');
    await context.close();
  });

  test('from the keyboard, the arrows only choose a language; Enter applies it', async () => {
    const context = await newContext(browser, { acceptLanguage: 'en' });
    const page = await context.newPage();
    await page.goto(`${web.base}/signin`);
    const select = page.getByLabel('Language', { exact: true });
    await select.focus();
    await page.keyboard.press('ArrowDown');
    assert.equal(await select.inputValue(), 'ru', 'the arrow chose Русский');
    // The page stays (no reload under the person's focus), and says how to apply the choice.
    await page.getByRole('button', { name: 'Apply', exact: true }).waitFor();
    assert.equal(await page.locator('html').getAttribute('lang'), 'en');
    assert.ok(await select.evaluate((el) => el === document.activeElement), 'the focus stays on the control');
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    await page.getByRole('button', { name: 'Войти', exact: true }).waitFor();
    await context.close();
  });

  test('each language of the control is named in its own language, on English and Russian pages', async () => {
    const context = await newContext(browser, { acceptLanguage: 'en' });
    const page = await context.newPage();
    // The language a screen reader speaks an option in: the nearest `lang` above it, the page's by default.
    const spoken = () =>
      page
        .getByLabel(/^(Language|Язык)$/)
        .locator('option')
        .evaluateAll((options) =>
          options.map((o) => `${o.textContent}:${o.closest<HTMLElement>('[lang]')?.lang ?? ''}`),
        );
    for (const path of ['/signin', '/admin/signin']) {
      await page.goto(`${web.base}${path}`);
      assert.deepEqual(await spoken(), ['English:en', 'Русский:ru'], `${path} in English`);
    }
    await chooseLanguage(page, 'Русский');
    for (const path of ['/signin', '/admin/signin']) {
      await page.goto(`${web.base}${path}`);
      assert.equal(await page.locator('html').getAttribute('lang'), 'ru');
      assert.deepEqual(await spoken(), ['English:en', 'Русский:ru'], `${path} in Russian`);
    }
    await context.close();
  });

  test("the person's saved language follows them into a new browser that asks for English", async () => {
    const context = await newContext(browser, { acceptLanguage: 'en-US,en;q=0.9' });
    const page = await context.newPage();
    await page.goto(`${web.base}/signin`);
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    const status = await signIn(page, web.base, 'ivan@example.com', 'длинный пароль');
    assert.ok(status < 400, `signed in, got ${status}`);
    await page.getByRole('button', { name: 'Выйти', exact: true }).waitFor();
    await page.goto(`${web.base}/settings`);
    await screenshot(page, 'settings-ru');

    // Back to English from the settings; the choice is saved for the person again.
    await chooseLanguage(page, 'English');
    await page.goto(`${web.base}/settings`);
    await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
    await screenshot(page, 'settings');
    await context.close();

    const russianBrowser = await newContext(browser, { acceptLanguage: 'ru' });
    const again = await russianBrowser.newPage();
    await signIn(again, web.base, 'ivan@example.com', 'длинный пароль');
    await again.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
    await russianBrowser.close();
  });
});
