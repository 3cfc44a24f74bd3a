import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MODELS } from '../src/catalog/index.ts';
import { createDb } from '../src/db/index.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { ModelService } from '../src/models/index.ts';
import { expectError, startTestApp, type TestApp } from './helpers.ts';

const ALL_KEYS = [
  'model-3d',
  'video',
  'music',
  'video-elements',
  'voice',
  'image',
  'music-styles',
  'video-omni',
];

describe('GET /v1/models and GET /v1/me', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-11-22T20:30:00.000Z');
  before(async () => {
    t = await startTestApp({ clock });
  });
  after(() => t.close());

  test('lists all 8 models of CONTRACT §2 with kind, available and each mode with its settings JSON Schema', async () => {
    const acct = await t.account();
    const res = await t.call(acct.key, 'GET', '/v1/models');
    assert.equal(res.statusCode, 200);
    const models = res.json().models as Array<{
      key: string;
      kind: string;
      available: boolean;
      modes: Array<{
        name: string;
        settings_schema: { type?: string; anyOf?: unknown[]; oneOf?: unknown[] };
      }>;
    }>;
    assert.deepEqual(
      models.map((m) => m.key),
      ALL_KEYS,
    );
    const kinds = Object.fromEntries(models.map((m) => [m.key, m.kind]));
    assert.deepEqual(kinds, {
      'model-3d': '3d',
      video: 'video',
      music: 'audio',
      'video-elements': 'video',
      voice: 'speech',
      image: 'image',
      'music-styles': 'audio',
      'video-omni': 'video',
    });
    for (const m of models) {
      assert.equal(m.available, true);
      assert.ok(m.modes.length > 0);
      for (const mode of m.modes) {
        const schema = mode.settings_schema;
        assert.ok(
          schema.type === 'object' || Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf),
          m.key,
        );
      }
    }
    const modes = (key: string): string[] => models.find((m) => m.key === key)!.modes.map((m) => m.name);
    assert.deepEqual(modes('model-3d'), ['text_to_model', 'image_to_model', 'multiview_to_model']);
    assert.deepEqual(modes('video'), ['frames', 'reference', 'omni']);
    assert.deepEqual(modes('music'), [
      'generate',
      'sounds',
      'add_vocals',
      'add_instrumental',
      'cover_upload',
      'extend',
      'replace_upload',
      'mashup',
    ]);
    assert.deepEqual(modes('voice'), ['text_to_dialogue', 'voice_change']);
  });

  test('extend publishes defaultParamFlag as never valid, as creation refuses any value of it', async () => {
    const acct = await t.account();
    const res = await t.call(acct.key, 'GET', '/v1/models/music');
    const modes = res.json().modes as Array<{ name: string; settings_schema: Record<string, unknown> }>;
    const extend = modes.find((m) => m.name === 'extend')!.settings_schema;
    const props = extend['properties'] as Record<string, Record<string, unknown>>;
    assert.deepEqual(props['defaultParamFlag'], { not: {} });
    assert.ok(!(extend['required'] as string[]).includes('defaultParamFlag'));
  });

  test('GET /v1/models/{key}: the listed model; unknown 404 model_not_found, not the key’s 403', async () => {
    const acct = await t.account({ models: ['image'] });
    const one = await t.call(acct.key, 'GET', '/v1/models/image');
    assert.equal(one.statusCode, 200, one.body);
    const listed = (await t.call(acct.key, 'GET', '/v1/models')).json().models[0];
    assert.deepEqual(one.json(), listed);
    expectError(await t.call(acct.key, 'GET', '/v1/models/nope'), 404, 'model_not_found');
    expectError(await t.call(acct.key, 'GET', '/v1/models/video'), 403, 'model_not_allowed_for_key');
    // The list's filter takes a model key too: an unknown one is the same 404, not an empty page.
    expectError(await t.call(acct.key, 'GET', '/v1/tasks?model=nope'), 404, 'model_not_found');
    const empty = await t.call(acct.key, 'GET', '/v1/tasks?model=video');
    assert.deepEqual(empty.json(), { tasks: [], next_cursor: null });
  });

  test('an unknown model key of any length is 404 model_not_found, its echo clipped', async () => {
    const acct = await t.account();
    const long = 'm'.repeat(101);
    const body = { model: 'x'.repeat(5000), settings: {} };
    const answers = [
      await t.call(acct.key, 'POST', '/v1/tasks', body),
      await t.call(acct.key, 'POST', '/v1/price', body),
      await t.call(acct.key, 'GET', `/v1/models/${long}`),
      await t.call(acct.key, 'GET', `/v1/models/${long}/elements`),
      await t.call(acct.key, 'GET', `/v1/tasks?model=${long}`),
    ];
    for (const res of answers) {
      expectError(res, 404, 'model_not_found');
      assert.ok(res.json().error.message.length < 200, res.json().error.message);
    }
  });

  test('a model switched off by the operator shows available: false; switched on again, true', async () => {
    const acct = await t.account();
    const off = await t.admin('PATCH', '/admin/v1/models/video', { available: false });
    assert.equal(off.statusCode, 200);
    assert.equal(off.json().available, false);
    const listed = (await t.call(acct.key, 'GET', '/v1/models'))
      .json()
      .models.find((m: { key: string }) => m.key === 'video');
    assert.equal(listed.available, false);
    await t.admin('PATCH', '/admin/v1/models/video', { available: true });
    const again = (await t.call(acct.key, 'GET', '/v1/models'))
      .json()
      .models.find((m: { key: string }) => m.key === 'video');
    assert.equal(again.available, true);
    expectError(
      await t.admin('PATCH', '/admin/v1/models/nope', { available: false }),
      404,
      'model_not_found',
    );
    expectError(await t.admin('PATCH', '/admin/v1/models/video', {}), 422, 'invalid_request');
  });

  test('a model switched off or its limit changed by another process counts from the next creation', async () => {
    // A second handle on the same database, with a ModelService of its own, stands for another process.
    const other = createDb(t.container.config.databaseUrl);
    try {
      const operator = new ModelService({ db: other, clock: t.container.clock, models: MODELS });
      const acct = await t.account({ balanceMinor: 1_000_000 });
      const create = () =>
        t.call(acct.key, 'POST', '/v1/tasks', {
          model: 'model-3d',
          settings: { task_type: 'text_to_model', prompt: 'a chair' },
        });
      assert.equal((await create()).statusCode, 202, 'the state is read (and kept on SQLite)');
      assert.equal((await create()).statusCode, 202);
      await operator.update('model-3d', { available: false });
      expectError(await create(), 503, 'model_unavailable');
      await operator.update('model-3d', { available: true, maxActive: 2 });
      expectError(await create(), 429, 'too_many_active');
      await operator.update('model-3d', { maxActive: 10 });
      assert.equal((await create()).statusCode, 202);
    } finally {
      await other.close();
    }
  });

  test('a switch and a limit changed together both stay: neither change writes back the other field', async () => {
    // Two operators at once: one switches the model off, the other sets its limit. Each change names one
    // field; the other must stay as the database has it, not be written back as it was read before.
    const models = t.container.services.models;
    try {
      for (let round = 0; round < 3; round++) {
        await models.update('image', { available: true, maxActive: 10 });
        const [off, limited] = await Promise.all([
          models.update('image', { available: false }),
          models.update('image', { maxActive: 7 }),
        ]);
        assert.equal(off?.available, false);
        assert.equal(limited?.max_active, 7);
        const listed = (await models.list(null)).find((m) => m.key === 'image');
        assert.deepEqual([listed?.available, listed?.max_active], [false, 7], `round ${round}`);
      }
    } finally {
      await models.update('image', { available: true, maxActive: 10 });
    }
  });

  test('/v1/me shows the key rights: models, daily limit, spent today, Moscow day reset; never the key', async () => {
    const acct = await t.account({ models: ['image'], dailyLimitMinor: 5000, balanceMinor: 100 });
    const res = await t.call(acct.key, 'GET', '/v1/me');
    assert.equal(res.statusCode, 200);
    const me = res.json();
    assert.equal(me.account_id, acct.id);
    assert.equal(me.restricted, true);
    assert.deepEqual(me.models, ['image']);
    assert.equal(me.daily_limit_minor, 5000);
    assert.equal(me.spent_today_minor, 0);
    assert.equal(me.remaining_today_minor, 5000);
    assert.equal(me.available_minor, 100);
    // 20:30 UTC on 22 Nov is 23:30 in Moscow: the day resets at 21:00 UTC.
    assert.equal(me.day_resets_at, '2026-11-22T21:00:00.000Z');
    assert.ok(!res.body.includes(acct.key), 'the key itself must not be shown');

    const open = (await t.call((await t.account()).key, 'GET', '/v1/me')).json();
    assert.equal(open.restricted, false);
    assert.equal(open.daily_limit_minor, null);
    assert.equal(open.models.length, 8);
  });
});
