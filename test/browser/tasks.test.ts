/**
 * The tasks pages in chromium (issue 15): a confirmed person, credited by the operator, makes tasks
 * through /v1 with their session (the `X-CSRF-Token` of the page's meta) for each kind of result the
 * simulator draws: a picture, an SVG (a vector style), music, a video and a GLB. A running task's page
 * follows its progress without a reload, then shows the players; each player really plays or draws;
 * Download answers the file; the list's filters work; the Russian list reads in Russian.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  chooseLanguage,
  confirmedPerson,
  launchBrowser,
  type Person,
  screenshot,
  startWebApp,
  type WebApp,
} from './kit.ts';
import { expectAudioPlays, expectImageLoads, expectModelViewerCanvas, expectVideoLoads } from './players.ts';

const FINAL = new Set(['succeeded', 'failed', 'canceled']);

/** POST /v1/tasks from the page, with its session cookie and CSRF token. */
async function createTask(page: Page, base: string, body: Record<string, unknown>): Promise<string> {
  const csrf = await page.locator('meta[name="csrf-token"]').getAttribute('content');
  const answer = await page.request.post(`${base}/v1/tasks`, {
    data: body,
    headers: { 'x-csrf-token': csrf ?? '' },
  });
  assert.equal(answer.status(), 202, await answer.text());
  return ((await answer.json()) as { id: string }).id;
}

/** Polls GET /v1/tasks/{id} with the session until the task is final. */
async function finished(page: Page, base: string, id: string): Promise<string> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const task = (await (await page.request.get(`${base}/v1/tasks/${id}`)).json()) as { status: string };
    if (FINAL.has(task.status) || Date.now() > deadline) return task.status;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Opens a finished task's page and checks its Download link answers the file with the session. */
async function openFinished(person: Person, base: string, id: string): Promise<Page> {
  const { page } = person;
  assert.equal(await finished(page, base, id), 'succeeded');
  await page.goto(`${base}/tasks/${id}`);
  const link = page.getByRole('link', { name: 'Download' }).first();
  // The page of a 3D result loads its viewer too: on a busy machine that took longer than the default 10 s.
  const href = await link.getAttribute('href', { timeout: 30_000 });
  assert.equal(href, `/v1/tasks/${id}/artifacts/0`);
  const file = await page.request.get(`${base}${href}`);
  assert.equal(file.status(), 200);
  assert.match(file.headers()['content-disposition'] ?? '', /^attachment; filename="/);
  const task = (await (await page.request.get(`${base}/v1/tasks/${id}`)).json()) as {
    result: { artifacts: Array<{ size: number }> };
  };
  assert.equal((await file.body()).length, task.result.artifacts[0]?.size);
  return page;
}

describe('tasks pages in the browser', () => {
  let web: WebApp;
  let browser: Browser;
  let person: Person;
  /** Messages the browser logged about the Content-Security-Policy. */
  const violations: string[] = [];
  const ids: Record<string, string> = {};

  before(async () => {
    web = await startWebApp({
      worker: true,
      // Slow enough that a marked task runs for a few seconds, fast enough for long models.
      env: { SIM_SPEED: '60' },
      // A style's pictures only need to be pictures; linked files are probed for real elsewhere.
      resolveLibraryInput: async () => ({ format: 'png', sizeBytes: 1000 }),
    });
    browser = await launchBrowser();
    person = await confirmedPerson(web, browser);
    person.page.on('console', (message) => {
      if (/Content.Security.Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    person.page.on('pageerror', (error) => violations.push(error.message));
    const credit = await web.admin('POST', `/admin/v1/accounts/${person.accountId}/credits`, {
      amount_minor: 1_000_000,
      reference: `browser-tasks-${person.accountId}`,
    });
    assert.equal(credit.statusCode, 201, credit.body);
    const { page } = person;
    const csrf = await page.locator('meta[name="csrf-token"]').getAttribute('content');
    const style = await page.request.post(`${web.base}/v1/models/image/styles`, {
      data: { name: 'Flat', image_urls: ['https://files.test/a.png'], type: 'vector' },
      headers: { 'x-csrf-token': csrf ?? '' },
    });
    assert.equal(style.status(), 201, await style.text());
    const styleId = ((await style.json()) as { id: string }).id;
    ids.audio = await createTask(page, web.base, {
      model: 'music-styles',
      settings: { prompt: 'calm lo-fi beat' },
    });
    ids.video = await createTask(page, web.base, {
      model: 'video-omni',
      settings: { prompt: 'a dancer on a rooftop' },
    });
    ids.model = await createTask(page, web.base, {
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt: 'a small wooden chair' },
    });
    ids.svg = await createTask(page, web.base, {
      model: 'image',
      settings: { prompt: 'a fox', style_id: styleId },
    });
  });
  after(async () => {
    await browser?.close();
    await web?.close();
  });

  test('a running task shows its progress changing without a reload, then its picture', async () => {
    const { page } = person;
    const id = await createTask(page, web.base, {
      model: 'image',
      settings: { prompt: 'a fox in the snow [sim:slow]' },
    });
    await page.goto(`${web.base}/tasks/${id}`);
    await page.getByRole('button', { name: 'Cancel', exact: true }).waitFor();
    // A mark on this document: a reload would lose it.
    await page.evaluate(() => Object.assign(window, { sameDocument: true }));
    const first = Number(await page.locator('[data-task-progress]').getAttribute('value'));
    await page.waitForFunction(
      (start) => {
        const bar = document.querySelector<HTMLProgressElement>('[data-task-progress]');
        const badge = document.querySelector<HTMLElement>('[data-task-status]');
        return (
          (window as unknown as { sameDocument?: boolean }).sameDocument === true &&
          badge?.dataset.taskStatus === 'running' &&
          bar !== null &&
          bar.value > start &&
          bar.value < 100
        );
      },
      first,
      { timeout: 30_000 },
    );
    assert.equal(await page.locator('[data-task-status]').textContent(), 'Running');
    await screenshot(page, 'task-running');
    // The final event reloads the page once, and the server draws the players.
    await page.locator('[data-player="image"]').waitFor({ timeout: 30_000 });
    assert.equal(
      await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument),
      undefined,
    );
    assert.equal(await page.locator('[data-task-status]').textContent(), 'Succeeded');
    await expectImageLoads(page);
    // The Download link saves the file itself.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download' }).first().click(),
    ]);
    assert.equal(download.suggestedFilename(), 'image-1.png');
    await screenshot(page, 'task-image');
  });

  test('when the event stream fails, the page polls the task every 2 s instead', async () => {
    const page = await person.context.newPage();
    await page.goto(`${web.base}/tasks`);
    // A proxy that cuts event streams: the island's EventSource fails at once.
    await page.route('**/v1/tasks/*/events', (route) => route.abort());
    const polls: string[] = [];
    page.on('request', (request) => {
      if (/\/v1\/tasks\/[0-9a-f-]+$/.test(new URL(request.url()).pathname)) polls.push(request.url());
    });
    const id = await createTask(page, web.base, {
      model: 'image',
      settings: { prompt: 'a hare in the snow [sim:slow]' },
    });
    await page.goto(`${web.base}/tasks/${id}`);
    await page.evaluate(() => Object.assign(window, { sameDocument: true }));
    await page.waitForFunction(
      () =>
        (window as unknown as { sameDocument?: boolean }).sameDocument === true &&
        document.querySelector<HTMLElement>('[data-task-status]')?.dataset.taskStatus === 'running' &&
        (document.querySelector<HTMLProgressElement>('[data-task-progress]')?.value ?? 0) > 0,
      undefined,
      { timeout: 30_000 },
    );
    assert.ok(polls.length > 0, 'GET /v1/tasks/{id} was asked');
    await page.locator('[data-player="image"]').waitFor({ timeout: 30_000 });
    await page.close();
  });

  test('Cancel stops a running task and releases its hold', async () => {
    const { page } = person;
    const id = await createTask(page, web.base, {
      model: 'image',
      settings: { prompt: 'a lynx [sim:slow]' },
    });
    await page.goto(`${web.base}/tasks/${id}`);
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await page.getByText('The task is canceled; its hold is released.').waitFor();
    assert.equal(await page.locator('[data-task-status]').textContent(), 'Canceled');
    assert.equal(await page.getByRole('button', { name: 'Cancel', exact: true }).count(), 0);
    const task = (await (await page.request.get(`${web.base}/v1/tasks/${id}`)).json()) as { status: string };
    assert.equal(task.status, 'canceled');
  });

  test('music plays in the audio player', async () => {
    const page = await openFinished(person, web.base, ids.audio ?? '');
    await expectAudioPlays(page);
    await screenshot(page, 'task-audio');
  });

  test('a video loads in the video player', async () => {
    const page = await openFinished(person, web.base, ids.video ?? '');
    await expectVideoLoads(page);
    await screenshot(page, 'task-video');
  });

  test('an SVG of a vector style shows as a picture', async () => {
    const page = await openFinished(person, web.base, ids.svg ?? '');
    assert.match((await page.locator('.artifact').first().textContent()) ?? '', /image\/svg\+xml/);
    assert.equal(await page.locator('main svg').count(), 0, 'never inline');
    await expectImageLoads(page);
    await screenshot(page, 'task-svg');
  });

  test('a GLB turns in the interactive 3D viewer', async () => {
    const page = await openFinished(person, web.base, ids.model ?? '');
    await expectModelViewerCanvas(page);
    assert.equal(await page.locator('model-viewer').getAttribute('camera-controls'), '');
    await screenshot(page, 'task-3d');
    assert.deepEqual(violations, [], 'the page keeps within its Content-Security-Policy');
  });

  test('the list filters by model and status', async () => {
    const { page } = person;
    await page.goto(`${web.base}/tasks`);
    await page.getByRole('button', { name: 'Filter' }).waitFor();
    await screenshot(page, 'tasks');
    const models = () => page.locator('table.tasks tbody tr td:nth-child(2)').allTextContents();
    assert.ok((await models()).includes('image'));
    assert.ok((await models()).includes('model-3d'));

    await page.getByLabel('Model').selectOption('image');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForLoadState('load');
    assert.equal(new URL(page.url()).searchParams.get('model'), 'image');
    const images = await models();
    const listed = (await (await page.request.get(`${web.base}/v1/tasks?model=image`)).json()) as {
      tasks: unknown[];
    };
    assert.equal(images.length, listed.tasks.length);
    assert.ok(images.every((m) => m === 'image'));
    assert.equal(await page.getByLabel('Model').inputValue(), 'image', 'the choice stays');

    await page.getByLabel('Model').selectOption('');
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForLoadState('load');
    assert.equal(await page.locator('table.tasks').count(), 0);
    await page.getByRole('link', { name: 'Create a task' }).waitFor();
  });

  test('the list in Russian', async () => {
    const { page } = person;
    await page.goto(`${web.base}/tasks`);
    await chooseLanguage(page, 'Русский');
    await page.goto(`${web.base}/tasks`);
    await page.getByRole('button', { name: 'Показать' }).waitFor();
    assert.ok((await page.locator('.badge').allTextContents()).includes('Готово'));
    await screenshot(page, 'tasks-ru');
    await chooseLanguage(page, 'English');
  });
});
