/**
 * The new-task page in a real chromium (issue 15): for every model and mode of the catalog the form
 * built from GET /v1/models renders without a script error, is filled with the mode's example settings
 * through its own controls (files picked and uploaded through /v1/files, library records picked from the
 * person's list), and shows the price POST /v1/price answers for those settings; an invalid change shows
 * the API's message; `Create task` lands on /tasks/{id} and the task succeeds; a double click makes one
 * task; an empty wallet shows the API's refusal and makes none; the Russian page speaks Russian.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { MODELS } from '../../src/catalog/index.ts';
import { makeMp3, makeMp4, makePng, makeWav } from '../../src/media/fixtures.ts';
import { confirmedPerson, launchBrowser, type Person, screenshot, startWebApp, type WebApp } from './kit.ts';

type Schema = Record<string, unknown> & {
  properties?: Record<string, Schema>;
  oneOf?: Schema[];
  items?: Schema;
};

/** The settings schema's properties, every branch of a `oneOf` together. */
function propertiesOf(schema: Schema): Record<string, Schema> {
  const branches = schema.oneOf ?? [schema];
  return Object.assign({}, ...branches.map((b) => b.properties ?? {}));
}

/** `/v1` with the page's session cookie and CSRF token, as the islands call it. */
async function v1(page: Page, method: 'GET' | 'POST', url: string, body?: unknown) {
  // Reads need no CSRF token (the tasks' own page, which may not be a dashboard page, has none).
  const csrf =
    method === 'GET' ? '' : ((await page.locator('meta[name="csrf-token"]').getAttribute('content')) ?? '');
  const answer = await page.request.fetch(new URL(url, page.url()).href, {
    method,
    headers: { ...(csrf ? { 'x-csrf-token': csrf } : {}), 'accept-language': 'en' },
    ...(body === undefined ? {} : { data: body }),
  });
  return { status: answer.status(), body: (await answer.json()) as Record<string, unknown> };
}

/** Console errors and uncaught exceptions of a page (refused /v1 calls that the page shows are not errors). */
function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      errors.push(message.text());
  });
  return errors;
}

/** Waits until the price has settled (a price or a refusal) and reads it. */
async function settledPrice(page: Page): Promise<{ state: string; text: string; minor: number | null }> {
  const price = page.locator('#new-price');
  await page.locator('#new-price[data-state="ready"], #new-price[data-state="error"]').waitFor();
  const minor = await price.getAttribute('data-amount-minor');
  return {
    state: (await price.getAttribute('data-state')) ?? '',
    text: (await price.textContent()) ?? '',
    minor: minor === null ? null : Number(minor),
  };
}

const rubles = (minor: number, locale: string) =>
  new Intl.NumberFormat(locale, { style: 'currency', currency: 'RUB' }).format(minor / 100);

/** Lists the person's tasks through /v1. */
async function taskCount(page: Page): Promise<number> {
  const list = await v1(page, 'GET', '/v1/tasks?limit=100');
  assert.equal(list.status, 200);
  return (list.body.tasks as unknown[]).length;
}

/** Polls GET /v1/tasks/{id} until the task is final. */
async function finalStatus(page: Page, id: string): Promise<string> {
  for (;;) {
    const task = await v1(page, 'GET', `/v1/tasks/${id}`);
    const status = String(task.body.status);
    if (!['queued', 'running'].includes(status)) return status;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('the new-task page in a browser', () => {
  let web: WebApp;
  let browser: Browser;
  let person: Person;
  let errors: string[] = [];
  /** Files made for the examples, by format and length. */
  const made = new Map<string, Promise<string>>();
  /** Record ids standing for the examples' library ids, by `model/library`. */
  const records = new Map<string, string>();

  const fileFor = (format: string, seconds: number | undefined): Promise<string> => {
    const key = `${format}-${seconds ?? 0}`;
    let file = made.get(key);
    if (!file) {
      const dir = fs.mkdtempSync(path.join(web.dir, 'inputs-'));
      file =
        format === 'png'
          ? makePng(dir, 256, 256)
          : format === 'mp4'
            ? makeMp4(dir, seconds ?? 1, 160, 120)
            : makeMp3(dir, seconds ?? 10);
      made.set(key, file);
    }
    return file;
  };

  before(async () => {
    web = await startWebApp({ worker: true });
    browser = await launchBrowser();
    person = await confirmedPerson(web, browser);
    const credit = await web.admin('POST', `/admin/v1/accounts/${person.accountId}/credits`, {
      amount_minor: 50_000_000,
      reference: 'new-task-browser',
    });
    assert.equal(credit.statusCode, 201, credit.body);
    errors = watchErrors(person.page);
    // A cloned voice of the person, for the voice model's examples.
    await person.page.goto(`${web.base}/new`);
    const csrf = (await person.page.locator('meta[name="csrf-token"]').getAttribute('content')) ?? '';
    const upload = await person.page.request.post(`${web.base}/v1/files`, {
      headers: { 'x-csrf-token': csrf },
      multipart: {
        file: {
          name: 'sample.wav',
          mimeType: 'audio/wav',
          buffer: fs.readFileSync(await makeWav(web.dir, 12)),
        },
      },
    });
    assert.equal(upload.status(), 201, await upload.text());
    const voice = await v1(person.page, 'POST', '/v1/models/voice/voices', {
      name: 'Anna',
      sample_urls: [(await upload.json()).url],
    });
    assert.equal(voice.status, 201, JSON.stringify(voice.body));
    records.set('voice/voices', String(voice.body.id));
  });
  after(async () => {
    await browser?.close();
    await web?.close();
  });

  /**
   * Fills the form with `settings` through its controls: links by picking a file (uploaded by the page),
   * library ids by picking the person's record, the rest by typing, choosing and ticking. Answers the
   * settings as they are now (links and ids replaced).
   */
  async function fill(
    page: Page,
    schema: Schema,
    settings: Readonly<Record<string, unknown>>,
    files: ReadonlyArray<{ field: string; format: string; durationSeconds?: number }>,
  ): Promise<Record<string, unknown>> {
    const properties = propertiesOf(schema);
    const filled: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(settings)) {
      const property = properties[field] ?? {};
      if (property.const !== undefined) {
        filled[field] = value;
        continue;
      }
      if (Array.isArray(value)) {
        const items: unknown[] = [];
        for (const [i, item] of value.entries()) {
          const at = `${field}.${i}`;
          if ((await page.locator(`[data-path="${at}"]`).count()) === 0)
            await page.locator(`[data-add="${field}"]`).click();
          const file = files.find((f) => f.field === field);
          if (property.items?.format === 'uri' && file) {
            const uploaded = page.waitForResponse(
              (r) => new URL(r.url()).pathname === '/v1/files' && r.request().method() === 'POST',
            );
            await page
              .locator(`input[data-upload="${at}"]`)
              .setInputFiles(await fileFor(file.format, file.durationSeconds));
            const answer = await uploaded;
            assert.equal(answer.status(), 201, await answer.text());
            const link = String((await answer.json()).url);
            await page.waitForFunction(
              ([p, l]) =>
                (document.querySelector(`[data-path="${p}"]`) as HTMLInputElement | null)?.value === l,
              [at, link] as const,
            );
            items.push(link);
          } else {
            await page.locator(`[data-path="${at}"]`).fill(String(item));
            items.push(item);
          }
        }
        filled[field] = items;
        continue;
      }
      const library = property['x-library'] as { model: string; library: string } | undefined;
      if (library) {
        const id = records.get(`${library.model}/${library.library}`);
        assert.ok(id, `no record of ${library.model}/${library.library} for ${field}`);
        await page
          .locator(`select[data-records="${field}"] option[value="${id}"]`)
          .waitFor({ state: 'attached' });
        await page.locator(`select[data-records="${field}"]`).selectOption(id);
        assert.equal(await page.locator(`[data-path="${field}"]`).inputValue(), id);
        filled[field] = id;
        continue;
      }
      const control = page.locator(`[data-path="${field}"]`);
      const tag = await control.evaluate((node) => node.tagName.toLowerCase());
      const type = await control.getAttribute('type');
      if (tag === 'select') await control.selectOption({ label: value === '' ? '""' : String(value) });
      else if (type === 'checkbox') await control.setChecked(value === true);
      else await control.fill(String(value));
      filled[field] = value;
    }
    return filled;
  }

  for (const model of MODELS) {
    for (const mode of model.modes) {
      test(`${model.key} ${mode.name}: the form renders, takes the example, shows the API's price`, async () => {
        const page = person.page;
        errors.length = 0;
        await page.goto(`${web.base}/new?model=${model.key}&mode=${mode.name}`);
        assert.equal(await page.locator('#new-model').inputValue(), model.key);
        assert.equal(await page.locator('#new-mode').inputValue(), mode.name);
        assert.equal(await page.locator('#new-mode-field').isVisible(), model.modeField !== null);
        await page.locator('#new-settings [data-path]').first().waitFor();
        const listed = await v1(page, 'GET', '/v1/models');
        const schema = (
          listed.body.models as Array<{
            key: string;
            modes: Array<{ name: string; settings_schema: Schema }>;
          }>
        )
          .find((m) => m.key === model.key)
          ?.modes.find((m) => m.name === mode.name)?.settings_schema;
        assert.ok(schema);
        const example = mode.example;
        assert.ok(example, `${model.key} ${mode.name} has an example`);
        const settings = await fill(page, schema, example.settings, example.files);
        const shown = await settledPrice(page);
        const expected = await v1(page, 'POST', '/v1/price', { model: model.key, settings });
        assert.equal(expected.status, 200, JSON.stringify(expected.body));
        assert.equal(shown.state, 'ready', shown.text);
        assert.equal(shown.minor, expected.body.amount_minor);
        assert.equal(shown.text, rubles(Number(expected.body.amount_minor), 'en-US'));
        assert.deepEqual(errors, []);
      });
    }
  }

  test('a change that breaks the settings shows the API message instead of a price', async () => {
    const page = person.page;
    await page.goto(`${web.base}/new?model=model-3d&mode=text_to_model`);
    await page.locator('[data-path="prompt"]').fill('a small wooden chair');
    assert.equal((await settledPrice(page)).state, 'ready');
    await page.locator('[data-path="face_limit"]').fill('10');
    const shown = await settledPrice(page);
    const api = await v1(page, 'POST', '/v1/price', {
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt: 'a small wooden chair', face_limit: 10 },
    });
    assert.equal(api.status, 422);
    assert.equal(shown.state, 'error');
    assert.equal(shown.minor, null);
    assert.equal(shown.text, (api.body.error as { message: string }).message);
  });

  test('a file field uploads through /v1/files and fills its link', async () => {
    const page = person.page;
    await page.goto(`${web.base}/new?model=model-3d&mode=image_to_model`);
    const uploaded = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/files');
    await page.locator('input[data-upload="image_url.0"]').setInputFiles(await fileFor('png', undefined));
    const answer = await uploaded;
    assert.equal(answer.status(), 201);
    const upload = (await answer.json()) as { id: string; url: string };
    await page.waitForFunction(
      (link) =>
        (document.querySelector('[data-path="image_url.0"]') as HTMLInputElement | null)?.value === link,
      upload.url,
    );
    assert.equal((await v1(page, 'GET', `/v1/files/${upload.id}`)).status, 200);
    assert.equal((await settledPrice(page)).state, 'ready');
    await screenshot(page, 'new-task-3d');
  });

  test('Create task for music lands on /tasks/{id} and the task succeeds', async () => {
    const page = person.page;
    await page.goto(`${web.base}/new`);
    await page.locator('#new-model').selectOption('music');
    await page.locator('#new-mode').selectOption('generate');
    assert.ok(await page.locator('#new-mode-field').isVisible());
    await page.locator('[data-path="songDescription"]').fill('a cheerful song about a ginger cat');
    assert.equal((await settledPrice(page)).state, 'ready');
    await screenshot(page, 'new-task');
    await page.getByRole('button', { name: 'Create task' }).click();
    await page.waitForURL(/\/tasks\/[0-9a-f-]{36}$/);
    const id = new URL(page.url()).pathname.split('/').pop() ?? '';
    const task = await v1(page, 'GET', `/v1/tasks/${id}`);
    assert.equal(task.body.model, 'music');
    assert.equal(
      (task.body.settings as Record<string, unknown>).songDescription,
      'a cheerful song about a ginger cat',
    );
    assert.equal(await finalStatus(page, id), 'succeeded');
  });

  test('Create task pressed twice quickly makes one model-3d task, which succeeds', async () => {
    const page = person.page;
    await page.goto(`${web.base}/new?model=model-3d&mode=text_to_model`);
    await page.locator('[data-path="prompt"]').fill('a small wooden chair');
    assert.equal((await settledPrice(page)).state, 'ready');
    const before = await taskCount(page);
    const creations: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/v1/tasks' && r.method() === 'POST') creations.push(r.url());
    });
    await page.getByRole('button', { name: 'Create task' }).dblclick();
    await page.waitForURL(/\/tasks\/[0-9a-f-]{36}$/);
    const id = new URL(page.url()).pathname.split('/').pop() ?? '';
    assert.equal(creations.length, 1);
    assert.equal(await taskCount(page), before + 1);
    assert.equal(await finalStatus(page, id), 'succeeded');
  });

  test('an empty wallet shows the API refusal and makes no task', async () => {
    const poor = await confirmedPerson(web, browser);
    const page = poor.page;
    const pageErrors = watchErrors(page);
    await page.goto(`${web.base}/new?model=music&mode=sounds`);
    await page.locator('[data-path="soundDescription"]').fill('rain on a tin roof');
    assert.equal((await settledPrice(page)).state, 'ready');
    await page.getByRole('button', { name: 'Create task' }).click();
    const alert = page.locator('#new-error');
    await alert.waitFor({ state: 'visible' });
    const refused = await v1(page, 'POST', '/v1/tasks', {
      model: 'music',
      settings: { mode: 'sounds', soundDescription: 'rain on a tin roof' },
    });
    assert.equal(refused.status, 402, JSON.stringify(refused.body));
    assert.equal(await alert.textContent(), (refused.body.error as { message: string }).message);
    assert.equal(await taskCount(page), 0);
    assert.ok(await page.getByRole('button', { name: 'Create task' }).isEnabled());
    assert.deepEqual(pageErrors, []);
    await screenshot(page, 'new-task-error');
    await poor.context.close();
  });

  test('the Russian page speaks Russian and shows the price in rubles', async () => {
    const ru = await confirmedPerson(web, browser, { acceptLanguage: 'ru' });
    const page = ru.page;
    await page.goto(`${web.base}/new?model=image`);
    assert.equal(await page.locator('h1').textContent(), 'Новая задача');
    assert.ok(await page.getByRole('button', { name: 'Создать задачу' }).isVisible());
    assert.ok(await page.getByLabel('Модель').isVisible());
    await page.locator('[data-path="prompt"]').fill('лиса на снегу');
    const shown = await settledPrice(page);
    assert.equal(shown.state, 'ready');
    assert.equal(shown.text, rubles(shown.minor ?? 0, 'ru-RU'));
    await page.locator('[data-path="n"]').fill('9');
    const refused = await settledPrice(page);
    assert.equal(refused.state, 'error');
    assert.match(refused.text, /[а-яё]/i);
    await page.locator('[data-path="n"]').fill('2');
    assert.equal((await settledPrice(page)).state, 'ready');
    await screenshot(page, 'new-task-ru');
    await ru.context.close();
  });
});
