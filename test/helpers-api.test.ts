import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../src/lib/clock.ts';
import { errorOf, expectError, startTestApp, type TestApp } from './helpers.ts';

const MINUTE = 60_000;
const CALLS: Array<[string, Record<string, unknown>]> = [
  ['/v1/models/music/lyrics', { prompt: 'a song about harbour lights' }],
  ['/v1/models/music/style-boost', { style: 'sad jazz' }],
  ['/v1/models/image/enhance', { prompt: 'a red fox in the snow' }],
];

describe('free helpers (reference "Free helpers", "Limits")', () => {
  const clock = new ManualClock();
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ clock });
  });
  after(() => t.close());

  test('answers: lyrics variants, a detailed style, a richer prompt', async () => {
    const a = await t.account();
    const lyrics = await t.call(a.key, 'POST', '/v1/models/music/lyrics', {
      prompt: 'summer rain over the city',
    });
    assert.equal(lyrics.statusCode, 200, lyrics.body);
    const { variants } = lyrics.json();
    assert.ok(variants.length >= 2 && variants.length <= 3);
    for (const v of variants) {
      assert.equal(typeof v.title, 'string');
      assert.match(v.text, /\[Chorus\]/);
      assert.match(v.text, /summer|rain|city/);
    }
    const style = (await t.call(a.key, 'POST', '/v1/models/music/style-boost', { style: 'sad jazz' })).json();
    assert.ok(style.style.length > 'sad jazz'.length * 5);
    assert.match(style.style, /BPM/);
    const prompt = (
      await t.call(a.key, 'POST', '/v1/models/image/enhance', { prompt: 'a lighthouse' })
    ).json();
    assert.ok(prompt.prompt.startsWith('a lighthouse, '));
  });

  test('422 invalid_request for a wrong body; 403 for a key of other models; 503 does not count', async () => {
    const a = await t.account();
    const bad = await t.call(a.key, 'POST', '/v1/models/music/lyrics', { prompt: 'x', extra: 1 });
    expectError(bad, 422, 'invalid_request');
    assert.match(errorOf(bad).message, /extra/);
    expectError(await t.call(a.key, 'POST', '/v1/models/image/enhance', {}), 422, 'invalid_request');
    const imageOnly = await t.account({ models: ['image'] });
    expectError(
      await t.call(imageOnly.key, 'POST', '/v1/models/music/lyrics', { prompt: 'x' }),
      403,
      'model_not_allowed_for_key',
    );
    assert.equal(
      (await t.call(imageOnly.key, 'POST', '/v1/models/image/enhance', { prompt: 'x' })).statusCode,
      200,
    );
    // The key is refused before its body is read: a malformed body changes nothing.
    for (const path of ['/v1/models/music/lyrics', '/v1/models/music/style-boost']) {
      expectError(await t.call(imageOnly.key, 'POST', path, {}), 403, 'model_not_allowed_for_key');
    }
    const musicOnly = await t.account({ models: ['music'] });
    expectError(
      await t.call(musicOnly.key, 'POST', '/v1/models/image/enhance', {}),
      403,
      'model_not_allowed_for_key',
    );
    for (let i = 0; i < 25; i++) {
      const down = await t.call(a.key, 'POST', '/v1/models/music/style-boost', {
        style: '[sim:unavailable]',
      });
      expectError(down, 503, 'sg_unavailable');
      assert.ok(down.headers['retry-after']);
    }
    assert.equal(
      (await t.call(a.key, 'POST', ...CALLS[0]!)).statusCode,
      200,
      'outages did not use the limit',
    );
  });

  test('20 calls per sliding hour per account, shared by its keys; the 21st is 429 with Retry-After', async () => {
    const a = await t.account();
    const secondKey = (await t.admin('POST', `/admin/v1/accounts/${a.id}/keys`, {})).json().key as string;
    const b = await t.account();
    for (let i = 0; i < 10; i++) {
      const [path, body] = CALLS[i % 3]!;
      assert.equal((await t.call(a.key, 'POST', path, body)).statusCode, 200);
    }
    clock.advance(20 * MINUTE);
    for (let i = 0; i < 10; i++) {
      const [path, body] = CALLS[i % 3]!;
      assert.equal((await t.call(secondKey, 'POST', path, body)).statusCode, 200);
    }
    const limited = await t.call(a.key, 'POST', ...CALLS[1]!);
    expectError(limited, 429, 'rate_limited');
    // The oldest call leaves the window 40 minutes from now.
    assert.equal(limited.headers['retry-after'], String(40 * 60));
    expectError(await t.call(secondKey, 'POST', ...CALLS[2]!), 429, 'rate_limited');
    assert.equal((await t.call(b.key, 'POST', ...CALLS[0]!)).statusCode, 200, 'other accounts are separate');
    clock.advance(40 * MINUTE - 1_000);
    const almost = await t.call(a.key, 'POST', ...CALLS[0]!);
    expectError(almost, 429, 'rate_limited');
    assert.equal(almost.headers['retry-after'], '1');
    clock.advance(1_000);
    for (let i = 0; i < 10; i++) {
      assert.equal(
        (await t.call(a.key, 'POST', ...CALLS[i % 3]!)).statusCode,
        200,
        `call ${i} after the hour`,
      );
    }
    expectError(await t.call(a.key, 'POST', ...CALLS[0]!), 429, 'rate_limited');
  });
});

describe('RATE_LIMIT_ACCOUNT, RATE_LIMIT_WRONG_KEY and RATE_LIMIT_HELPERS (CONTRACT §8)', () => {
  test('the operator sets each limit as COUNT/DURATION', async () => {
    const t = await startTestApp({
      limits: null,
      env: { RATE_LIMIT_ACCOUNT: '4/2m', RATE_LIMIT_WRONG_KEY: '2/1m', RATE_LIMIT_HELPERS: '1/1h' },
    });
    try {
      const a = await t.account();
      const helper = await t.call(a.key, 'POST', '/v1/models/music/lyrics', { prompt: 'rain' });
      assert.equal(helper.statusCode, 200, helper.body);
      const spent = await t.call(a.key, 'POST', '/v1/models/music/lyrics', { prompt: 'snow' });
      expectError(spent, 429, 'rate_limited');
      // The answer names the policy that refused it beside the account's, not only the account's budget
      // with requests left (IETF ratelimit-headers: lists of policies).
      assert.equal(spent.headers['ratelimit-policy'], '"account";q=4;w=120, "helpers";q=1;w=3600');
      assert.match(String(spent.headers.ratelimit), /^"account";r=2;t=\d+, "helpers";r=0;t=\d+$/);
      const wait = /"helpers";r=0;t=(\d+)$/.exec(String(spent.headers.ratelimit))?.[1];
      assert.equal(wait, spent.headers['retry-after']);
      const me = await t.call(a.key, 'GET', '/v1/me');
      assert.equal(me.headers['ratelimit-policy'], '"account";q=4;w=120');
      await t.call(a.key, 'GET', '/v1/me');
      expectError(await t.call(a.key, 'GET', '/v1/me'), 429, 'rate_limited');
      const wrong = () => t.call('gta_wrongwrongwrongwrongwrongwrongwrongw', 'GET', '/v1/me');
      expectError(await wrong(), 401, 'invalid_api_key');
      expectError(await wrong(), 401, 'invalid_api_key');
      expectError(await wrong(), 429, 'rate_limited');
    } finally {
      await t.close();
    }
  });
});

describe('the API document states the helper limit the operator set', () => {
  test('RATE_LIMIT_HELPERS=5/10m is described as 5 helper calls per 10 minutes', async () => {
    const t = await startTestApp({ env: { RATE_LIMIT_HELPERS: '5/10m' } });
    try {
      const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
      for (const path of [
        '/v1/models/music/lyrics',
        '/v1/models/music/style-boost',
        '/v1/models/image/enhance',
      ]) {
        const op = doc.paths[path].post;
        assert.match(op.description, /at most 5 helper calls per 10 minutes per account/, path);
        assert.match(op.responses['429'].description, /more than 5 helper calls per 10 minutes/, path);
      }
    } finally {
      await t.close();
    }
  });
});
