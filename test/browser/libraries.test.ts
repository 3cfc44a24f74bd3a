/**
 * The libraries pages in a real browser (issue 15): for every declared kind, a record is made from its
 * generated form with files uploaded through the picker, its state followed in the list until it is
 * final, then deleted after the confirmation; the singing voice's two steps with uploaded recordings and
 * with a recording made on chromium's fake microphone; a refusal shows the API's message.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { z } from 'zod';
import { drawPicture, encodePng } from '../../src/generators/simulator/media/png.ts';
import { LIBRARIES, type LibraryDecl } from '../../src/libraries/index.ts';
import {
  CHROMIUM,
  CHROMIUM_ARGS,
  chooseLanguage,
  confirmedPerson,
  launchBrowser,
  newContext,
  type Person,
  screenshot,
  signIn,
  startWebApp,
  type WebApp,
} from './kit.ts';

/** A mono 16-bit WAV of a tone, `seconds` long. */
function wav(seconds: number, rate = 8000): Buffer {
  const samples = Math.round(seconds * rate);
  const out = Buffer.alloc(44 + samples * 2);
  out.write('RIFF', 0);
  out.writeUInt32LE(36 + samples * 2, 4);
  out.write('WAVEfmt ', 8);
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20);
  out.writeUInt16LE(1, 22);
  out.writeUInt32LE(rate, 24);
  out.writeUInt32LE(rate * 2, 28);
  out.writeUInt16LE(2, 32);
  out.writeUInt16LE(16, 34);
  out.write('data', 36);
  out.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i += 1) out.writeInt16LE(Math.round(Math.sin(i / 8) * 8000), 44 + i * 2);
  return out;
}

const kindOf = (decl: LibraryDecl) => `${decl.model}/${decl.segment}`;

/**
 * The form's required fields, from the declared body (what the API requires), and optional picture
 * fields (an element needs its pictures or a video).
 */
function requiredFields(decl: LibraryDecl): Array<{ name: string; enum?: unknown[] }> {
  const json = z.toJSONSchema(decl.body, { io: 'input', unrepresentable: 'any' }) as {
    properties: Record<string, { enum?: unknown[] }>;
    required?: string[];
  };
  const pictures = Object.entries(decl.files)
    .filter(([, rule]) => (rule.formats as readonly string[]).includes('png'))
    .map(([name]) => name);
  const names = [...new Set([...(json.required ?? []), ...pictures])];
  return names.map((name) => ({ name, enum: json.properties[name]?.enum }));
}

describe('libraries pages in the browser', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-libraries-'));
  const picture = path.join(dir, 'picture.png');
  const song = path.join(dir, 'song.wav');
  const phrase = path.join(dir, 'phrase.wav');
  let web: WebApp;
  let browser: Browser;
  let person: Person;

  before(async () => {
    fs.writeFileSync(picture, encodePng(64, 64, drawPicture(64, 64, 'library')));
    fs.writeFileSync(song, wav(15));
    fs.writeFileSync(phrase, wav(4));
    // Slow enough that learning shows in the page, fast enough for a test; the worker makes the song.
    web = await startWebApp({ worker: true, env: { SIM_SPEED: '40' } });
    browser = await launchBrowser();
    person = await confirmedPerson(web, browser);
    const credited = await web.admin('POST', `/admin/v1/accounts/${person.accountId}/credits`, {
      amount_minor: 100_000,
      reference: 'libraries-browser',
    });
    assert.equal(credited.statusCode, 201, credited.body);
  });
  after(async () => {
    await browser?.close();
    await web?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A succeeded song task of the person, made through /v1 with the session (for personas). */
  async function songTask(page: Page): Promise<string> {
    const csrf = (await page.locator('meta[name="csrf-token"]').getAttribute('content')) ?? '';
    const created = await page.request.post(`${web.base}/v1/tasks`, {
      headers: { 'x-csrf-token': csrf },
      data: {
        model: 'music',
        settings: {
          mode: 'generate',
          customMode: true,
          title: 'Tram',
          style: 'pop',
          prompt: 'Dawn',
          duration: 10,
        },
      },
    });
    assert.equal(created.status(), 202, await created.text());
    const id = ((await created.json()) as { id: string }).id;
    for (;;) {
      const task = (await (await page.request.get(`${web.base}/v1/tasks/${id}?wait=5`)).json()) as {
        status: string;
      };
      if (task.status === 'succeeded') return id;
      assert.ok(['queued', 'running'].includes(task.status), task.status);
    }
  }

  /** Uploads a file through a link field's picker and waits for its link. */
  async function pick(page: Page, field: string, file: string): Promise<void> {
    await page.locator(`input[type="file"][data-fills="field-${field}"]`).setInputFiles(file);
    await page
      .locator(`[data-status-for="field-${field}"]`)
      .filter({ hasText: /^Uploaded / })
      .waitFor();
  }

  /** Fills the generated form of `decl` with what the API requires; returns the record's name. */
  async function fillForm(page: Page, decl: LibraryDecl, taskId: string): Promise<string> {
    const name = `Test ${decl.title}`;
    for (const field of requiredFields(decl)) {
      const control = page.locator(`[name="${field.name}"][data-type]`);
      const rule = decl.files[field.name];
      if (rule)
        await pick(page, field.name, (rule.formats as readonly string[]).includes('png') ? picture : song);
      else if (field.enum) await control.selectOption(String(field.enum[0]));
      else if (field.name === 'source_task_id') await control.fill(taskId);
      else if (field.name === 'index') await control.fill('0');
      else if (field.name === 'base_voice_id') await control.fill('preset-warm-narrator');
      else await control.fill(field.name === 'name' ? name : `Test ${field.name}`);
    }
    return name;
  }

  test('every kind: create from its form with uploaded files, see its final state, delete it', async () => {
    const page = person.page;
    await page.goto(`${web.base}/libraries`);
    const taskId = await songTask(page);
    const made: Array<{ decl: LibraryDecl; name: string }> = [];
    for (const decl of LIBRARIES.filter((d) => !d.steps)) {
      await page.goto(`${web.base}/libraries`);
      await page.locator(`a[href="/libraries/${kindOf(decl)}/new"]`).click();
      await page.waitForURL(`${web.base}/libraries/${kindOf(decl)}/new`);
      const name = await fillForm(page, decl, taskId);
      if (decl.segment === 'styles' && decl.model === 'image') await screenshot(page, 'library-create');
      await page.getByRole('button', { name: 'Create record' }).click();
      const refusal = page.locator('[data-form-error]:not([hidden])');
      await Promise.race([
        page.waitForURL(/\/libraries#record-/, { timeout: 60_000 }),
        refusal.waitFor({ timeout: 60_000 }),
      ]);
      if (!page.url().includes('#record-')) assert.fail(`${kindOf(decl)}: ${await refusal.textContent()}`);
      const row = page.locator('tr[id^="record-"]', { hasText: name });
      await row.waitFor();
      if (decl.learns) {
        assert.equal(await row.locator('[data-state]').getAttribute('data-state'), decl.learns.initial);
        await screenshot(page, 'library-processing');
      }
      // Without reloading: the island follows the record until its state is final.
      if (decl.states) await row.locator('[data-state="ready"]').waitFor({ timeout: 60_000 });
      made.push({ decl, name });
    }
    await page.goto(`${web.base}/libraries`);
    await screenshot(page, 'libraries');
    for (const { decl, name } of made) {
      const row = page.locator('tr[id^="record-"]', { hasText: name });
      await row.getByRole('button', { name: `Delete ${name}` }).click();
      await row.getByRole('button', { name: 'Yes, delete' }).click();
      await row.waitFor({ state: 'detached' });
      const list = (await (await page.request.get(`${web.base}/v1/models/${kindOf(decl)}`)).json()) as Record<
        string,
        unknown[]
      >;
      assert.deepEqual(list[decl.segment], [], `${kindOf(decl)} deleted`);
      // The kind's count follows the delete without a reload, as the list says it.
      await page.locator(`[data-count="${kindOf(decl)}"]`, { hasText: /^0 records$/ }).waitFor();
      // And its list says it is empty, as a kind with nothing yet does, without a header row over nothing.
      const section = page.locator(`section[data-kind="${kindOf(decl)}"]`);
      assert.equal(await section.locator('table').count(), 0, kindOf(decl));
      assert.equal(await section.getByText('Nothing here yet.').isVisible(), true, kindOf(decl));
    }
  });

  test('a singing voice through both steps with uploaded recordings, a failure and a retry', async () => {
    const page = person.page;
    await page.goto(`${web.base}/libraries/music/voices/new`);
    await pick(page, 'source_url', song);
    await page.getByLabel('Start, seconds').fill('1');
    await page.getByLabel('End, seconds').fill('13');
    await page.getByRole('button', { name: 'Create record' }).click();
    await page.waitForURL(/\/libraries\/music\/voices\/[^/]+$/);
    // The page follows processing and shows the phrase once the voice waits for the recording.
    const shown = page.locator('blockquote.phrase');
    await shown.waitFor({ timeout: 60_000 });
    assert.ok(((await shown.textContent()) ?? '').trim().length > 0);
    await screenshot(page, 'singing-voice-phrase');
    const first = await shown.textContent();
    // The simulator fails a verify whose name asks for it; `retry` gives a new phrase.
    await pick(page, 'recording_url', phrase);
    await page.getByLabel('Name').fill('Nope [sim:fail]');
    await page.getByRole('button', { name: 'Verify the voice' }).click();
    await page.locator('[data-status="failed"]').waitFor({ timeout: 60_000 });
    assert.match((await page.getByRole('alert').first().textContent()) ?? '', /The generator said: /);
    await page.getByRole('button', { name: 'Get a new phrase' }).click();
    await page.locator('[data-status="pending_recording"]').waitFor();
    assert.notEqual(await shown.textContent(), first, 'a retry never repeats a phrase');
    await pick(page, 'recording_url', phrase);
    await page.getByLabel('Name').fill('My singing voice');
    await page.getByRole('button', { name: 'Verify the voice' }).click();
    await page.locator('[data-status="ready"]').waitFor({ timeout: 60_000 });
    assert.match((await page.title()) ?? '', /My singing voice/);
  });

  test('a singing voice whose phrase is recorded on the (fake) microphone', async () => {
    const recording = await chromium.launch({
      executablePath: CHROMIUM,
      args: [...CHROMIUM_ARGS, '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream'],
    });
    try {
      const context = await newContext(recording);
      await context.grantPermissions(['microphone'], { origin: web.base });
      const page = await context.newPage();
      assert.ok((await signIn(page, web.base, person.email, person.password)) < 400);
      await page.goto(`${web.base}/libraries/music/voices/new`);
      await pick(page, 'source_url', song);
      await page.getByLabel('Start, seconds').fill('0');
      await page.getByLabel('End, seconds').fill('12');
      await page.getByRole('button', { name: 'Create record' }).click();
      await page.locator('blockquote.phrase').waitFor({ timeout: 60_000 });
      await page.getByRole('button', { name: 'Record' }).click();
      await page.getByRole('button', { name: 'Stop recording' }).waitFor();
      // The simulator takes recordings of at least 3 seconds.
      await page.waitForTimeout(4_000);
      await page.getByRole('button', { name: 'Stop recording' }).click();
      await page
        .locator('[data-status-for="field-recording_url"]')
        .filter({ hasText: 'Uploaded recording.wav' })
        .waitFor();
      assert.match(
        await page.locator('#field-recording_url').inputValue(),
        /\/files\/[A-Za-z0-9]{32}\/recording\.wav$/,
      );
      await page.getByLabel('Name').fill('Recorded voice');
      await page.getByRole('button', { name: 'Verify the voice' }).click();
      await page.locator('[data-status="ready"]').waitFor({ timeout: 60_000 });
    } finally {
      await recording.close();
    }
  });

  test('a creation whose answer was lost, sent again, makes one record (same Idempotency-Key)', async () => {
    const page = person.page;
    await page.goto(`${web.base}/libraries/image/styles/new`);
    const keys: string[] = [];
    let lose = true;
    await page.route('**/v1/models/image/styles', async (route) => {
      keys.push(route.request().headers()['idempotency-key'] ?? '');
      const answer = await route.fetch();
      // The first answer is lost on the way back: the record exists, the page does not know it.
      if (lose) {
        lose = false;
        return route.abort('failed');
      }
      return route.fulfill({ response: answer });
    });
    await page.getByLabel('Name', { exact: true }).fill('Sent twice');
    await pick(page, 'image_urls', picture);
    await page.getByRole('button', { name: 'Create record' }).click();
    await page.locator('[data-form-error]:not([hidden])').waitFor();
    await page.getByRole('button', { name: 'Create record' }).click();
    await page.waitForURL((url) => !url.pathname.endsWith('/new'));
    await page.unroute('**/v1/models/image/styles');
    assert.equal(keys.length, 2);
    assert.ok(keys[0] !== '' && keys[0] === keys[1], keys.join(' / '));
    const list = (await (await page.request.get(`${web.base}/v1/models/image/styles`)).json()) as {
      styles: Array<{ name: string }>;
    };
    assert.equal(list.styles.filter((s) => s.name === 'Sent twice').length, 1);
  });

  test("a refusal shows the API's message in the form", async () => {
    const page = person.page;
    await page.goto(`${web.base}/libraries/image/styles/new`);
    await page.getByLabel('Name', { exact: true }).fill('Refused style');
    await page.locator('#field-image_urls').fill('http://169.254.169.254/latest/meta-data.png');
    await page.getByRole('button', { name: 'Create record' }).click();
    const alert = page.locator('[data-form-error]');
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /body\.image_urls\.0/);
    // The field it names is marked, and the refusal said under it too.
    const field = page.locator('#field-image_urls');
    assert.equal(await field.getAttribute('aria-invalid'), 'true');
    const under = page.locator('.field-problem');
    assert.equal(await under.textContent(), await alert.textContent());
    assert.ok(
      (await field.getAttribute('aria-describedby'))
        ?.split(' ')
        .includes((await under.getAttribute('id')) ?? ''),
    );
    assert.equal(new URL(page.url()).pathname, '/libraries/image/styles/new');
    // The button, disabled while sending, has the keyboard focus again.
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Create record');
    // Editing the named field takes the refusal away, here and above the form.
    await field.fill('https://files.test/changed.png');
    assert.equal(await field.getAttribute('aria-invalid'), null);
    assert.equal(await under.count(), 0);
    assert.equal(await alert.isHidden(), true);
  });

  test("a refused file names the field the form shows, not the API's `file`", async () => {
    const page = person.page;
    await page.goto(`${web.base}/libraries/video-omni/characters/new`);
    const pickers = page.locator('input[type="file"][data-fills]');
    assert.ok((await pickers.count()) >= 2, 'a form with two file fields');
    const alert = page.locator('[data-form-error]');
    for (const index of [0, 1]) {
      const picker = pickers.nth(index);
      const label = (await picker.getAttribute('data-field')) ?? '';
      const refused = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/files');
      await picker.setInputFiles({
        name: 'notes.txt',
        mimeType: 'text/plain',
        buffer: Buffer.from('plain words, no picture'),
      });
      assert.equal((await refused).status(), 422);
      await alert.filter({ hasText: `“${label}”` }).waitFor();
      const said = (await alert.textContent()) ?? '';
      assert.equal(said, `The file in “${label}” is of a type that is not accepted here.`);
    }
  });

  test('a name of emoji as long as the API takes is typed whole and makes its record', async () => {
    const page = person.page;
    await page.goto(`${web.base}/libraries/image/styles/new`);
    // 100 characters for the API (code points), 200 UTF-16 units for the browser.
    const name = '🎨'.repeat(100);
    const field = page.getByLabel('Name', { exact: true });
    await field.fill(name);
    assert.equal(await field.inputValue(), name, 'nothing cut while typing');
    await pick(page, 'image_urls', picture);
    await page.getByRole('button', { name: 'Create record' }).click();
    await page.waitForURL(/\/libraries#record-/);
    await page.locator('.record-name', { hasText: name }).waitFor();
  });

  test('the list in Russian', async () => {
    const context = await newContext(browser, { acceptLanguage: 'ru' });
    try {
      const page = await context.newPage();
      assert.ok((await signIn(page, web.base, person.email, person.password)) < 400);
      await page.goto(`${web.base}/libraries`);
      await chooseLanguage(page, 'Русский');
      await page.getByRole('heading', { name: 'Певческие голоса' }).first().waitFor();
      await screenshot(page, 'libraries-ru');
      await chooseLanguage(page, 'English');
    } finally {
      await context.close();
    }
  });
});
