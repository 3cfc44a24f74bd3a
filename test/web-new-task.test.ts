/**
 * The new-task page over `app.inject` (issue 15): it needs a session, lists every model of the catalog
 * with unavailable ones disabled and their reason, carries the models and their settings schemas exactly
 * as GET /v1/models answers them (so the island's first paint needs no call), escapes what it writes, and
 * speaks Russian. GET /v1/models marks the settings that name library records (`x-library`), from the
 * catalog's references.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MODELS } from '../src/catalog/index.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { Browser, buttons, FakePeople, labels } from './web-kit.ts';

/** An attribute's value as the browser reads it. */
function attribute(body: string, name: string): string {
  const match = new RegExp(`${name}="([^"]*)"`).exec(body);
  assert.ok(match, `no ${name} attribute`);
  return (match[1] ?? '')
    .replace(/&quot;/g, '"')
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The `<option>`s of the select with `id`: value, text, disabled. */
function options(body: string, id: string): Array<{ value: string; text: string; disabled: boolean }> {
  const select = new RegExp(`<select id="${id}"[^>]*>([\\s\\S]*?)</select>`).exec(body)?.[1] ?? '';
  return [...select.matchAll(/<option([^>]*)>([^<]*)<\/option>/g)].map((m) => ({
    value: /value="([^"]*)"/.exec(m[1] ?? '')?.[1] ?? '',
    text: m[2] ?? '',
    disabled: /\sdisabled/.test(m[1] ?? ''),
  }));
}

describe('the new-task page', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ worker: false, people: (container) => new FakePeople(container) });
  });
  after(() => t.close());

  test('needs a session: a signed-out visit goes to /signin and comes back', async () => {
    const res = await new Browser(t).get('/new?model=music');
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/signin?next=%2Fnew%3Fmodel%3Dmusic');
  });

  test('lists every model of the catalog, marks the unavailable one, carries GET /v1/models', async () => {
    assert.equal((await t.admin('PATCH', '/admin/v1/models/image', { available: false })).statusCode, 200);
    try {
      const browser = new Browser(t);
      await browser.signUp();
      const res = await browser.get('/new');
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      const listed = options(res.body, 'new-model');
      assert.deepEqual(
        listed.map((o) => o.value),
        MODELS.map((m) => m.key),
      );
      for (const option of listed) {
        assert.equal(option.disabled, option.value === 'image', option.value);
        if (option.value === 'image') assert.match(option.text, /unavailable: switched off by the operator/);
      }
      assert.ok(labels(res.body).includes('Model'));
      assert.ok(buttons(res.body).includes('Create task'));
      assert.match(res.body, /<script type="module" src="\/assets\/new-task\.js\?v=/);
      // The island's data: the very models of GET /v1/models, schemas included.
      const { key } = await t.account();
      const api = await t.call(key, 'GET', '/v1/models');
      assert.deepEqual(JSON.parse(attribute(res.body, 'data-models')), api.json().models);
      // The first open model and its first mode are chosen.
      assert.match(res.body, /<option value="model-3d" selected/);
      assert.match(res.body, /<option value="text_to_model" selected/);
    } finally {
      await t.admin('PATCH', '/admin/v1/models/image', { available: true });
    }
  });

  test('opens with ?model=&mode=; a single-mode model hides the mode chooser', async () => {
    const browser = new Browser(t);
    await browser.signUp();
    const music = await browser.get('/new?model=music&mode=extend');
    assert.match(music.body, /<option value="music" selected/);
    assert.match(music.body, /<option value="extend" selected/);
    assert.doesNotMatch(music.body, /id="new-mode-field" hidden/);
    const image = await browser.get('/new?model=image');
    assert.match(image.body, /<option value="image" selected/);
    assert.match(image.body, /id="new-mode-field" hidden/);
    const unknown = await browser.get('/new?model=nope&mode=nope');
    assert.equal(unknown.statusCode, 200);
    assert.match(unknown.body, /<option value="model-3d" selected/);
  });

  test('escapes what it writes: the data attributes and a hostile query', async () => {
    const browser = new Browser(t);
    await browser.signUp();
    const res = await browser.get('/new?model=%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E');
    assert.equal(res.statusCode, 200);
    assert.doesNotMatch(res.body, /<script>alert/);
    assert.doesNotMatch(res.body, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
    const raw = /data-models="([^"]*)"/.exec(res.body)?.[1] ?? '';
    assert.ok(raw.includes('&quot;'), 'the JSON quotes are escaped inside the attribute');
    assert.doesNotMatch(raw, /[<>]/);
  });

  test('speaks Russian', async () => {
    const browser = new Browser(t, { 'accept-language': 'ru' });
    await browser.signUp();
    const res = await browser.get('/new');
    assert.equal(res.statusCode, 200);
    assert.ok(buttons(res.body).includes('Создать задачу'));
    assert.ok(labels(res.body).includes('Модель'));
    assert.match(res.body, /<h1>Новая задача<\/h1>/);
    const words = JSON.parse(attribute(res.body, 'data-words')) as Record<string, string>;
    assert.equal(words.newCheckRequired, '{field}: обязательное поле.');
  });
});

describe('GET /v1/models marks library references (x-library)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ worker: false });
  });
  after(() => t.close());

  test('each setting that names a record carries its model and library, from the catalog', async () => {
    const { key } = await t.account();
    const models = (await t.call(key, 'GET', '/v1/models')).json().models as Array<{
      key: string;
      modes: Array<{ name: string; settings_schema: Record<string, unknown> }>;
    }>;
    const schema = (model: string, mode: string, branch?: number) => {
      const found = models.find((m) => m.key === model)?.modes.find((m) => m.name === mode)?.settings_schema;
      const object =
        branch === undefined ? found : ((found?.oneOf ?? []) as Array<Record<string, unknown>>)[branch];
      return object?.properties as Record<string, Record<string, unknown>>;
    };
    assert.deepEqual(schema('voice', 'text_to_dialogue').voice?.['x-library'], {
      model: 'voice',
      library: 'voices',
    });
    assert.deepEqual(schema('voice', 'text_to_dialogue').voice_20?.['x-library'], {
      model: 'voice',
      library: 'voices',
    });
    assert.equal(schema('voice', 'text_to_dialogue').text?.['x-library'], undefined);
    assert.deepEqual(schema('image', 'default').style_id?.['x-library'], {
      model: 'image',
      library: 'styles',
    });
    assert.deepEqual(schema('music-styles', 'default').style?.['x-library'], {
      model: 'music-styles',
      library: 'styles',
    });
    for (const branch of [0, 1]) {
      assert.deepEqual(schema('music', 'generate', branch).persona?.['x-library'], {
        model: 'music',
        library: 'personas',
      });
      assert.deepEqual(schema('music', 'generate', branch).voice?.['x-library'], {
        model: 'music',
        library: 'voices',
      });
      assert.equal(schema('music', 'generate', branch).style?.['x-library'], undefined, 'a free style text');
    }
    const omni = schema('video-omni', 'default');
    assert.deepEqual(((omni.character_ids?.items ?? {}) as Record<string, unknown>)['x-library'], {
      model: 'video-omni',
      library: 'characters',
    });
    assert.deepEqual(((omni.audio_ids?.items ?? {}) as Record<string, unknown>)['x-library'], {
      model: 'video-omni',
      library: 'voices',
    });
    assert.equal(schema('model-3d', 'text_to_model').prompt?.['x-library'], undefined);
  });
});
