/**
 * The libraries pages over `app.inject` (issue 15): every declared kind of every model has its section
 * and a creation form rendered from its body's schema, only the person's own records are listed, names
 * are escaped, records that learn are marked for live polling, the singing voice's steps page shows its
 * phrase, and signed-out visits go to the sign-in page.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { ManualClock } from '../src/lib/clock.ts';
import { type InputResolver, LIBRARIES } from '../src/libraries/index.ts';
import type { TestApp } from './helpers.ts';
import { Browser, buttons, type FakePeople, startWithFakePeople, textOf } from './web-kit.ts';

const file = (name: string): string => `https://files.test/${name}`;
const fakeProbe: InputResolver = async (url) =>
  url.endsWith('.mp4')
    ? { format: 'mp4', sizeBytes: 1000, durationSeconds: 5 }
    : { format: 'mp3', sizeBytes: 1000, durationSeconds: 60 };

describe('dashboard: libraries pages', () => {
  const clock = new ManualClock();
  let t: TestApp;
  let people: FakePeople;
  before(async () => {
    ({ t, people } = await startWithFakePeople({
      clock,
      resolveLibraryInput: fakeProbe,
    }));
  });
  after(() => t.close());

  /** A signed-up person and an API key of their account. */
  async function person(headers: Record<string, string> = {}): Promise<{ browser: Browser; key: string }> {
    const browser = new Browser(t, headers);
    const email = await browser.signUp();
    const accountId = people.persons.get(email)?.accountId;
    assert.ok(accountId);
    const issued = await t.container.services.admin.issueKey(accountId, {
      name: 'test',
      models: null,
      dailyLimitMinor: null,
    });
    return { browser, key: issued.key };
  }

  test('signed-out visits go to /signin', async () => {
    const browser = new Browser(t);
    for (const url of [
      '/libraries',
      '/libraries/image/styles/new',
      '/libraries/music/voices/x',
      '/uploads',
    ]) {
      const res = await browser.get(url);
      assert.equal(res.statusCode, 303, url);
      assert.equal(res.headers.location, `/signin?next=${encodeURIComponent(url)}`);
    }
  });

  test('every declared kind of every model has its section, count, limits and a creation link', async () => {
    const { browser } = await person();
    const res = await browser.get('/libraries');
    assert.equal(res.statusCode, 200);
    for (const decl of LIBRARIES) {
      assert.match(res.body, new RegExp(`<section class="library" id="${decl.model}-${decl.segment}"`));
      assert.ok(res.body.includes(`href="/libraries/${decl.model}/${decl.segment}/new"`), decl.title);
    }
    // Each model by its name and key, as the other pages show models.
    const names = new Map(
      (await t.call((await t.account()).key, 'GET', '/v1/models'))
        .json()
        .models.map((m: { key: string; name: string }) => [m.key, m.name]),
    );
    for (const model of new Set(LIBRARIES.map((d) => d.model)))
      assert.ok(textOf(res.body).includes(`Model ${names.get(model)} (${model})`), model);
    assert.match(textOf(res.body), /Singing voices 0 records/);
    const text = textOf(res.body);
    assert.match(text, /Pictures: jpeg, png, webp, up to 10 MB/, 'limits from the list response');
    assert.match(text, /Records kept: at most 500/, 'a cap from nothing reads as a cap');
    assert.doesNotMatch(text, /from 0 to/);
    assert.match(text, /Piece of the recording, seconds: from 10 to 240/);
    assert.match(text, /Recording of the phrase, seconds: at least 3/);
    assert.match(text, /Description: up to 500 characters/);
    assert.ok(!text.includes('[object Object]'));
  });

  test('a file rule with a longest duration says it, on the list and at the form, in both languages', async () => {
    const { browser } = await person();
    // The list response's limits give the element video's 8 s (max_duration_seconds); the page said only
    // its formats and size, so a 10-second clip looked acceptable until the API refused it.
    assert.match(
      textOf((await browser.get('/libraries')).body),
      /Video: mp4, mov, up to 100 MB, at most 8 s long/,
    );
    const form = textOf((await browser.get('/libraries/video-elements/elements/new')).body);
    assert.match(form, /Video: mp4, mov, up to 100 MB, at most 8 s long/);
    assert.match(form, /Pictures: jpeg, png, webp, up to 10 MB(?!,)/, 'no duration where none is declared');
    await browser.post('/language', { lang: 'ru', next: '/libraries' });
    assert.match(textOf((await browser.get('/libraries')).body), /mp4, mov, до 100 МБ, не длиннее 8 с/);
  });

  test('each creation form has exactly the fields of the declared body, link fields with a picker', async () => {
    const { browser } = await person();
    for (const decl of LIBRARIES) {
      const res = await browser.get(`/libraries/${decl.model}/${decl.segment}/new`);
      assert.equal(res.statusCode, 200, decl.title);
      const json = z.toJSONSchema(decl.body, { io: 'input', unrepresentable: 'any' }) as {
        properties: Record<string, unknown>;
      };
      const named = [...res.body.matchAll(/ name="([a-z_]+)"[^>]*data-type=/g)].map((m) => m[1]);
      assert.deepEqual(named.sort(), Object.keys(json.properties).sort(), decl.title);
      for (const field of Object.keys(decl.files)) {
        assert.ok(res.body.includes(`data-fills="field-${field}"`), `${decl.title}: picker of ${field}`);
      }
      assert.ok(res.body.includes(`data-path="/v1/models/${decl.model}/${decl.segment}"`));
      assert.ok(buttons(res.body).includes('Create record'));
    }
    const elements = await browser.get('/libraries/video-elements/elements/new');
    assert.match(elements.body, /<option value="vehicle">vehicle<\/option>/, 'enums are choices');
    const omni = await browser.get('/libraries/video-omni/voices/new');
    // The ready voices to start from are the only choices, by name: a choice, not a text to guess.
    assert.match(
      omni.body,
      /<select id="field-base_voice_id"[^>]*>(?:(?!<\/select>)[\s\S])*<option value="preset-warm-narrator"[^>]*>Warm narrator \(preset-warm-narrator\)<\/option>/,
      'presets offered as a choice',
    );
    const voice = await browser.get('/libraries/music/voices/new');
    assert.match(voice.body, /data-recorder="field-source_url"/, 'a recording can be made in the browser');
    assert.match(voice.body, /Step 1/);
    const unknown = await browser.get('/libraries/image/nothing/new');
    assert.equal(unknown.statusCode, 404);
  });

  test("only the person's records are listed, names escaped, learning records polled", async () => {
    const me = await person();
    const other = await person();
    const mine = '<b>Ink & "co"</b>';
    const styled = await t.call(me.key, 'POST', '/v1/models/image/styles', {
      name: mine,
      image_urls: [file('i.png')],
    });
    assert.equal(styled.statusCode, 201, styled.body);
    const learning = await t.call(me.key, 'POST', '/v1/models/music-styles/styles', {
      name: 'Slow learner',
      track_urls: [file('t.mp3')],
    });
    assert.equal(learning.statusCode, 201, learning.body);
    const foreign = await t.call(other.key, 'POST', '/v1/models/image/styles', {
      name: 'Foreign style',
      image_urls: [file('i.png')],
    });
    assert.equal(foreign.statusCode, 201);

    const res = await me.browser.get('/libraries');
    assert.ok(res.body.includes('&lt;b>Ink &amp; &quot;co&quot;&lt;/b>'), 'escaped');
    assert.ok(!res.body.includes(mine));
    assert.ok(!res.body.includes('Foreign style'), "another account's record");
    assert.match(textOf(res.body), /Image styles 1 record\b(?!s)/);
    const styleId = (styled.json() as { id: string }).id;
    const learningId = (learning.json() as { id: string }).id;
    const row = (id: string) => new RegExp(`<tr id="record-${id}"[^>]*>`).exec(res.body)?.[0] ?? '';
    assert.ok(!row(styleId).includes('data-poll'), 'a ready record is not polled');
    assert.match(row(learningId), /data-poll="training"/);
    assert.match(row(learningId), /data-record="\/v1\/models\/music-styles\/styles\//);
    assert.match(res.body, /data-state="training">Learning</);
    assert.match(res.body, new RegExp(`data-delete="/v1/models/image/styles/${styleId}"`));

    const theirs = await other.browser.get('/libraries');
    assert.ok(theirs.body.includes('Foreign style'));
    assert.ok(!theirs.body.includes('Ink &amp;'));
  });

  test("the singing voice's page: processing is polled, then the phrase and step 2; others get 404", async () => {
    const me = await person();
    const created = await t.call(me.key, 'POST', '/v1/models/music/voices', {
      source_url: file('song.mp3'),
      start_seconds: 5,
      end_seconds: 35,
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = (created.json() as { id: string }).id;
    const first = await me.browser.get(`/libraries/music/voices/${id}`);
    assert.equal(first.statusCode, 200);
    assert.match(first.body, /data-status="processing"/);
    assert.match(first.body, /data-poll="processing verifying"/);
    assert.ok(!first.body.includes('class="phrase"'));

    clock.advance(31 * 60_000);
    const second = await me.browser.get(`/libraries/music/voices/${id}`);
    assert.match(second.body, /data-status="pending_recording"/);
    const phrase = (await (await t.call(me.key, 'GET', `/v1/models/music/voices/${id}`)).json()) as {
      phrase: string;
    };
    assert.ok(phrase.phrase);
    assert.ok(textOf(second.body).includes(phrase.phrase), 'the phrase is shown');
    assert.ok(second.body.includes(`data-path="/v1/models/music/voices/${id}/verify"`));
    assert.match(second.body, /name="recording_url" data-type="link"/);
    assert.match(second.body, /data-recorder="field-recording_url"/);
    assert.ok(buttons(second.body).includes('Verify the voice'));

    const other = await person();
    const refused = await other.browser.get(`/libraries/music/voices/${id}`);
    assert.equal(refused.statusCode, 404);
    assert.ok(!refused.body.includes(phrase.phrase));
  });

  test("an element's cover shows as a picture, or as a video where the element is one", async () => {
    const { browser, key } = await person();
    const made = await Promise.all([
      t.call(key, 'POST', '/v1/models/video-elements/elements', {
        name: 'Still',
        tag: 'object',
        image_urls: [file('front.png')],
      }),
      t.call(key, 'POST', '/v1/models/video-elements/elements', {
        name: 'Moving',
        tag: 'character',
        video_url: file('turn.mp4'),
      }),
    ]);
    for (const res of made) assert.equal(res.statusCode, 201, res.body);
    const [still, moving] = made.map((res) => (res.json() as { id: string }).id);
    const page = await browser.get('/libraries');
    const row = (id: string | undefined) =>
      new RegExp(`<tr id="record-${id}"[^>]*>\\s*<td class="cover">(.*?)</td>`, 's');
    const cover = (id: string | undefined) => row(id).exec(page.body)?.[1] ?? '';
    assert.match(cover(still), /^<img src="https:\/\/files\.test\/front\.png"/);
    // An <img> of a video is a broken picture.
    assert.match(cover(moving), /^<video src="https:\/\/files\.test\/turn\.mp4" muted playsinline/);
  });

  test('a record of a kind without steps is its row on the list, whatever the id in the link', async () => {
    const { browser } = await person();
    const plain = await browser.get('/libraries/image/styles/abc');
    assert.deepEqual([plain.statusCode, plain.headers.location], [303, '/libraries#record-abc']);
    // A line break or a letter outside Latin-1 in the link is never written raw into Location (a 500).
    for (const id of ['x%0d%0aSet-Cookie:%20a=b', '%D0%BA']) {
      const res = await browser.get(`/libraries/image/styles/${id}`);
      assert.equal(res.statusCode, 303, id);
      assert.equal(res.headers.location, `/libraries#record-${encodeURIComponent(decodeURIComponent(id))}`);
      assert.equal(res.headers['set-cookie'], undefined);
    }
  });

  test("a failed singing voice shows the generator's reason and offers a new phrase", async () => {
    const me = await person();
    const created = await t.call(me.key, 'POST', '/v1/models/music/voices', {
      source_url: file('song.mp3'),
      start_seconds: 0,
      end_seconds: 20,
    });
    const id = (created.json() as { id: string }).id;
    clock.advance(31 * 60_000);
    assert.equal(
      (await t.call(me.key, 'GET', `/v1/models/music/voices/${id}`)).json().status,
      'pending_recording',
    );
    const verified = await t.call(me.key, 'POST', `/v1/models/music/voices/${id}/verify`, {
      recording_url: file('phrase.mp3'),
      name: 'Nope [sim:fail]',
    });
    assert.equal(verified.statusCode, 200, verified.body);
    clock.advance(31 * 60_000);
    const res = await me.browser.get(`/libraries/music/voices/${id}`);
    assert.match(res.body, /data-status="failed"/);
    assert.ok(!res.body.includes('data-poll'), 'a final state is not polled');
    assert.match(textOf(res.body), /The generator said: .+/);
    assert.ok(res.body.includes(`data-path="/v1/models/music/voices/${id}/retry"`));
    assert.ok(buttons(res.body).includes('Get a new phrase'));
    const list = await me.browser.get('/libraries');
    assert.match(list.body, /data-state="failed">Failed</);
  });

  test('the pages speak Russian', async () => {
    const { browser } = await person({ 'accept-language': 'ru' });
    await browser.post('/language', { lang: 'ru', next: '/libraries' });
    const res = await browser.get('/libraries');
    const text = textOf(res.body);
    assert.match(text, /Певческие голоса/);
    assert.match(text, /Модель Песни и звуки \(music\)/);
    assert.match(text, /Новая запись/);
    // A limit the declaration writes as a sentence has Russian words too.
    assert.match(text, /Язык пения: код ISO 639-1, по умолчанию en/);
    for (const decl of LIBRARIES) {
      for (const [key, value] of Object.entries(decl.limits ?? {})) {
        if (typeof value === 'string')
          assert.doesNotMatch(text, new RegExp(`: ${value}`), `${key} in English`);
      }
    }
    const form = await browser.get('/libraries/image/styles/new');
    assert.ok(buttons(form.body).includes('Создать запись'));
    assert.match(textOf(form.body), /Изображения/);
  });
});
