/**
 * The dashboard and the console on a phone's screen (375 px wide): no page scrolls sideways. A person with
 * a long e-mail, a credit and a task opens every page of the navigation; wide tables scroll by themselves,
 * long option names and e-mails do not widen the page, nor do the new-task form's fields of any model and
 * mode, its lists filled.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { makePng } from '../../src/media/fixtures.ts';
import { ADMIN_TOKEN } from '../helpers.ts';
import {
  chooseLanguage,
  confirmedPerson,
  launchBrowser,
  newContext,
  type Person,
  startWebApp,
  type WebApp,
} from './kit.ts';

const PHONE = { width: 375, height: 800 };
/** The narrowest phones still sold. */
const SMALL_PHONE = { width: 360, height: 740 };

/** The pages of `paths` whose document is wider than the screen, with their width. */
async function tooWide(
  page: Page,
  base: string,
  paths: string[],
  screen: number = PHONE.width,
): Promise<string[]> {
  const wide: string[] = [];
  for (const path of paths) {
    await page.goto(`${base}${path}`);
    await page.waitForLoadState('load');
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    if (width > screen) wide.push(`${path}: ${width}px`);
  }
  return wide;
}

/**
 * Puts the person's pages in `lang`: a person's saved language wins over the browser's Accept-Language, so
 * Russian is chosen with the Language control (and English chosen back by `restore`).
 */
async function inLanguage(page: Page, base: string, lang: string): Promise<() => Promise<void>> {
  if (lang !== 'ru') return async () => {};
  await page.goto(`${base}/`);
  await chooseLanguage(page, 'Русский');
  assert.equal(await page.getAttribute('html', 'lang'), 'ru');
  return async () => {
    await page.goto(`${base}/`);
    await chooseLanguage(page, 'English');
  };
}

describe('pages on a 375 px wide screen', () => {
  let web: WebApp;
  let browser: Browser;
  let person: Person;

  before(async () => {
    web = await startWebApp({ env: { PAYMENTS: 'test' } });
    browser = await launchBrowser();
    person = await confirmedPerson(web, browser, {
      email: `a-rather-long-mailbox-name-${process.pid}@subdomain.example.com`,
    });
    const credit = await web.admin('POST', `/admin/v1/accounts/${person.accountId}/credits`, {
      amount_minor: 500_000,
      reference: 'narrow-credit',
    });
    assert.equal(credit.statusCode, 201);
    const csrf = await person.page.locator('meta[name="csrf-token"]').getAttribute('content');
    const task = await person.page.request.post(`${web.base}/v1/tasks`, {
      data: { model: 'image', settings: { prompt: 'a red fox' } },
      headers: { 'x-csrf-token': csrf ?? '' },
    });
    assert.equal(task.status(), 202, await task.text());
  });
  after(async () => {
    await browser?.close();
    await web?.close();
  });

  test("no page of the person's navigation scrolls sideways, in English and Russian", async () => {
    const { page } = person;
    await page.setViewportSize(PHONE);
    const paths = [
      '/',
      '/tasks',
      '/new',
      '/libraries',
      '/uploads',
      '/ledger',
      '/topup',
      '/keys',
      '/settings',
    ];
    assert.deepEqual(await tooWide(page, web.base, paths), []);
    const russian = await newContext(browser, { acceptLanguage: 'ru' });
    await russian.addCookies(await person.context.cookies());
    const ru = await russian.newPage();
    await ru.setViewportSize(PHONE);
    const restore = await inLanguage(ru, web.base, 'ru');
    assert.deepEqual(await tooWide(ru, web.base, paths), [], 'ru');
    await restore();
    await russian.close();
  });

  test("a task's status and price, a record's or upload's Delete, a key's Revoke are on a 360 px screen", async () => {
    const { page } = person;
    await page.setViewportSize(SMALL_PHONE);
    // Within the screen: not cut by a table that scrolls sideways by itself.
    const onScreen = async (selector: string) => {
      const box = await page.locator(selector).first().boundingBox();
      assert.ok(box, selector);
      assert.ok(box.x >= 0 && box.x + box.width <= SMALL_PHONE.width, `${selector}: ${JSON.stringify(box)}`);
    };
    await page.goto(`${web.base}/tasks`);
    for (const label of ['Status', 'Price', 'Progress'])
      await onScreen(`table.tasks td[data-label="${label}"]`);
    assert.equal(
      await page
        .locator('table.tasks td[data-label="Status"]')
        .first()
        .evaluate((td) => getComputedStyle(td, '::before').content),
      '"Status: "',
      'each line names its column',
    );
    // A record of the person's: an element from a picture they uploaded.
    const csrf = (await page.locator('meta[name="csrf-token"]').getAttribute('content')) ?? '';
    const dir = await mkdtemp(join(tmpdir(), 'narrow-'));
    try {
      const uploaded = await page.request.post(`${web.base}/v1/files`, {
        multipart: {
          file: {
            name: 'car.png',
            mimeType: 'image/png',
            buffer: await readFile(await makePng(dir, 64, 64)),
          },
        },
        headers: { 'x-csrf-token': csrf },
      });
      assert.equal(uploaded.status(), 201, await uploaded.text());
      const element = await page.request.post(`${web.base}/v1/models/video-elements/elements`, {
        data: {
          name: 'Narrow car',
          tag: 'vehicle',
          image_urls: [((await uploaded.json()) as { url: string }).url],
        },
        headers: { 'x-csrf-token': csrf },
      });
      assert.equal(element.status(), 201, await element.text());
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    await page.goto(`${web.base}/libraries`);
    await onScreen('section.library td.actions button[data-delete]');
    // The keys', uploads', top-ups' and ledger's rows stack too: a key's Revoke, an upload's Delete, a
    // top-up's state and the ledger's running balance stay on the screen.
    const key = await web.admin('POST', `/admin/v1/accounts/${person.accountId}/keys`, { name: 'phone key' });
    assert.equal(key.statusCode, 201, key.body);
    const topup = await page.request.post(`${web.base}/v1/topups`, {
      data: { amount_minor: 150_000 },
      headers: { 'x-csrf-token': csrf },
    });
    assert.equal(topup.status(), 201, await topup.text());
    await page.goto(`${web.base}/keys`);
    await onScreen('td[data-label="Created"]');
    await onScreen('button[aria-label^="Revoke"]');
    await page.goto(`${web.base}/uploads`);
    await onScreen('td[data-label="Expires"]');
    await onScreen('button[aria-label="Delete car.png"]');
    await page.goto(`${web.base}/topup`);
    await onScreen('table.topups td[data-label="State"]');
    await page.goto(`${web.base}/ledger`);
    await onScreen('table.ledger td[data-label="Available after"]');
    await page.setViewportSize(PHONE);
  });

  test('no model or mode of the new-task form scrolls sideways, its lists filled to the most', async () => {
    for (const acceptLanguage of ['en', 'ru']) {
      const context = await newContext(browser, { acceptLanguage });
      await context.addCookies(await person.context.cookies());
      const page = await context.newPage();
      await page.setViewportSize(PHONE);
      const restore = await inLanguage(page, web.base, acceptLanguage);
      await page.goto(`${web.base}/new`);
      const models = await page
        .locator('#new-model option')
        .evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
      const wide: string[] = [];
      for (const model of models) {
        await page.goto(`${web.base}/new?model=${model}`);
        const modes = await page
          .locator('#new-mode option')
          .evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
        for (const mode of modes) {
          const path = `/new?model=${model}&mode=${mode}`;
          await page.goto(`${web.base}${path}`);
          await page.locator('#new-settings .settings').first().waitFor();
          // Every list gets rows (each with its Remove), up to its maxItems where Add is disabled.
          const adds = page.locator('#new-settings button[data-add]');
          for (let round = 0; round < 4; round++) {
            for (const add of await adds.all()) if (await add.isEnabled()) await add.click();
          }
          const width = await page.evaluate(() => document.documentElement.scrollWidth);
          if (width > PHONE.width) wide.push(`${acceptLanguage} ${path}: ${width}px`);
        }
      }
      assert.deepEqual(wide, []);
      await restore();
      await context.close();
    }
  });

  test('no library creation form scrolls sideways on a 360 px screen, its file pickers included', async () => {
    for (const acceptLanguage of ['en', 'ru']) {
      const context = await newContext(browser, { acceptLanguage });
      await context.addCookies(await person.context.cookies());
      const page = await context.newPage();
      await page.setViewportSize(SMALL_PHONE);
      const restore = await inLanguage(page, web.base, acceptLanguage);
      await page.goto(`${web.base}/libraries`);
      const forms = await page
        .locator('a[href^="/libraries/"][href$="/new"]')
        .evaluateAll((links) => [...new Set(links.map((a) => a.getAttribute('href') ?? ''))]);
      assert.ok(forms.length >= 8, forms.join(' '));
      assert.deepEqual(await tooWide(page, web.base, forms, SMALL_PHONE.width), [], acceptLanguage);
      await restore();
      await context.close();
    }
  });

  test("no task's page scrolls sideways on a 360 px screen, its settings' long Russian labels included", async () => {
    const csrf = await person.page.locator('meta[name="csrf-token"]').getAttribute('content');
    const paths: string[] = [];
    for (const data of [
      { model: 'music', settings: { mode: 'generate', songDescription: 'a song about a ginger cat' } },
      { model: 'model-3d', settings: { task_type: 'text_to_model', prompt: 'a small wooden chair' } },
    ]) {
      const task = await person.page.request.post(`${web.base}/v1/tasks`, {
        data,
        headers: { 'x-csrf-token': csrf ?? '' },
      });
      assert.equal(task.status(), 202, await task.text());
      paths.push(`/tasks/${((await task.json()) as { id: string }).id}`);
    }
    const { page } = person;
    await page.setViewportSize(SMALL_PHONE);
    assert.deepEqual(await tooWide(page, web.base, paths, SMALL_PHONE.width), []);
    // The person's saved language wins over the browser's: they choose Russian, and English again after.
    await chooseLanguage(page, 'Русский');
    assert.equal(await page.getAttribute('html', 'lang'), 'ru');
    assert.deepEqual(await tooWide(page, web.base, paths, SMALL_PHONE.width), [], 'ru');
    await chooseLanguage(page, 'English');
  });

  test("the new key's box does not scroll sideways on a 360 px screen, Russian's longer Copy included", async () => {
    const { page } = person;
    await page.setViewportSize(SMALL_PHONE);
    await page.goto(`${web.base}/`);
    await chooseLanguage(page, 'Русский');
    await page.goto(`${web.base}/keys`);
    await page.getByLabel('Название', { exact: true }).fill('narrow');
    await page.getByRole('button', { name: 'Создать ключ', exact: true }).click();
    await page.getByRole('button', { name: 'Копировать', exact: true }).waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    await chooseLanguage(page, 'English');
    assert.ok(width <= SMALL_PHONE.width, `/keys with the new key: ${width}px`);
  });

  test("the ledger's filters keep each label at its field on a 360 px screen, fields a finger can hit", async () => {
    // A label beside its field wrapped away from it ("From" ending a row, its date opening the next);
    // the date fields, unstyled, were 21 px tall.
    const context = await newContext(browser);
    await context.addCookies(await person.context.cookies());
    const page = await context.newPage();
    await page.setViewportSize(SMALL_PHONE);
    const apart: string[] = [];
    for (const lang of ['en', 'ru']) {
      const restore = await inLanguage(page, web.base, lang);
      await page.goto(`${web.base}/ledger`);
      const fields = await page.locator('form.filters').evaluate((form) =>
        [...form.querySelectorAll('select, input:not([type="hidden"])')].map((field) => {
          const label = (field as HTMLInputElement).labels?.[0];
          const text = [...(label?.childNodes ?? [])].find(
            (n) => n.nodeType === Node.TEXT_NODE && n.textContent?.trim(),
          );
          const range = document.createRange();
          if (text) range.selectNodeContents(text);
          const words = range.getBoundingClientRect();
          const box = field.getBoundingClientRect();
          const beside = words.bottom > box.top && words.top < box.bottom && words.right <= box.left;
          const above = words.bottom <= box.top + 1 && words.left < box.right && words.right > box.left;
          return {
            name: (field as HTMLInputElement).name,
            placed: Boolean(text) && (beside || above),
            height: box.height,
          };
        }),
      );
      for (const f of fields) {
        if (!f.placed) apart.push(`${lang} ${f.name}: label away from its field`);
        if (f.height < 24) apart.push(`${lang} ${f.name}: ${f.height}px tall`);
      }
      await restore();
    }
    await context.close();
    assert.deepEqual(apart, []);
  });

  test("a refusal naming a long link does not widen a 360 px screen: the price's and a library form's", async () => {
    // The API's message quotes the link (cut to 72 characters, still one unbroken word of ~100).
    const link = `${web.base}/files/${'a'.repeat(150)}/picture.png`;
    const context = await newContext(browser);
    await context.addCookies(await person.context.cookies());
    const page = await context.newPage();
    await page.setViewportSize(SMALL_PHONE);
    const wide: string[] = [];
    await page.goto(`${web.base}/new?model=video&mode=frames`);
    await page.locator('#new-settings .settings').first().waitFor();
    await page.getByLabel('Prompt', { exact: false }).first().fill('a fox');
    await page.getByLabel(/^Image urls 1/).fill(link);
    await page.locator('#new-price[data-state="error"]').waitFor();
    let width = await page.evaluate(() => document.documentElement.scrollWidth);
    if (width > SMALL_PHONE.width) wide.push(`new-task price: ${width}px`);
    await page.goto(`${web.base}/libraries/image/styles/new`);
    await page.locator('form.library-form input[name="name"]').fill('fox');
    await page.locator('form.library-form textarea[name="image_urls"]').fill(link);
    await page.locator('form.library-form button[type="submit"]').last().click();
    await page.locator('form.library-form .field-problem').first().waitFor();
    width = await page.evaluate(() => document.documentElement.scrollWidth);
    if (width > SMALL_PHONE.width) wide.push(`library form's refusal: ${width}px`);
    await context.close();
    assert.deepEqual(wide, []);
  });

  test("no page of the operator console scrolls sideways, an account's included", async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.setViewportSize(PHONE);
    await page.goto(`${web.base}/admin`);
    await page.getByLabel('Token', { exact: true }).fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
    const paths = [
      '/admin/accounts',
      `/admin/accounts/${person.accountId}`,
      '/admin/models',
      '/admin/channels',
      '/admin/topups',
    ];
    assert.deepEqual(await tooWide(page, web.base, paths), []);
    await context.close();
  });
});
