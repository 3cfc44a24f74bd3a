/**
 * The dashboard's tasks pages over `app.inject` (issue 15): the list with its model and status filters
 * and cursor, a task's page (settings escaped, error in the person's language, Cancel through the
 * service), the player chosen for each content type from the simulator's real files, downloads with the
 * session cookie, and the 404 page for another account's task.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../src/lib/clock.ts';
import { playerKind } from '../src/web/pages/players.ts';
import { type TestApp, waitForFinal } from './helpers.ts';
import { Browser, buttons, type FakePeople, startWithFakePeople, textOf } from './web-kit.ts';

/** A signed-up person with money and a key of their account. */
async function person(
  t: TestApp,
  people: FakePeople,
  headers: Record<string, string> = {},
): Promise<{ browser: Browser; key: string; accountId: string }> {
  const browser = new Browser(t, headers);
  const email = await browser.signUp();
  const accountId = people.persons.get(email)?.accountId;
  assert.ok(accountId);
  const credit = await t.admin('POST', `/admin/v1/accounts/${accountId}/credits`, {
    amount_minor: 10_000_000,
    reference: `web-tasks-${accountId}`,
  });
  assert.equal(credit.statusCode, 201, credit.body);
  const key = await t.admin('POST', `/admin/v1/accounts/${accountId}/keys`, {});
  assert.equal(key.statusCode, 201, key.body);
  return { browser, key: key.json().key as string, accountId };
}

async function create(t: TestApp, key: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.call(key, 'POST', '/v1/tasks', body);
  assert.equal(res.statusCode, 202, res.body);
  return res.json().id as string;
}

const image = (prompt = 'a fox in the snow') => ({ model: 'image', settings: { prompt } });
const rows = (body: string) =>
  [...body.matchAll(/<tr><td[^>]*><a href="\/tasks\/([0-9a-f-]{36})"/g)].map((m) => m[1]);

test('the player follows the content type; SVG is a picture, .glb a 3D model', () => {
  const kind = (content_type: string, filename = 'f') => playerKind({ content_type, filename });
  assert.equal(kind('audio/mpeg'), 'audio');
  assert.equal(kind('video/mp4'), 'video');
  assert.equal(kind('image/svg+xml'), 'image');
  assert.equal(kind('image/png'), 'image');
  assert.equal(kind('model/gltf-binary'), 'model');
  assert.equal(kind('application/octet-stream', 'chair.GLB'), 'model');
  assert.equal(kind('application/octet-stream', 'chair.fbx'), 'none');
  assert.equal(kind('text/plain'), 'none');
});

describe('tasks pages without a worker (tasks stay queued)', () => {
  let t: TestApp;
  let people: FakePeople;
  before(async () => {
    ({ t, people } = await startWithFakePeople({
      worker: false,
    }));
  });
  after(() => t.close());

  test('signed out, the list and a task go to /signin', async () => {
    const browser = new Browser(t);
    for (const url of ['/tasks', '/tasks/00000000-0000-4000-8000-000000000000']) {
      const res = await browser.get(url);
      assert.equal(res.statusCode, 303, url);
      assert.equal(res.headers.location, `/signin?next=${encodeURIComponent(url)}`);
    }
  });

  test('an empty list links to /new', async () => {
    const { browser } = await person(t, people);
    const res = await browser.get('/tasks');
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /data-testid="tasks-empty"[^>]*>No tasks here yet\. <a href="\/new">/);
  });

  test('newest first, filters kept in the query, and the cursor pages through', async () => {
    const { browser, key } = await person(t, people);
    // At most 10 unfinished tasks per model: 10 pictures, 10 tunes, then a chair make 21.
    const images: string[] = [];
    for (let i = 0; i < 10; i += 1) images.push(await create(t, key, image(`picture ${i}`)));
    const tunes: string[] = [];
    for (let i = 0; i < 10; i += 1)
      tunes.push(await create(t, key, { model: 'music-styles', settings: { prompt: `tune ${i}` } }));
    const chair = await create(t, key, {
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt: 'a chair' },
    });
    const newest = [chair, ...tunes.toReversed(), ...images.toReversed()];

    const all = await browser.get('/tasks');
    assert.equal(all.statusCode, 200);
    assert.deepEqual(rows(all.body), newest.slice(0, 20), 'newest first, 20 a page');
    assert.match(all.body, /class="badge status-queued"[^>]*>Queued</);

    const filtered = await browser.get('/tasks?status=queued');
    assert.deepEqual(rows(filtered.body), newest.slice(0, 20));
    assert.match(filtered.body, /<option value="queued" selected>/);
    const older = /<a href="([^"]+)" rel="next">Older<\/a>/
      .exec(filtered.body)?.[1]
      ?.replaceAll('&amp;', '&');
    assert.ok(older, 'an Older link');
    assert.equal(new URL(older, 'http://x').searchParams.get('status'), 'queued', 'the filter is kept');
    const page2 = await browser.get(older);
    assert.deepEqual(rows(page2.body), [images[0]]);
    assert.doesNotMatch(page2.body, /rel="next"/);
    assert.match(page2.body, /<a href="\/tasks\?status=queued">Newest<\/a>/);

    const pictures = await browser.get('/tasks?model=image&status=queued');
    assert.deepEqual(rows(pictures.body), images.toReversed());
    assert.match(pictures.body, /<option value="image" selected>/);
    assert.doesNotMatch(pictures.body, /rel="next"/);
    assert.deepEqual(rows((await browser.get('/tasks?model=model-3d')).body), [chair]);
    assert.deepEqual(rows((await browser.get('/tasks?status=succeeded')).body), []);
    const bad = await browser.get('/tasks?cursor=not-ours');
    assert.equal(bad.statusCode, 422, 'a foreign cursor is a refusal page, not a fault');
    assert.match(bad.headers['content-type'] as string, /^text\/html/);
  });

  test("another account's task, an unknown id and a malformed id are 404 pages", async () => {
    const owner = await person(t, people);
    const other = await person(t, people);
    const id = await create(t, owner.key, image());
    assert.equal((await owner.browser.get(`/tasks/${id}`)).statusCode, 200);
    for (const url of [
      `/tasks/${id}`,
      '/tasks/00000000-0000-4000-8000-000000000000',
      '/tasks/nope',
      `/tasks/${'x'.repeat(101)}`,
      `/tasks/${'x'.repeat(1000)}`,
    ]) {
      const res = await other.browser.get(url);
      assert.equal(res.statusCode, 404, url);
      assert.match(res.headers['content-type'] as string, /^text\/html/);
      assert.doesNotMatch(res.body, /a fox in the snow/);
    }
    assert.deepEqual(rows((await other.browser.get('/tasks')).body), []);
  });

  test('settings are escaped, a queued task follows live and can be canceled with the form', async () => {
    const { browser, key } = await person(t, people);
    const prompt = '<script>alert(1)</script><img src=x onerror=alert(2)> "quoted" & more';
    const id = await create(t, key, image(prompt));
    const res = await browser.get(`/tasks/${id}`);
    assert.equal(res.statusCode, 200);
    assert.doesNotMatch(res.body, /<script>alert|<img src=x/);
    assert.match(res.body, /&lt;script>alert\(1\)&lt;\/script>&lt;img src=x onerror=alert\(2\)>/);
    assert.match(res.body, new RegExp(`data-task-live="${id}"`));
    assert.match(res.body, /<script type="module" src="\/assets\/task-live\.js\?v=/);
    assert.ok(buttons(res.body).includes('Cancel'));
    assert.match(textOf(res.body), /Held RUB/);

    const canceled = await browser.post(`/tasks/${id}/cancel`, {});
    assert.equal(canceled.statusCode, 303);
    assert.equal(canceled.headers.location, `/tasks/${id}`);
    const after = await browser.get(`/tasks/${id}`);
    assert.match(after.body, /class="flash"[^>]*>The task is canceled; its hold is released\./);
    assert.match(after.body, /data-task-status="canceled"[^>]*>Canceled</);
    assert.match(after.body, /data-testid="charged">RUB\s0\.00</);
    assert.ok(!buttons(after.body).includes('Cancel'));
    assert.doesNotMatch(after.body, /task-live\.js/);
    assert.equal((await t.call(key, 'GET', `/v1/tasks/${id}`)).json().status, 'canceled');
    // Canceling again is no fault: the page shows how the task ended.
    assert.equal((await browser.post(`/tasks/${id}/cancel`, {})).statusCode, 303);
    // Without the CSRF field nothing happens.
    assert.equal((await browser.post(`/tasks/${id}/cancel`, { _csrf: 'x' })).statusCode, 403);
  });

  test('the list in Russian: words, badges and Moscow dates', async () => {
    const { browser, key } = await person(t, people);
    await browser.post('/language', { lang: 'ru', next: '/tasks' });
    await create(t, key, image());
    const res = await browser.get('/tasks');
    assert.match(res.body, /<html lang="ru">/);
    assert.match(res.body, />В очереди</);
    assert.match(res.body, />Создана</);
    assert.match(res.body, /\d{4} г\./, 'a Russian date');
    // The mode is named as on the form and the task's page, its API name beside it.
    assert.match(res.body, /<td data-label="Режим">Основной \(default\)<\/td>/);
    // "Any" agrees with its filter's noun: Модель is feminine, Состояние neuter.
    assert.match(res.body, /<select name="model">\s*<option value[^>]*>Любая</);
    assert.match(res.body, /<select name="status">\s*<option value[^>]*>Любое</);
  });
});

describe('tasks pages with the simulator', () => {
  let t: TestApp;
  let people: FakePeople;
  before(async () => {
    ({ t, people } = await startWithFakePeople({
      // Own uploads and links are probed for real elsewhere; a style's pictures only need to be pictures.
      resolveLibraryInput: async () => ({ format: 'png', sizeBytes: 1000 }),
    }));
  });
  after(() => t.close());

  test('each result gets its player and a Download link that the session opens', async () => {
    const { browser, key } = await person(t, people);
    const style = await t.call(key, 'POST', '/v1/models/image/styles', {
      name: 'Flat',
      image_urls: ['https://files.test/a.png'],
      type: 'vector',
    });
    assert.equal(style.statusCode, 201, style.body);
    const cases = [
      {
        body: image(),
        player: /<img src="\/v1\/tasks\/[^"]+\/artifacts\/0" alt="[^"]*" loading="lazy" data-player="image"/,
      },
      {
        body: { model: 'image', settings: { prompt: 'a fox', style_id: style.json().id } },
        player: /data-player="image"/,
        svg: true,
      },
      {
        body: { model: 'music-styles', settings: { prompt: 'calm lo-fi beat' } },
        player: /<audio controls preload="metadata" src="\/v1\/tasks\//,
      },
      {
        body: { model: 'video-omni', settings: { prompt: 'a dancer on a rooftop' } },
        player: /<video controls preload="metadata" playsinline src="\/v1\/tasks\//,
      },
      {
        body: { model: 'model-3d', settings: { task_type: 'text_to_model', prompt: 'a chair' } },
        player: /<model-viewer src="\/v1\/tasks\/[^"]+" alt="3D model [^"]+" camera-controls(="")?/,
        model: true,
      },
    ];
    for (const c of cases) {
      const id = await create(t, key, c.body);
      const final = await waitForFinal(t, key, id, 60_000);
      assert.equal(final.status, 'succeeded', JSON.stringify(final));
      const res = await browser.get(`/tasks/${id}`);
      assert.equal(res.statusCode, 200);
      assert.match(res.body, c.player, c.body.model);
      assert.match(res.body, /data-testid="charged">RUB\s[1-9]/);
      assert.doesNotMatch(res.body, /task-live\.js/, 'a final task needs no live island');
      if (c.svg) {
        assert.match(res.body, /image\/svg\+xml/);
        assert.doesNotMatch(res.body, /<svg/i, 'an SVG is never inline');
      }
      assert.equal(/model-viewer\.js/.test(res.body), Boolean(c.model), 'the viewer loads only with a model');
      const policy = String(res.headers['content-security-policy']);
      if (c.model) {
        assert.match(res.body, /<script type="module" src="\/assets\/vendor\/model-viewer\.js\?v=/);
        assert.match(policy, /script-src 'self' 'wasm-unsafe-eval'(;|$)/);
        assert.match(policy, /connect-src 'self' blob:(;|$)/);
        assert.match(policy, /style-src 'self' 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
      } else {
        assert.doesNotMatch(
          policy,
          /wasm-unsafe-eval|sha256|connect-src[^;]*blob:/,
          'other pages keep the strict policy',
        );
        assert.match(policy, /script-src 'self';/);
      }
      const link =
        /<a class="button secondary" href="(\/v1\/tasks\/[^"]+\/artifacts\/0)" download="([^"]+)">Download<\/a>/.exec(
          res.body,
        );
      assert.ok(link?.[1], 'a Download link');
      // The session cookie opens it in a browser (test/browser/tasks.test.ts); here the account's key.
      const file = await t.call(key, 'GET', link[1]);
      assert.equal(file.statusCode, 200);
      assert.match(
        String(file.headers['content-disposition']),
        new RegExp(`^attachment; filename="${link[2]}"`),
      );
      assert.ok(file.rawPayload.length > 0);
    }
  });

  test("a result's size is written in the person's language", async () => {
    const { browser, key } = await person(t, people);
    const id = await create(t, key, image());
    assert.equal((await waitForFinal(t, key, id, 60_000)).status, 'succeeded');
    assert.match(textOf((await browser.get(`/tasks/${id}`)).body), /image\/png, [\d.]+ KB\b/);
    await browser.post('/language', { lang: 'ru', next: `/tasks/${id}` });
    const ru = textOf((await browser.get(`/tasks/${id}`)).body);
    assert.match(ru, /image\/png, [\d,]+ КБ/);
    assert.doesNotMatch(ru, /\bKB\b/);
  });

  test("a failed task shows its error's code and message in the person's language", async () => {
    const { browser, key } = await person(t, people);
    const id = await create(t, key, image('a fox [sim:fail]'));
    assert.equal((await waitForFinal(t, key, id)).status, 'failed');
    const en = await browser.get(`/tasks/${id}`);
    const message = (await t.call(key, 'GET', `/v1/tasks/${id}`)).json().error.message as string;
    assert.match(en.body, /data-testid="task-error"/);
    assert.match(
      textOf(en.body),
      new RegExp(`Error: generation_failed — ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );
    assert.match(en.body, /data-testid="charged">RUB\s0\.00</);
    await browser.post('/language', { lang: 'ru', next: `/tasks/${id}` });
    const ru = await browser.get(`/tasks/${id}`);
    const ruMessage = (
      await t.call(key, 'GET', `/v1/tasks/${id}`, undefined, { 'accept-language': 'ru' })
    ).json().error.message as string;
    assert.notEqual(ruMessage, message);
    assert.ok(textOf(ru.body).includes(`Ошибка: generation_failed — ${ruMessage}`), textOf(ru.body));
    // The settings keep their API names; Russian pages put the new-task form's labels before them.
    assert.match(en.body, /<dt>prompt<\/dt>/);
    assert.match(ru.body, /<dt>Описание \(промпт\) \(prompt\)<\/dt>/);
  });

  test('a Russian page says the settings’ yes, no and fractions in Russian', async () => {
    const { browser, key } = await person(t, people);
    const id = await create(t, key, {
      model: 'music',
      settings: { mode: 'generate', songDescription: 'песня про лису', audioWeight: 0.65 },
    });
    const en = await browser.get(`/tasks/${id}`);
    assert.match(en.body, /<dt>instrumental<\/dt><dd>false<\/dd>/);
    assert.match(en.body, /<dt>audioWeight<\/dt><dd>0\.65<\/dd>/);
    await browser.post('/language', { lang: 'ru', next: `/tasks/${id}` });
    const ru = (await browser.get(`/tasks/${id}`)).body;
    assert.match(ru, /\(instrumental\)<\/dt><dd>нет<\/dd>/);
    assert.match(ru, /\(audioWeight\)<\/dt><dd>0,65<\/dd>/);
    assert.doesNotMatch(ru, /<dd>(true|false)<\/dd>/);
  });
});

describe('tasks pages after the files expire', () => {
  let t: TestApp;
  let people: FakePeople;
  const clock = new ManualClock();
  before(async () => {
    ({ t, people } = await startWithFakePeople({
      clock,
      env: { RESULT_RETENTION: '2h' },
    }));
  });
  after(() => t.close());

  test('an expired file says so, without a player or a Download link', async () => {
    const { browser, key } = await person(t, people);
    const id = await create(t, key, image());
    for (
      let i = 0;
      i < 400 && (await t.call(key, 'GET', `/v1/tasks/${id}`)).json().status === 'queued';
      i += 1
    )
      await new Promise((resolve) => setTimeout(resolve, 25));
    clock.advance(60_000);
    assert.equal((await waitForFinal(t, key, id)).status, 'succeeded');
    const fresh = await browser.get(`/tasks/${id}`);
    assert.match(fresh.body, /data-player="image"/);
    assert.match(fresh.body, />Download</);
    assert.match(textOf(fresh.body), /Files are kept until /);

    clock.advance(2 * 3_600_000 + 1);
    const expired = await browser.get(`/tasks/${id}`);
    assert.equal(expired.statusCode, 200);
    assert.match(textOf(expired.body), /The files of this task expired on \w{3} \d+, \d{4}/);
    assert.doesNotMatch(expired.body, /data-player=|>Download</);
    assert.match(expired.body, /image-1\.png/, 'the file is still named');
  });
});
