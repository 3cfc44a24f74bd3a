/**
 * Helpers of the new-task browser test: /v1 calls with the page's session, the settled live price, and
 * filling the schema-built form through its own controls.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';

export type Schema = Record<string, unknown> & {
  properties?: Record<string, Schema>;
  oneOf?: Schema[];
  items?: Schema;
};

/** The settings schema's properties, every branch of a `oneOf` together. */
export function propertiesOf(schema: Schema): Record<string, Schema> {
  const branches = schema.oneOf ?? [schema];
  return Object.assign({}, ...branches.map((b) => b.properties ?? {}));
}

/** `/v1` with the page's session cookie and CSRF token, as the islands call it. */
export async function v1(page: Page, method: 'GET' | 'POST', url: string, body?: unknown) {
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
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      errors.push(message.text());
  });
  return errors;
}

/** Waits until the price has settled (a price or a refusal) and reads it. */
export async function settledPrice(
  page: Page,
): Promise<{ state: string; text: string; minor: number | null }> {
  const price = page.locator('#new-price');
  await page.locator('#new-price[data-state="ready"], #new-price[data-state="error"]').waitFor();
  const minor = await price.getAttribute('data-amount-minor');
  return {
    state: (await price.getAttribute('data-state')) ?? '',
    text: (await price.textContent()) ?? '',
    minor: minor === null ? null : Number(minor),
  };
}

export const rubles = (minor: number, locale: string) =>
  new Intl.NumberFormat(locale, { style: 'currency', currency: 'RUB' }).format(minor / 100);

/** Lists the person's tasks through /v1. */
export async function taskCount(page: Page): Promise<number> {
  const list = await v1(page, 'GET', '/v1/tasks?limit=100');
  assert.equal(list.status, 200);
  return (list.body.tasks as unknown[]).length;
}

/** Polls GET /v1/tasks/{id} until the task is final. */
export async function finalStatus(page: Page, id: string): Promise<string> {
  for (;;) {
    const task = await v1(page, 'GET', `/v1/tasks/${id}`);
    const status = String(task.body.status);
    if (!['queued', 'running'].includes(status)) return status;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Fills the form with `settings` through its controls: links by picking a file (uploaded by the page),
 * library ids by picking the person's record, the rest by typing, choosing and ticking. Answers the
 * settings as they are now (links and ids replaced).
 */
export async function fillSettings(
  page: Page,
  schema: Schema,
  settings: Readonly<Record<string, unknown>>,
  files: ReadonlyArray<{ field: string; format: string; durationSeconds?: number }>,
  sources: {
    /** A file of this format (and length) on disk. */
    fileFor(format: string, seconds: number | undefined): Promise<string>;
    /** Record ids of the person, by `model/library`. */
    records: ReadonlyMap<string, string>;
  },
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
            .setInputFiles(await sources.fileFor(file.format, file.durationSeconds));
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
      const id = sources.records.get(`${library.model}/${library.library}`);
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
