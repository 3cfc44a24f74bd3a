import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type LibraryGenerator, LibraryRejected, type SettleAnswer } from '../src/generators/index.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { uuidv7 } from '../src/lib/index.ts';
import { type InputResolver, MAX_RECORDS_PER_LIBRARY } from '../src/libraries/index.ts';
import { stepAsker } from '../src/libraries/polled-steps.ts';
import { listRecords, toRow } from '../src/libraries/records.ts';
import { errorOf, expectError, startTestApp, type TestApp, waitForFinal } from './helpers.ts';

const file = (name: string): string => `https://files.test/${name}`;
/** Fake media probe: lengths by file name (CONTRACT §7 checks need them); 30 s otherwise. */
const LENGTHS: Record<string, number> = { 'song.mp3': 60, 'short.mp3': 2, 'a.mp4': 5 };
const fakeProbe: InputResolver = async (url) => ({
  format: 'mp3',
  sizeBytes: 1000,
  durationSeconds: LENGTHS[new URL(url).pathname.split('/').pop() ?? ''] ?? 30,
});

interface Case {
  path: string;
  list: string;
  body: Record<string, unknown>;
  /** The body with a simulator marker in a name-like field. */
  marked: (marker: string) => Record<string, unknown>;
  name: string | null;
  status?: string;
}

const CASES: Case[] = [
  {
    path: '/v1/models/video-elements/elements',
    list: 'elements',
    body: { name: 'Hero', tag: 'character', image_urls: [file('a.png')] },
    marked: (m) => ({ name: `Hero ${m}`, tag: 'character', image_urls: [file('a.png')] }),
    name: 'Hero',
  },
  {
    path: '/v1/models/music/voices',
    list: 'voices',
    body: { source_url: file('song.mp3'), start_seconds: 5, end_seconds: 35 },
    marked: (m) => ({ source_url: `${file('song.mp3')}?note=${m}`, start_seconds: 5, end_seconds: 35 }),
    name: null,
    status: 'processing',
  },
  {
    path: '/v1/models/voice/voices',
    list: 'voices',
    body: { name: 'My voice', sample_urls: [file('s1.mp3'), file('s2.mp3')] },
    marked: (m) => ({ name: m, sample_urls: [file('s1.mp3')] }),
    name: 'My voice',
    status: 'ready',
  },
  {
    path: '/v1/models/image/styles',
    list: 'styles',
    body: { name: 'Ink', image_urls: [file('i.png')] },
    marked: (m) => ({ name: m, image_urls: [file('i.png')] }),
    name: 'Ink',
    status: 'ready',
  },
  {
    path: '/v1/models/music-styles/styles',
    list: 'styles',
    body: { name: 'Mine', track_urls: [file('t.mp3')] },
    marked: (m) => ({ name: m, track_urls: [file('t.mp3')] }),
    name: 'Mine',
    status: 'training',
  },
  {
    path: '/v1/models/video-omni/characters',
    list: 'characters',
    body: { name: 'Ann', portrait_url: file('p.png'), full_body_url: [file('f.png')] },
    marked: (m) => ({ name: m, portrait_url: file('p.png'), full_body_url: file('f.png') }),
    name: 'Ann',
    status: 'ready',
  },
  {
    path: '/v1/models/video-omni/voices',
    list: 'voices',
    body: { name: 'Narrator', base_voice_id: 'preset-warm-narrator', sample_urls: [file('v.mp3')] },
    marked: (m) => ({ name: m, base_voice_id: 'preset-warm-narrator', sample_urls: [file('v.mp3')] }),
    name: 'Narrator',
    status: 'ready',
  },
];

describe('libraries (CONTRACT §7)', () => {
  const clock = new ManualClock();
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ clock, resolveLibraryInput: fakeProbe });
  });
  after(() => t.close());

  for (const c of CASES) {
    describe(c.path, () => {
      test('create 201, list with limits, get, delete 204, then 404 and gone', async () => {
        const a = await t.account();
        const created = await t.call(a.key, 'POST', c.path, c.body);
        assert.equal(created.statusCode, 201, created.body);
        const record = created.json();
        assert.equal(created.headers.location, `${c.path}/${record.id}`);
        assert.equal(record.name, c.name);
        assert.equal(record.status, c.status);
        assert.match(record.created_at, /Z$/);
        const list = (await t.call(a.key, 'GET', c.path)).json();
        assert.deepEqual(
          list[c.list].map((r: { id: string }) => r.id),
          [record.id],
        );
        assert.ok(Object.keys(list.limits).length > 0, 'limits shown');
        const got = await t.call(a.key, 'GET', `${c.path}/${record.id}`);
        assert.equal(got.statusCode, 200);
        assert.equal(got.json().id, record.id);
        const deleted = await t.call(a.key, 'DELETE', `${c.path}/${record.id}`);
        assert.equal(deleted.statusCode, 204);
        assert.equal(deleted.body, '');
        expectError(await t.call(a.key, 'GET', `${c.path}/${record.id}`), 404, 'record_not_found');
        expectError(await t.call(a.key, 'DELETE', `${c.path}/${record.id}`), 404, 'record_not_found');
        assert.deepEqual((await t.call(a.key, 'GET', c.path)).json()[c.list], []);
      });

      test('DELETE twice at once: one 204, the others 404 record_not_found, as one after the other', async () => {
        const a = await t.account();
        const record = (await t.call(a.key, 'POST', c.path, c.body)).json();
        const answers = await Promise.all(
          Array.from({ length: 4 }, () => t.call(a.key, 'DELETE', `${c.path}/${record.id}`)),
        );
        assert.deepEqual(answers.map((r) => r.statusCode).sort(), [204, 404, 404, 404]);
        for (const r of answers.filter((r) => r.statusCode === 404)) expectError(r, 404, 'record_not_found');
      });

      test("another account's record: 404 and not listed; newest first; shared by the account's keys", async () => {
        const a = await t.account();
        const b = await t.account();
        const first = (await t.call(a.key, 'POST', c.path, c.body)).json();
        clock.advance(1);
        const second = (await t.call(a.key, 'POST', c.path, c.marked('second'))).json();
        expectError(await t.call(b.key, 'GET', `${c.path}/${first.id}`), 404, 'record_not_found');
        expectError(await t.call(b.key, 'DELETE', `${c.path}/${first.id}`), 404, 'record_not_found');
        assert.deepEqual((await t.call(b.key, 'GET', c.path)).json()[c.list], []);
        const otherKey = (await t.admin('POST', `/admin/v1/accounts/${a.id}/keys`, {})).json().key;
        const list = (await t.call(otherKey, 'GET', c.path)).json()[c.list];
        assert.deepEqual(
          list.map((r: { id: string }) => r.id),
          [second.id, first.id],
        );
      });

      test('Idempotency-Key: replay gives the same record; another body 409', async () => {
        const a = await t.account();
        const headers = { 'idempotency-key': 'lib-1' };
        const first = await t.call(a.key, 'POST', c.path, c.body, headers);
        const again = await t.call(a.key, 'POST', c.path, c.body, headers);
        assert.equal(again.statusCode, 201);
        assert.equal(again.headers['idempotent-replayed'], 'true');
        assert.equal(again.json().id, first.json().id);
        assert.equal((await t.call(a.key, 'GET', c.path)).json()[c.list].length, 1);
        const other = c.marked('other');
        expectError(await t.call(a.key, 'POST', c.path, other, headers), 409, 'idempotency_conflict');
      });

      test('unknown field: 422 invalid_request naming it; [sim:unavailable]: 503, nothing created', async () => {
        const a = await t.account();
        const bad = await t.call(a.key, 'POST', c.path, { ...c.body, colour: 'red' });
        expectError(bad, 422, 'invalid_request');
        assert.match(errorOf(bad).message, /colour/);
        const down = await t.call(a.key, 'POST', c.path, c.marked('[sim:unavailable]'));
        expectError(down, 503, 'sg_unavailable');
        assert.ok(Number(down.headers['retry-after']) > 0);
        assert.deepEqual((await t.call(a.key, 'GET', c.path)).json()[c.list], []);
      });

      test('a key restricted to other models: 403 model_not_allowed_for_key', async () => {
        const a = await t.account({ models: ['model-3d'] });
        expectError(await t.call(a.key, 'GET', c.path), 403, 'model_not_allowed_for_key');
        expectError(await t.call(a.key, 'POST', c.path, c.body), 403, 'model_not_allowed_for_key');
        // The model decides before the body: a body the model would refuse is still 403 for this key.
        expectError(await t.call(a.key, 'POST', c.path, {}), 403, 'model_not_allowed_for_key');
      });
    });
  }

  test('a library path on a model without that library: 404 not_found', async () => {
    const a = await t.account();
    for (const path of ['/v1/models/video-elements/personas', '/v1/models/image/voices']) {
      expectError(await t.call(a.key, 'GET', path), 404, 'not_found');
    }
  });

  test('a library path under an unknown model key: 404 model_not_found (reference)', async () => {
    const a = await t.account();
    for (const [method, path] of [
      ['GET', '/v1/models/nope/styles'],
      ['POST', '/v1/models/nope/elements'],
      ['DELETE', '/v1/models/nope/elements/0190d5f0-0000-7000-8000-000000000000'],
    ] as const) {
      expectError(
        await t.call(a.key, method, path, method === 'POST' ? {} : undefined),
        404,
        'model_not_found',
      );
    }
  });

  test(`at most ${MAX_RECORDS_PER_LIBRARY} live records per library: one more is 409 too_many_records, also when racing`, async () => {
    const a = await t.account();
    const path = '/v1/models/image/styles';
    const body = { name: 'Ink', image_urls: [file('i.png')] };
    const first = (await t.call(a.key, 'POST', path, body)).json();
    // Fill the library up to two places short of the bound without asking the generator 500 times.
    const db = t.container.db.db;
    const row = await db
      .selectFrom('library_records')
      .selectAll()
      .where('id', '=', first.id)
      .executeTakeFirstOrThrow();
    const copies = Array.from({ length: MAX_RECORDS_PER_LIBRARY - 3 }, (_, i) => ({
      ...row,
      id: `${first.id}-${i}`,
    }));
    for (let i = 0; i < copies.length; i += 100) {
      await db
        .insertInto('library_records')
        .values(copies.slice(i, i + 100))
        .execute();
    }
    // Three creations at once for the last two places: exactly two are made.
    const raced = await Promise.all([1, 2, 3].map(() => t.call(a.key, 'POST', path, body)));
    assert.deepEqual(raced.map((r) => r.statusCode).sort(), [201, 201, 409]);
    expectError(raced.find((r) => r.statusCode === 409)!, 409, 'too_many_records');
    const list = (await t.call(a.key, 'GET', path)).json();
    assert.equal(list.styles.length, MAX_RECORDS_PER_LIBRARY);
    assert.deepEqual(list.limits.records, { min: 0, max: MAX_RECORDS_PER_LIBRARY });
    // Refused before the generator is asked: a marker that would make it answer 503 does not.
    const full = await t.call(a.key, 'POST', path, { ...body, name: 'Ink [sim:unavailable]' });
    expectError(full, 409, 'too_many_records');
    assert.match(errorOf(full).message, new RegExp(String(MAX_RECORDS_PER_LIBRARY)));
    // Another library of the account and another account's library are not affected.
    const voice = { name: 'v', sample_urls: [file('s.mp3')] };
    assert.equal((await t.call(a.key, 'POST', '/v1/models/voice/voices', voice)).statusCode, 201);
    const b = await t.account();
    assert.equal((await t.call(b.key, 'POST', path, body)).statusCode, 201);
    // A deletion frees a place.
    assert.equal((await t.call(a.key, 'DELETE', `${path}/${first.id}`)).statusCode, 204);
    assert.equal((await t.call(a.key, 'POST', path, body)).statusCode, 201);
    expectError(await t.call(a.key, 'POST', path, body), 409, 'too_many_records');
  });

  test('a list asks due provider steps a few at a time within one budget, not one wait per record', async () => {
    const a = await t.account();
    const query = { accountId: a.id, model: 'music-styles', library: 'styles' };
    const due = new Date(clock.now().getTime() - 1000).toISOString();
    for (let i = 0; i < 8; i++) {
      const at = new Date(clock.now().getTime() - 10_000 + i).toISOString();
      await t.container.db.db
        .insertInto('library_records')
        .values(
          toRow({
            id: uuidv7(),
            accountId: a.id,
            model: 'music-styles',
            library: 'styles',
            name: `Tune ${i}`,
            status: 'training',
            data: { description: null },
            private: {
              next: { status: 'ready' },
              poll: { step: 'create', upstreamId: `ft-${i}`, pollMs: 5_000 },
              upstream_id: `ft-${i}`,
            },
            uniqueKey: null,
            error: null,
            createdAt: at,
            updatedAt: at,
            readyAt: due,
            deletedAt: null,
          }),
        )
        .execute();
    }
    // A provider that never answers: the list waits for its budget once, then shows the records as they are.
    let asked = 0;
    const hanging = stepAsker(
      async () =>
        ({
          settle: (_request: unknown, signal: AbortSignal) => {
            asked += 1;
            return new Promise<SettleAnswer>((_resolve, reject) =>
              signal.addEventListener('abort', () => reject(signal.reason)),
            );
          },
        }) as unknown as LibraryGenerator,
    );
    const started = Date.now();
    const waited = await listRecords(t.container.db, query, clock.now(), hanging, 300);
    const took = Date.now() - started;
    assert.ok(took < 2_000, `the list took ${took} ms`);
    assert.equal(asked, 4, 'the first few were asked, the rest not once the budget was spent');
    assert.deepEqual(
      waited.map((r) => [r.name, r.status]),
      [7, 6, 5, 4, 3, 2, 1, 0].map((i) => [`Tune ${i}`, 'training']),
    );
    // A provider that answers: every due step is settled and the order stays newest first.
    const answering = stepAsker(
      async () =>
        ({ settle: async () => ({ state: 'done' }) as SettleAnswer }) as unknown as LibraryGenerator,
    );
    const settledList = await listRecords(t.container.db, query, clock.now(), answering);
    assert.deepEqual(
      settledList.map((r) => [r.name, r.status]),
      [7, 6, 5, 4, 3, 2, 1, 0].map((i) => [`Tune ${i}`, 'ready']),
    );
    const stored = (await t.call(a.key, 'GET', '/v1/models/music-styles/styles')).json().styles;
    assert.deepEqual(
      stored.map((r: { status: string }) => r.status),
      Array(8).fill('ready'),
    );
  });

  describe('elements', () => {
    const path = '/v1/models/video-elements/elements';
    test('record shape, tags with views and limits in the list', async () => {
      const a = await t.account();
      const images = [file('front.png'), file('side.png')];
      const el = (
        await t.call(a.key, 'POST', path, { name: 'Cat', tag: 'animal', image_urls: images })
      ).json();
      assert.deepEqual(Object.keys(el).sort(), [
        'cover_url',
        'created_at',
        'description',
        'id',
        'label',
        'name',
        'tag',
        'type',
      ]);
      assert.equal(el.label, `Element_${el.id}`);
      assert.equal(el.type, 'image');
      assert.equal(el.cover_url, images[0]);
      const list = (await t.call(a.key, 'GET', path)).json();
      const character = list.tags.find((tag: { key: string }) => tag.key === 'character');
      assert.deepEqual(Object.keys(character).sort(), ['key', 'name', 'views']);
      assert.ok(character.views.length > 1);
      assert.deepEqual(list.limits.image_urls, { min_items: 1, max_items: 4 });
      assert.ok(list.limits.name.max_length > 0 && list.limits.description.max_length > 0);
      assert.ok(list.limits.accepted_files.image_urls.formats.includes('png'));
    });

    test('video_url: a string or a one-item list, only with tag character', async () => {
      const a = await t.account();
      const video = await t.call(a.key, 'POST', path, {
        name: 'Ann',
        tag: 'character',
        video_url: [file('a.mp4')],
      });
      assert.equal(video.statusCode, 201, video.body);
      assert.equal(video.json().type, 'video');
      const rules: Array<[Record<string, unknown>, RegExp]> = [
        [{ name: 'Box', tag: 'object', video_url: file('b.mp4') }, /video_url/],
        [{ name: 'Box', tag: 'object' }, /image_urls/],
        [
          { name: 'Box', tag: 'character', image_urls: [file('x.png')], video_url: file('b.mp4') },
          /image_urls/,
        ],
        [{ name: 'Box', tag: 'character', video_url: [file('a.mp4'), file('b.mp4')] }, /video_url/],
        [
          { name: 'Box', tag: 'object', image_urls: Array.from({ length: 5 }, (_, i) => file(`${i}.png`)) },
          /image_urls/,
        ],
        [{ name: 'Box', tag: 'object', image_urls: ['ftp://files.test/a.png'] }, /image_urls/],
        [{ name: 'x'.repeat(101), tag: 'object', image_urls: [file('a.png')] }, /name/],
        // Only invisible characters: zero-width space, word joiner, BOM around spaces.
        [{ name: '\u200b', tag: 'object', image_urls: [file('a.png')] }, /name: Must contain a visible/],
        [{ name: ' \u2060\ufeff\u200d ', tag: 'object', image_urls: [file('a.png')] }, /name/],
        [{ name: 'Box', tag: 'spaceship', image_urls: [file('a.png')] }, /tag/],
        [{ tag: 'object', image_urls: [file('a.png')] }, /name/],
      ];
      for (const [body, field] of rules) {
        const res = await t.call(a.key, 'POST', path, body);
        expectError(res, 422, 'invalid_request');
        assert.match(errorOf(res).message, field, JSON.stringify(body));
      }
    });

    test('409 element_name_taken per person (case-insensitive), freed by delete; 502 element_create_failed', async () => {
      const a = await t.account();
      const b = await t.account();
      const body = { name: 'Red Car', tag: 'vehicle', image_urls: [file('car.png')] };
      const first = (await t.call(a.key, 'POST', path, body)).json();
      expectError(
        await t.call(a.key, 'POST', path, { ...body, name: ' red car ' }),
        409,
        'element_name_taken',
      );
      // Invisible format characters and runs of spaces do not make another name.
      for (const name of ['Red Car\u200b', '\u2060Red Car', 'Red \u00adCar', 'Red  Car', 'Red\u3000Car'])
        expectError(await t.call(a.key, 'POST', path, { ...body, name }), 409, 'element_name_taken');
      // Names that look the same are the same: composed and decomposed é, full-width letters.
      const cafe = (await t.call(a.key, 'POST', path, { ...body, name: 'Caf\u00e9' })).json();
      for (const name of ['Cafe\u0301', 'ＣＡＦÉ'])
        expectError(await t.call(a.key, 'POST', path, { ...body, name }), 409, 'element_name_taken');
      await t.call(a.key, 'DELETE', `${path}/${cafe.id}`);
      assert.equal((await t.call(b.key, 'POST', path, body)).statusCode, 201, 'names are per person');
      await t.call(a.key, 'DELETE', `${path}/${first.id}`);
      assert.equal((await t.call(a.key, 'POST', path, body)).statusCode, 201);
      const failed = await t.call(a.key, 'POST', path, { ...body, name: 'Ghost', description: '[sim:fail]' });
      expectError(failed, 502, 'element_create_failed');
      assert.equal((await t.call(a.key, 'GET', path)).json().elements.length, 1);
    });
  });

  describe('singing voices of music', () => {
    const path = '/v1/models/music/voices';
    const create = async (key: string, body: Record<string, unknown> = {}): Promise<string> => {
      const res = await t.call(key, 'POST', path, {
        source_url: file('song.mp3'),
        start_seconds: 0,
        end_seconds: 20,
        ...body,
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id;
    };
    const get = async (key: string, id: string): Promise<Record<string, unknown>> =>
      (await t.call(key, 'GET', `${path}/${id}`)).json();

    test('processing → pending_recording (phrase) → verifying → ready with the name', async () => {
      const a = await t.account();
      const id = await create(a.key, { language: 'ru' });
      const fresh = await get(a.key, id);
      assert.equal(fresh.status, 'processing');
      assert.equal(fresh.name, null);
      assert.equal(fresh.language, 'ru');
      assert.equal(fresh.phrase, undefined);
      expectError(
        await t.call(a.key, 'POST', `${path}/${id}/verify`, { recording_url: file('rec.mp3'), name: 'Me' }),
        409,
        'voice_not_verifiable',
      );
      clock.advance(60_000);
      const pending = await get(a.key, id);
      assert.equal(pending.status, 'pending_recording');
      assert.equal(typeof pending.phrase, 'string');
      assert.ok(String(pending.phrase).length > 10);
      const listed = (await t.call(a.key, 'GET', path)).json();
      assert.equal(listed.voices[0].status, 'pending_recording');
      assert.deepEqual(listed.limits.piece_seconds, { min: 10, max: 240 });
      expectError(await t.call(a.key, 'POST', `${path}/${id}/retry`), 409, 'voice_not_retryable');
      const verifying = await t.call(a.key, 'POST', `${path}/${id}/verify`, {
        recording_url: [file('rec.mp3')],
        name: 'My singing',
      });
      assert.equal(verifying.statusCode, 200, verifying.body);
      assert.equal(verifying.json().status, 'verifying');
      assert.equal(verifying.json().name, null);
      assert.equal(verifying.json().phrase, undefined);
      expectError(
        await t.call(a.key, 'POST', `${path}/${id}/verify`, { recording_url: file('rec.mp3'), name: 'Me' }),
        409,
        'voice_not_verifiable',
      );
      clock.advance(60_000);
      const ready = await get(a.key, id);
      assert.equal(ready.status, 'ready');
      assert.equal(ready.name, 'My singing');
      expectError(await t.call(a.key, 'POST', `${path}/${id}/retry`), 409, 'voice_not_retryable');
    });

    test('failed check ([sim:fail] name, recording under 3 s) → retry issues a new phrase', async () => {
      const a = await t.account();
      for (const [recording, name, reason] of [
        [file('rec.mp3'), 'Me [sim:fail]', /simulated/],
        [file('short.mp3'), 'Me', /3 seconds/],
      ] as const) {
        const id = await create(a.key);
        clock.advance(60_000);
        const phrase = (await get(a.key, id)).phrase;
        await t.call(a.key, 'POST', `${path}/${id}/verify`, { recording_url: recording, name });
        clock.advance(60_000);
        const failed = await get(a.key, id);
        assert.equal(failed.status, 'failed');
        assert.match(String(failed.error), reason);
        assert.equal(failed.name, null);
        const retried = await t.call(a.key, 'POST', `${path}/${id}/retry`);
        assert.equal(retried.statusCode, 200, retried.body);
        assert.equal(retried.json().status, 'pending_recording');
        assert.equal(retried.json().error, undefined);
        assert.notEqual(retried.json().phrase, phrase);
      }
    });

    test('a piece of exactly 10 s is accepted, however its bounds subtract in floating point', async () => {
      // 16.08 - 6.08 is 9.999999999999998 in binary floating point.
      const a = await t.account();
      await create(a.key, { start_seconds: 6.08, end_seconds: 16.08 });
    });

    test('piece of 10 to 240 s within the file, ISO 639-1 language; verify and retry of others: 404', async () => {
      const a = await t.account();
      for (const [body, field] of [
        [{ start_seconds: 0, end_seconds: 5 }, /end_seconds/],
        [{ start_seconds: 0, end_seconds: 241, source_url: file('long.mp3') }, /end_seconds/],
        [{ start_seconds: 40, end_seconds: 70 }, /end_seconds/],
        [{ language: 'xx' }, /language/],
        [{ language: 'english' }, /language/],
      ] as const) {
        const res = await t.call(a.key, 'POST', path, {
          source_url: file('song.mp3'),
          start_seconds: 0,
          end_seconds: 20,
          ...body,
        });
        expectError(res, 422, 'invalid_request');
        assert.match(errorOf(res).message, field, JSON.stringify(body));
      }
      const id = await create(a.key);
      const b = await t.account();
      const verify = { recording_url: file('rec.mp3'), name: 'Me' };
      expectError(await t.call(b.key, 'POST', `${path}/${id}/verify`, verify), 404, 'record_not_found');
      expectError(await t.call(b.key, 'POST', `${path}/${id}/retry`), 404, 'record_not_found');
      // A key of the owner restricted to other models: 403 before the body is looked at.
      const issued = await t.admin('POST', `/admin/v1/accounts/${a.id}/keys`, { models: ['model-3d'] });
      const restricted = issued.json().key as string;
      for (const body of [verify, {}]) {
        expectError(
          await t.call(restricted, 'POST', `${path}/${id}/verify`, body),
          403,
          'model_not_allowed_for_key',
        );
      }
      expectError(await t.call(restricted, 'POST', `${path}/${id}/retry`), 403, 'model_not_allowed_for_key');
      clock.advance(60_000);
      const down = await t.call(a.key, 'POST', `${path}/${id}/verify`, {
        ...verify,
        name: '[sim:unavailable]',
      });
      expectError(down, 503, 'sg_unavailable');
      assert.equal((await get(a.key, id)).status, 'pending_recording');
    });

    test('the generator refusing a verify or a retry: 502 library_create_failed, as documented', async () => {
      // As a provider channel may (Suno): the answers must match the OpenAPI document (test helpers).
      const a = await t.account();
      const id = await create(a.key);
      clock.advance(60_000);
      const generator = t.container.services.libraries.deps.generator;
      const { checkRecording, issuePhrase } = generator;
      generator.checkRecording = async () => {
        throw new LibraryRejected('the recording was refused');
      };
      generator.issuePhrase = async () => {
        throw new LibraryRejected('no new phrase');
      };
      try {
        const verify = { recording_url: file('rec.mp3'), name: 'Me' };
        const refused = await t.call(a.key, 'POST', `${path}/${id}/verify`, verify);
        expectError(refused, 502, 'library_create_failed');
        assert.equal(refused.headers['retry-after'], '60');
        assert.equal((await get(a.key, id)).status, 'pending_recording');
        generator.checkRecording = checkRecording;
        await t.call(a.key, 'POST', `${path}/${id}/verify`, { ...verify, name: 'Me [sim:fail]' });
        clock.advance(60_000);
        assert.equal((await get(a.key, id)).status, 'failed');
        const again = await t.call(a.key, 'POST', `${path}/${id}/retry`);
        expectError(again, 502, 'library_create_failed');
        assert.equal(again.headers['retry-after'], '60');
        assert.equal((await get(a.key, id)).status, 'failed');
      } finally {
        generator.checkRecording = checkRecording;
        generator.issuePhrase = issuePhrase;
      }
    });
  });

  describe('music styles', () => {
    const path = '/v1/models/music-styles/styles';
    test('training → ready after the training time; [sim:fail] → failed with error', async () => {
      const a = await t.account();
      const style = (await t.call(a.key, 'POST', path, { name: 'Mine', track_urls: [file('t.mp3')] })).json();
      const bad = (
        await t.call(a.key, 'POST', path, { name: 'Bad [sim:fail]', track_urls: [file('t.mp3')] })
      ).json();
      assert.equal(style.status, 'training');
      assert.equal(bad.status, 'training');
      clock.advance(100); // SIM_SPEED 1000: 7 minutes take 420 ms
      assert.equal((await t.call(a.key, 'GET', `${path}/${style.id}`)).json().status, 'training');
      clock.advance(1_000);
      assert.equal((await t.call(a.key, 'GET', `${path}/${style.id}`)).json().status, 'ready');
      const list = (await t.call(a.key, 'GET', path)).json();
      const failed = list.styles.find((s: { id: string }) => s.id === bad.id);
      assert.equal(failed.status, 'failed');
      assert.equal(typeof failed.error, 'string');
      assert.deepEqual(list.limits.track_urls, { min_items: 1, max_items: 10 });
      const tooMany = Array.from({ length: 11 }, (_, i) => file(`${i}.mp3`));
      const res = await t.call(a.key, 'POST', path, { name: 'Many', track_urls: tooMany });
      expectError(res, 422, 'invalid_request');
      assert.match(errorOf(res).message, /track_urls/);
    });
  });

  describe('other libraries', () => {
    test('502 library_create_failed, defaults, types and presets', async () => {
      const a = await t.account();
      const failed = await t.call(a.key, 'POST', '/v1/models/voice/voices', {
        name: 'Broken [sim:fail]',
        sample_urls: [file('s.mp3')],
      });
      expectError(failed, 502, 'library_create_failed');
      const cloned = (
        await t.call(a.key, 'POST', '/v1/models/voice/voices', { name: 'V', sample_urls: [file('s.mp3')] })
      ).json();
      assert.equal(cloned.remove_background_noise, false);
      const raster = await t.call(a.key, 'POST', '/v1/models/image/styles', {
        name: 'R',
        image_urls: [file('a.png')],
      });
      assert.equal(raster.json().type, 'raster');
      const vector = { name: 'V', image_urls: [file('a.png')], type: 'vector' };
      assert.equal((await t.call(a.key, 'POST', '/v1/models/image/styles', vector)).json().type, 'vector');
      expectError(
        await t.call(a.key, 'POST', '/v1/models/image/styles', { ...vector, type: 'svg' }),
        422,
        'invalid_request',
      );
      const omni = (await t.call(a.key, 'GET', '/v1/models/video-omni/voices')).json();
      assert.ok(
        omni.presets.length > 0 && omni.presets.every((p: { status: string }) => p.status === 'ready'),
      );
      const unknownBase = await t.call(a.key, 'POST', '/v1/models/video-omni/voices', {
        name: 'N',
        base_voice_id: 'nope',
        sample_urls: [file('v.mp3')],
      });
      expectError(unknownBase, 422, 'invalid_request');
      assert.match(errorOf(unknownBase).message, /base_voice_id/);
      const fourSamples = Array.from({ length: 4 }, (_, i) => file(`${i}.mp3`));
      expectError(
        await t.call(a.key, 'POST', '/v1/models/video-omni/voices', {
          name: 'N',
          base_voice_id: omni.presets[0].id,
          sample_urls: fourSamples,
        }),
        422,
        'invalid_request',
      );
      // A switched-off model takes no new records (its generator is off), but lists them.
      assert.equal((await t.admin('PATCH', '/admin/v1/models/image', { available: false })).statusCode, 200);
      expectError(await t.call(a.key, 'POST', '/v1/models/image/styles', vector), 503, 'model_unavailable');
      assert.equal((await t.call(a.key, 'GET', '/v1/models/image/styles')).json().styles.length, 2);
      await t.admin('PATCH', '/admin/v1/models/image', { available: true });
      const noBody = await t.call(a.key, 'POST', '/v1/models/video-omni/characters', {
        name: 'C',
        portrait_url: file('p.png'),
      });
      expectError(noBody, 422, 'invalid_request');
      assert.match(errorOf(noBody).message, /full_body_url/);
    });
  });
});

describe('singing personas (reference "Singing personas")', () => {
  const path = '/v1/models/music/personas';
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const song = {
    model: 'music',
    settings: {
      mode: 'generate',
      customMode: true,
      title: 'Morning Tram',
      style: 'indie pop',
      prompt: 'The tram bell rings at dawn',
      duration: 10,
    },
  };
  const sounds = { model: 'music', settings: { mode: 'sounds', soundDescription: 'rain on a tin roof' } };
  const finished = async (key: string, body: unknown): Promise<string> => {
    const created = await t.call(key, 'POST', '/v1/tasks', body);
    assert.equal(created.statusCode, 202, created.body);
    const done = await waitForFinal(t, key, created.json().id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    return created.json().id;
  };

  test('from a song version: 201 with song_title; 409 persona_exists; limits; delete frees the version', async () => {
    const a = await t.account({ balanceMinor: 100_000 });
    const taskId = await finished(a.key, song);
    const body = { source_task_id: taskId, index: 0, name: 'Tram singer', description: 'bright and airy' };
    const created = await t.call(a.key, 'POST', path, body);
    assert.equal(created.statusCode, 201, created.body);
    const persona = created.json();
    assert.deepEqual(Object.keys(persona).sort(), [
      'created_at',
      'description',
      'id',
      'name',
      'song_title',
      'style',
    ]);
    assert.equal(persona.song_title, 'Morning Tram');
    assert.equal(persona.style, null);
    expectError(await t.call(a.key, 'POST', path, { ...body, name: 'Again' }), 409, 'persona_exists');
    const second = await t.call(a.key, 'POST', path, { ...body, index: 1, style: 'indie pop' });
    assert.equal(second.statusCode, 201, second.body);
    const list = (await t.call(a.key, 'GET', path)).json();
    assert.equal(list.personas.length, 2);
    assert.deepEqual(Object.keys(list.limits).sort(), ['description', 'name', 'records', 'style']);
    assert.equal((await t.call(a.key, 'DELETE', `${path}/${persona.id}`)).statusCode, 204);
    assert.equal((await t.call(a.key, 'POST', path, body)).statusCode, 201);
    const bad = await t.call(a.key, 'POST', path, { ...body, index: 7 });
    expectError(bad, 422, 'invalid_request');
    assert.match(errorOf(bad).message, /index/);
    // The description is required: one of invisible characters only is none, as a name so made is.
    for (const description of ['\u200b', ' \u2060\ufeff '.trim(), '   ']) {
      const blank = await t.call(a.key, 'POST', path, { ...body, index: 1, description });
      expectError(blank, 422, 'invalid_request');
      assert.match(errorOf(blank).message, /description/, JSON.stringify(description));
    }
    await t.call(a.key, 'DELETE', `${path}/${second.json().id}`);
    expectError(
      await t.call(a.key, 'POST', path, { ...body, index: 1, name: 'Nope [sim:fail]' }),
      502,
      'persona_create_failed',
    );
    const headers = { 'idempotency-key': 'persona-1' };
    const fresh = { ...body, index: 1 };
    const first = await t.call(a.key, 'POST', path, fresh, headers);
    const replay = await t.call(a.key, 'POST', path, fresh, headers);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.json().id, first.json().id);
  });

  test('two creations from one song version at once: 201 and 409 persona_exists, even when the generator refused the loser', async () => {
    const a = await t.account({ balanceMinor: 100_000 });
    const taskId = await finished(a.key, song);
    const body = { source_task_id: taskId, index: 0, name: 'Twin', description: 'at once' };
    // As Suno: both pass our look for a live persona, the provider saves the first and refuses the second
    // (one persona per track) once the first has been saved here.
    const generator = t.container.services.libraries.deps.generator;
    const original = generator.createRecord.bind(generator);
    let calls = 0;
    let secondArrived = (): void => {};
    const second = new Promise<void>((resolve) => {
      secondArrived = resolve;
    });
    let answers: Promise<unknown>[] = [];
    generator.createRecord = async (request, signal) => {
      calls += 1;
      if (calls === 1) {
        await second;
        return original(request, signal);
      }
      secondArrived();
      await Promise.race(answers);
      throw new LibraryRejected('a persona of this track exists');
    };
    try {
      answers = [1, 2].map(() => t.call(a.key, 'POST', path, body));
      const results = (await Promise.all(answers)) as Awaited<ReturnType<TestApp['call']>>[];
      assert.equal(calls, 2, 'both creations reached the generator');
      assert.deepEqual(
        results.map((r) => r.statusCode).sort(),
        [201, 409],
        results.map((r) => r.body).join(),
      );
      expectError(results.find((r) => r.statusCode === 409)!, 409, 'persona_exists');
    } finally {
      generator.createRecord = original;
    }
  });

  test('foreign or unknown task: 404 task_not_found; sounds: 422 invalid_request', async () => {
    const a = await t.account({ balanceMinor: 100_000 });
    const b = await t.account({ balanceMinor: 100_000 });
    const soundTask = await finished(a.key, sounds);
    const body = { source_task_id: soundTask, index: 0, name: 'Rain', description: 'rain' };
    expectError(await t.call(b.key, 'POST', path, body), 404, 'task_not_found');
    expectError(
      await t.call(a.key, 'POST', path, { ...body, source_task_id: 'nope' }),
      404,
      'task_not_found',
    );
    const res = await t.call(a.key, 'POST', path, body);
    expectError(res, 422, 'invalid_request');
    assert.match(errorOf(res).message, /source_task_id/);
  });
});
