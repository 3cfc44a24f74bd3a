/**
 * A form refused for one of its fields says so at that field (CONTRACT §13, docs/dashboard.md "Refusals
 * at their field"): the page comes back with the field `aria-invalid`, its accessible description the
 * message (right under it), the keyboard focus on it and what was typed still in it; a refusal of the
 * whole form stays in the alert above. Checked with chromium's own accessibility tree: sign-up (a bad
 * e-mail, a long password), settings (a wrong current password), Create key (a bad daily limit), the
 * top-up's Amount, with and without scripts, and the operator console's Credit and Attach forms.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { drawPicture, encodePng } from '../../src/generators/simulator/media/png.ts';
import { ADMIN_TOKEN } from '../helpers.ts';
import { confirmedPerson, launchBrowser, newContext, startWebApp, type WebApp } from './kit.ts';

interface Described {
  role: string;
  name: string;
  description: string;
  invalid: string;
}

/**
 * What chromium's accessibility tree says of the focused element (after waiting for the focus to land on
 * an element): its role, accessible name and description, and `invalid`.
 */
async function focused(page: Page): Promise<Described> {
  await page.waitForFunction(() => document.activeElement instanceof HTMLInputElement);
  const cdp = await page.context().newCDPSession(page);
  try {
    const { result } = await cdp.send('Runtime.evaluate', { expression: 'document.activeElement' });
    const { nodes } = await cdp.send('Accessibility.getPartialAXTree', {
      objectId: result.objectId,
      fetchRelatives: false,
    });
    const node = nodes.find((n) => !n.ignored);
    const property = (name: string) =>
      String(node?.properties?.find((p) => p.name === name)?.value.value ?? '');
    return {
      role: String(node?.role?.value ?? ''),
      name: String(node?.name?.value ?? '').trim(),
      description: String(node?.description?.value ?? '').trim(),
      invalid: property('invalid'),
    };
  } finally {
    await cdp.detach();
  }
}

/** Clicks the button `name` and waits for the form's answer page; answers its status. */
async function send(page: Page, name: string): Promise<number> {
  const answer = page.waitForResponse((r) => r.request().method() === 'POST');
  await page.getByRole('button', { name, exact: true }).click();
  const status = (await answer).status();
  await page.waitForLoadState('load');
  return status;
}

describe('refusals at their field', () => {
  let web: WebApp;
  let browser: Browser;
  before(async () => {
    web = await startWebApp({ env: { PAYMENTS: 'test' } });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await web?.close();
  });

  test('sign-up: a bad e-mail and a too long password are said at their field, which has the focus', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(`${web.base}/signup`);
    // `a@b` passes the browser's own check of an e-mail field; the service wants a domain with a dot.
    await page.getByLabel('E-mail', { exact: true }).fill('a@b');
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
    assert.equal(await send(page, 'Sign up'), 422);
    assert.deepEqual(await focused(page), {
      role: 'textbox',
      name: 'E-mail',
      description: 'E-mail: not a valid e-mail address (at most 254 characters).',
      invalid: 'true',
    });
    assert.equal(await page.getByLabel('E-mail', { exact: true }).inputValue(), 'a@b');
    assert.equal(await page.getByLabel('Password', { exact: true }).getAttribute('aria-invalid'), null);
    // The alert above the form says it too, as the page opens.
    assert.equal(
      (await page.getByRole('alert').textContent())?.trim(),
      'E-mail: not a valid e-mail address (at most 254 characters).',
    );

    await page.getByLabel('E-mail', { exact: true }).fill('long-password@example.com');
    await page.getByLabel('Password', { exact: true }).fill('x'.repeat(201));
    assert.equal(await send(page, 'Sign up'), 422);
    assert.deepEqual(await focused(page), {
      role: 'textbox',
      name: 'Password',
      description: 'Password: from 8 to 200 characters.',
      invalid: 'true',
    });
    assert.equal(await page.getByLabel('E-mail', { exact: true }).inputValue(), 'long-password@example.com');
    assert.equal(await page.getByLabel('E-mail', { exact: true }).getAttribute('aria-invalid'), null);
    await context.close();
  });

  test("a short password is said by the page, in the page's language, not by a bubble of the browser", async () => {
    // A Russian page in a browser set to English: the browser's own check would speak English.
    const context = await newContext(browser, { acceptLanguage: 'ru' });
    const page = await context.newPage();
    await page.goto(`${web.base}/signup`);
    assert.equal(await page.locator('form[action="/signup"]').getAttribute('novalidate'), '');
    await page.getByLabel('Эл. почта', { exact: true }).fill('short-password@example.com');
    await page.getByLabel('Пароль', { exact: true }).fill('short');
    assert.equal(await send(page, 'Зарегистрироваться'), 422);
    const said = await focused(page);
    assert.deepEqual([said.name, said.invalid], ['Пароль', 'true']);
    assert.match(said.description, /^Пароль: /);
    assert.equal(
      await page.getByLabel('Эл. почта', { exact: true }).inputValue(),
      'short-password@example.com',
    );
    await context.close();
  });

  test('a refusal of the whole form stays in the alert and marks no field', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(`${web.base}/signin`);
    await page.getByLabel('E-mail', { exact: true }).fill('nobody@example.com');
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
    assert.equal(await send(page, 'Sign in'), 401);
    assert.equal(
      (await page.getByRole('alert').textContent())?.trim(),
      'The e-mail or the password is wrong.',
    );
    assert.equal(await page.locator('[aria-invalid]').count(), 0);
    await context.close();
  });

  test('settings: a wrong current password is said at `Current password`', async () => {
    const person = await confirmedPerson(web, browser);
    const { page } = person;
    await page.goto(`${web.base}/settings`);
    await page.getByLabel('Current password', { exact: true }).fill('not the password');
    await page.getByLabel('New password', { exact: true }).fill('another password');
    assert.equal(await send(page, 'Save'), 401);
    assert.deepEqual(await focused(page), {
      role: 'textbox',
      name: 'Current password',
      description: 'The current password is wrong.',
      invalid: 'true',
    });
    await person.context.close();
  });

  test('Create key: a bad daily limit is said at `Daily limit, RUB`, the typed values kept', async () => {
    const person = await confirmedPerson(web, browser);
    const { page } = person;
    await page.goto(`${web.base}/keys`);
    await page.getByLabel('Name', { exact: true }).fill('limited');
    await page.getByLabel('Daily limit, RUB', { exact: true }).fill('lots');
    assert.equal(await send(page, 'Create key'), 422);
    assert.deepEqual(await focused(page), {
      role: 'textbox',
      name: 'Daily limit, RUB',
      description: 'The daily limit must be an amount in rubles, such as 150 or 99.50.',
      invalid: 'true',
    });
    assert.equal(await page.getByLabel('Daily limit, RUB', { exact: true }).inputValue(), 'lots');
    assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'limited');
    assert.equal(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid'), null);
    await person.context.close();
  });

  test('top-up: an amount out of range is said at `Amount`, with and without scripts', async () => {
    const person = await confirmedPerson(web, browser);
    const bad = {
      role: 'textbox',
      name: 'Amount',
      description: 'Enter an amount in rubles from 1 to 1,000,000, like 1500 or 99.50.',
      invalid: 'true',
    };
    // Without scripts the form posts, and the page comes back with the field marked.
    const plain = await browser.newContext({ javaScriptEnabled: false });
    await plain.addCookies(await person.context.cookies());
    const page = await plain.newPage();
    await page.goto(`${web.base}/topup`);
    await page.getByLabel('Amount', { exact: true }).fill('0.5');
    assert.equal(await send(page, 'Top up'), 422);
    assert.deepEqual(await focused(page), bad);
    assert.equal(await page.getByLabel('Amount', { exact: true }).inputValue(), '0.5');
    await plain.close();

    // The island checks it before any call, and marks the field the same way.
    const scripted = person.page;
    await scripted.goto(`${web.base}/topup`);
    const amount = scripted.getByLabel('Amount', { exact: true });
    await amount.fill('0.5');
    await scripted.getByRole('button', { name: 'Top up', exact: true }).click();
    await scripted.locator('[aria-invalid="true"]').waitFor();
    assert.deepEqual(await focused(scripted), bad);
    // A good amount takes the mark away; the API's refusal of the whole form is the alert's.
    await scripted.route('**/v1/topups', (route) =>
      route.fulfill({
        status: 503,
        json: { error: { code: 'payments_unavailable', message: 'Payments are unavailable.' } },
      }),
    );
    await amount.fill('100');
    await scripted.getByRole('button', { name: 'Top up', exact: true }).click();
    await scripted.getByRole('alert').filter({ hasText: 'Payments are unavailable.' }).waitFor();
    assert.equal(await amount.getAttribute('aria-invalid'), null);
    assert.equal(await amount.getAttribute('aria-describedby'), null);
    assert.equal(await scripted.locator('.field-problem').count(), 0);
    await person.context.close();
  });
  test('pages whose forms only their scripts send say so without scripts; a task page says to reload', async () => {
    const person = await confirmedPerson(web, browser);
    await web.admin('POST', `/admin/v1/accounts/${person.accountId}/credits`, {
      amount_minor: 100_000,
      reference: 'no-script pages',
    });
    const key = (await web.admin('POST', `/admin/v1/accounts/${person.accountId}/keys`, {})).json()
      .key as string;
    const made = await fetch(`${web.base}/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'image', settings: { prompt: 'a red kite' } }),
    });
    const answer = await made.text();
    assert.equal(made.status, 202, answer);
    const taskId = (JSON.parse(answer) as { id: string }).id;
    // An upload, so /uploads has a row with its Delete.
    const uploaded = await fetch(`${web.base}/v1/files?filename=kite.png`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(encodePng(64, 64, drawPicture(64, 64, 'kite'))),
    });
    assert.equal(uploaded.status, 201, await uploaded.text());
    const notice = 'This page works with JavaScript: turn it on in your browser to send its forms.';
    const scriptPages = [
      '/new?model=image',
      '/uploads',
      '/libraries',
      '/libraries/image/styles/new',
      '/libraries/music/voices/new',
    ];

    const plain = await browser.newContext({ javaScriptEnabled: false });
    await plain.addCookies(await person.context.cookies());
    const page = await plain.newPage();
    for (const path of scriptPages) {
      await page.goto(`${web.base}${path}`);
      assert.equal(await page.getByRole('alert').filter({ hasText: notice }).isVisible(), true, path);
      // No button that only the script could send is shown: Create task, Create record, Upload, Delete.
      const controls = page.locator('main').getByRole('button', { name: /Create|Upload|Delete/ });
      assert.equal(await controls.count(), 0, `${path}: ${await controls.allTextContents()}`);
      assert.equal(await page.locator('main form :is(input, textarea):visible').count(), 0, path);
    }
    await page.goto(`${web.base}/uploads`);
    assert.equal(await page.getByRole('link', { name: 'kite.png' }).isVisible(), true);
    await page.goto(`${web.base}/tasks/${taskId}`);
    assert.equal(await page.getByText('The page follows the task as it runs.').isVisible(), false);
    await page.getByRole('link', { name: 'Reload the page to see how the task goes on.' }).click();
    await page.waitForLoadState('load');
    assert.equal(new URL(page.url()).pathname, `/tasks/${taskId}`);
    // Forms sent without scripts say nothing of it (settings, keys, top-up).
    for (const path of ['/settings', '/keys', '/topup']) {
      await page.goto(`${web.base}${path}`);
      assert.equal(await page.getByText(notice).count(), 0, path);
    }
    await plain.close();

    const scripted = person.page;
    for (const path of scriptPages) {
      await scripted.goto(`${web.base}${path}`);
      assert.equal(await scripted.getByText(notice).isVisible(), false, path);
    }
    await scripted.goto(`${web.base}/uploads`);
    assert.equal(await scripted.getByRole('button', { name: 'Delete kite.png' }).isVisible(), true);
    assert.equal(await scripted.getByRole('button', { name: 'Upload', exact: true }).isVisible(), true);
    await scripted.goto(`${web.base}/tasks/${taskId}`);
    await scripted.getByText('The page follows the task as it runs.').waitFor();
    assert.equal(await scripted.getByText('Reload the page to see how the task goes on.').isVisible(), false);
    await person.context.close();
  });

  test('operator console: Credit and Attach say a refusal at `Amount`, `Reference` or `E-mail`', async () => {
    const id = (await web.admin('POST', '/admin/v1/accounts', { name: 'Console form' })).json().id as string;
    await web.admin('POST', `/admin/v1/accounts/${id}/credits`, { amount_minor: 500, reference: 'used' });
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(`${web.base}/admin/signin`);
    await page.getByLabel('Token', { exact: true }).fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
    await page.goto(`${web.base}/admin/accounts/${id}`);

    await page.getByLabel('Amount', { exact: true }).fill('lots');
    assert.equal(await send(page, 'Credit'), 422);
    assert.deepEqual(await focused(page), {
      role: 'textbox',
      name: 'Amount',
      description: 'The amount is rubles, from 0.01 to 999,999,999.99, for example 1234.56 or 1 234,56.',
      invalid: 'true',
    });
    assert.equal(await page.getByLabel('Amount', { exact: true }).inputValue(), 'lots');
    assert.equal(await page.getByLabel('Reference', { exact: true }).getAttribute('aria-invalid'), null);

    // A reference credited before with another amount: the Reference is what to change.
    await page.getByLabel('Amount', { exact: true }).fill('10');
    await page.getByLabel('Reference', { exact: true }).fill('used');
    assert.equal(await send(page, 'Credit'), 409);
    const conflict = await focused(page);
    assert.equal(conflict.name, 'Reference');
    assert.equal(conflict.invalid, 'true');
    assert.match(conflict.description, /^Reference "used" already credited 500 kopecks/);
    assert.equal(await page.getByLabel('Amount', { exact: true }).getAttribute('aria-invalid'), null);

    await page.getByLabel('E-mail', { exact: true }).fill('a@b');
    assert.equal(await send(page, 'Attach'), 422);
    assert.deepEqual(await focused(page), {
      role: 'textbox',
      name: 'E-mail',
      description: 'E-mail: not a valid e-mail address (at most 254 characters).',
      invalid: 'true',
    });
    assert.equal(await page.getByLabel('E-mail', { exact: true }).inputValue(), 'a@b');
    // Only the refused form says it: the Credit form marks nothing.
    assert.equal(await page.locator('[aria-invalid]').count(), 1);
    await context.close();
  });
});
