import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../src/lib/clock.ts';
import {
  balances,
  expectError,
  sharedProcessEnv,
  startTestApp,
  type TestApp,
  waitForFinal,
} from './helpers.ts';
import { exited, freePort, type Server, startServer } from './processes.ts';

const body = (prompt = 'a lamp', extra: Record<string, unknown> = {}) => ({
  model: 'model-3d',
  settings: { task_type: 'text_to_model', prompt, texture: false, pbr: false, ...extra },
});
const PRICE = 1500; // reference: 3D text minimum, 15 RUB

async function taskCount(t: TestApp, accountId: string): Promise<number> {
  const rows = await t.container.db.db
    .selectFrom('tasks')
    .select('id')
    .where('account_id', '=', accountId)
    .execute();
  return rows.length;
}

describe('money: holds, captures, voids', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('the price of the 3D minimum is the reference figure; /v1/price changes no balance', async () => {
    const acct = await t.account({ balanceMinor: 10_000 });
    const price = await t.call(acct.key, 'POST', '/v1/price', body());
    assert.equal(price.statusCode, 200);
    assert.deepEqual(price.json(), { amount_minor: PRICE, currency: 'RUB', available_minor: 10_000 });
    const richer = (
      await t.call(acct.key, 'POST', '/v1/price', body('x', { texture: true, geometry_quality: 'detailed' }))
    ).json();
    assert.ok(richer.amount_minor > PRICE);
    assert.equal((await balances(t, acct.id)).available_minor, 10_000);
    assert.equal(await taskCount(t, acct.id), 0);
  });

  test('402 insufficient_funds: no task, no hold', async () => {
    const acct = await t.account({ balanceMinor: PRICE - 1 });
    expectError(await t.call(acct.key, 'POST', '/v1/tasks', body()), 402, 'insufficient_funds');
    assert.equal(await taskCount(t, acct.id), 0);
    assert.deepEqual(await balances(t, acct.id), {
      ...(await balances(t, acct.id)),
      held_minor: 0,
      available_minor: PRICE - 1,
    });
  });

  test('an account funded for exactly 3 tasks receiving 12 concurrent creations accepts exactly 3', async () => {
    const acct = await t.account({ balanceMinor: PRICE * 3 });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        t.call(acct.key, 'POST', '/v1/tasks', body(`lamp ${i} [sim:slow]`)),
      ),
    );
    const codes = answers.map((r) => r.statusCode).sort();
    assert.deepEqual(codes, [202, 202, 202, ...Array(9).fill(402)]);
    assert.equal(await taskCount(t, acct.id), 3);
    assert.deepEqual((await balances(t, acct.id)).available_minor, 0);
    for (const r of answers.filter((a) => a.statusCode === 202)) {
      await t.call(acct.key, 'POST', `/v1/tasks/${r.json().id}/cancel`);
    }
    assert.equal((await balances(t, acct.id)).available_minor, PRICE * 3);
  });

  test('creations of several accounts arriving together (one group commit on SQLite) keep each account exact', async () => {
    // A: money for 2; B: money for 5; C: rich, but the active-task limit (10 per model) stops it.
    const a = await t.account({ balanceMinor: PRICE * 2 });
    const b = await t.account({ balanceMinor: PRICE * 5 });
    const c = await t.account({ balanceMinor: PRICE * 100 });
    const sends = [
      ...Array.from({ length: 6 }, (_, i) => ({ acct: a, i })),
      ...Array.from({ length: 8 }, (_, i) => ({ acct: b, i })),
      ...Array.from({ length: 13 }, (_, i) => ({ acct: c, i })),
    ];
    const answers = await Promise.all(
      sends.map(({ acct, i }) => t.call(acct.key, 'POST', '/v1/tasks', body(`group ${i} [sim:slow]`))),
    );
    const codesOf = (acct: { id: string }) =>
      answers
        .filter((_, n) => sends[n]?.acct === acct)
        .map((r) => r.statusCode)
        .sort();
    assert.deepEqual(codesOf(a), [202, 202, 402, 402, 402, 402]);
    assert.deepEqual(codesOf(b), [202, 202, 202, 202, 202, 402, 402, 402]);
    assert.deepEqual(codesOf(c), [...Array(10).fill(202), 429, 429, 429]);
    assert.equal(await taskCount(t, a.id), 2);
    assert.equal(await taskCount(t, b.id), 5);
    assert.equal(await taskCount(t, c.id), 10);
    assert.equal((await balances(t, a.id)).available_minor, 0);
    assert.equal((await balances(t, b.id)).available_minor, 0);
    assert.equal((await balances(t, c.id)).held_minor, PRICE * 10);
    for (const r of answers.filter((x) => x.statusCode === 202)) {
      const owner = sends[answers.indexOf(r)]?.acct;
      if (owner) await t.call(owner.key, 'POST', `/v1/tasks/${r.json().id}/cancel`);
    }
    assert.equal((await balances(t, c.id)).held_minor, 0);
  });

  test('cancel releases the hold in full; a final task answers 409 task_not_cancelable', async () => {
    const acct = await t.account({ balanceMinor: 10_000 });
    const id = (await t.call(acct.key, 'POST', '/v1/tasks', body('slow [sim:slow]'))).json().id;
    assert.equal((await balances(t, acct.id)).available_minor, 10_000 - PRICE);
    const canceled = await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`);
    assert.equal(canceled.statusCode, 200);
    assert.equal(canceled.json().status, 'canceled');
    assert.ok(canceled.json().finished_at);
    assert.deepEqual(pick(await balances(t, acct.id)), {
      balance_minor: 10_000,
      held_minor: 0,
      available_minor: 10_000,
    });
    expectError(await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`), 409, 'task_not_cancelable');
    const done = await t.call(acct.key, 'POST', '/v1/tasks', body());
    await waitForFinal(t, acct.key, done.json().id);
    expectError(
      await t.call(acct.key, 'POST', `/v1/tasks/${done.json().id}/cancel`),
      409,
      'task_not_cancelable',
    );
    const ledger = (await t.admin('GET', `/admin/v1/accounts/${acct.id}/ledger`)).json().entries as Array<{
      type: string;
      task_id: string;
    }>;
    assert.deepEqual(
      ledger.filter((e) => e.task_id === id).map((e) => e.type),
      ['void', 'hold'],
    );
    assert.deepEqual(
      ledger.filter((e) => e.task_id === done.json().id).map((e) => e.type),
      ['capture', 'hold'],
    );
  });

  test('failure and refusal cost nothing: failed with generation_failed / content_refused, hold voided', async () => {
    const acct = await t.account({ balanceMinor: 10_000 });
    const failed = (await t.call(acct.key, 'POST', '/v1/tasks', body('[sim:fail] chair'))).json().id;
    const refused = (await t.call(acct.key, 'POST', '/v1/tasks', body('[sim:refuse] chair'))).json().id;
    const f = await waitForFinal(t, acct.key, failed);
    const r = await waitForFinal(t, acct.key, refused);
    assert.equal(f.status, 'failed');
    assert.equal((f.error as { code: string }).code, 'generation_failed');
    assert.equal((r.error as { code: string }).code, 'content_refused');
    assert.equal(f.result, undefined);
    const ru = (await t.call(acct.key, 'GET', `/v1/tasks/${failed}?lang=ru`)).json();
    assert.match(ru.error.message, /[а-я]/i);
    assert.deepEqual(pick(await balances(t, acct.id)), {
      balance_minor: 10_000,
      held_minor: 0,
      available_minor: 10_000,
    });
  });

  test('[sim:unavailable] is 503 sg_unavailable with Retry-After: nothing created or held', async () => {
    const acct = await t.account({ balanceMinor: 10_000 });
    const res = await t.call(acct.key, 'POST', '/v1/tasks', body('[sim:unavailable] chair'));
    expectError(res, 503, 'sg_unavailable');
    assert.ok(Number(res.headers['retry-after']) > 0);
    assert.equal(await taskCount(t, acct.id), 0);
    assert.equal((await balances(t, acct.id)).held_minor, 0);
  });
});

describe('daily limit of a key (Moscow day)', () => {
  test('a task that would cross the limit is 403 key_daily_limit_exceeded; concurrent requests never exceed it; a new Moscow day resets it', async () => {
    const clock = new ManualClock('2026-11-22T10:00:00.000Z');
    const t = await startTestApp({ clock });
    try {
      const acct = await t.account({ balanceMinor: 100_000, dailyLimitMinor: PRICE * 2 + 100 });
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => t.call(acct.key, 'POST', '/v1/tasks', body(`c${i}`))),
      );
      assert.deepEqual(answers.map((r) => r.statusCode).sort(), [202, 202, 403, 403, 403, 403, 403, 403]);
      expectError(answers.find((r) => r.statusCode === 403)!, 403, 'key_daily_limit_exceeded');
      const me = (await t.call(acct.key, 'GET', '/v1/me')).json();
      assert.equal(me.spent_today_minor, PRICE * 2);
      // Another key of the same account has its own (no) limit.
      const other = (await t.admin('POST', `/admin/v1/accounts/${acct.id}/keys`, {})).json().key;
      assert.equal((await t.call(other, 'POST', '/v1/tasks', body('other key'))).statusCode, 202);
      // 21:00 UTC is midnight in Moscow.
      clock.set('2026-11-22T21:00:00.000Z');
      assert.equal((await t.call(acct.key, 'POST', '/v1/tasks', body('next day'))).statusCode, 202);
      assert.equal((await t.call(acct.key, 'GET', '/v1/me')).json().spent_today_minor, PRICE);
    } finally {
      await t.close();
    }
  });
});

describe('daily limit of a key across processes', () => {
  // Two models: each has its own active-task row, which would otherwise make one model's creations wait
  // for each other and hide a daily limit that does not hold on its own.
  test('two API processes creating and canceling at once never pass it, and each cancel gives back once', async () => {
    let t: TestApp | null = null;
    const servers: Server[] = [];
    try {
      t = await startTestApp({ worker: false });
      // Only the day may bind: with the default of 10 unfinished tasks per model, the cheap model's
      // places could run out first and leave room in the day that no creation may take (429, not 403).
      for (const model of ['model-3d', 'image'])
        await t.container.services.models.update(model, { maxActive: 100 });
      const env = async () => ({
        ...sharedProcessEnv(t as TestApp),
        PORT: String(await freePort()),
        WORKER: 'off',
      });
      servers.push(await startServer(await env()));
      servers.push(await startServer(await env()));
      const limit = PRICE * 5 + 100;
      // The wallet could pay for a hundred tasks; the key's day only for about five.
      const acct = await t.account({ balanceMinor: PRICE * 100, dailyLimitMinor: limit });
      const send = (n: number, method: string, url: string, payload?: unknown) =>
        fetch(`${servers[n % 2]?.base}${url}`, {
          method,
          headers: {
            authorization: `Bearer ${acct.key}`,
            ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: payload === undefined ? undefined : JSON.stringify(payload),
        }).then(async (r) => ({
          status: r.status,
          json: (await r.json()) as {
            id: string;
            price: { amount_minor: number };
            spent_today_minor: number;
            amount_minor: number;
          },
        }));
      const create = (n: number, prompt: string) =>
        send(
          n,
          'POST',
          '/v1/tasks',
          n % 4 < 2
            ? body(`${prompt} [sim:slow]`)
            : { model: 'image', settings: { prompt: `${prompt} [sim:slow]` } },
        );
      const imagePrice = (await send(0, 'POST', '/v1/price', { model: 'image', settings: { prompt: 'x' } }))
        .json.amount_minor;
      const cheapest = Math.min(PRICE, imagePrice);
      const spent = async () => (await send(0, 'GET', '/v1/me')).json.spent_today_minor;
      const sum = (rs: { json: { price: { amount_minor: number } } }[]) =>
        rs.reduce((a, r) => a + r.json.price.amount_minor, 0);
      const first = await Promise.all(Array.from({ length: 40 }, (_, n) => create(n, `race ${n}`)));
      assert.ok(first.every((r) => r.status === 202 || r.status === 403));
      const accepted = first.filter((r) => r.status === 202);
      const held = sum(accepted);
      assert.ok(held <= limit && limit - held < cheapest, JSON.stringify(first.map((r) => r.status)));
      assert.equal(await spent(), held);
      // Two cancels, each sent three times to both processes at once: the day gets each amount back once.
      const canceled = accepted.slice(0, 2);
      await Promise.all(
        canceled.flatMap((r) =>
          Array.from({ length: 6 }, (_, n) => send(n, 'POST', `/v1/tasks/${r.json.id}/cancel`)),
        ),
      );
      assert.equal(await spent(), held - sum(canceled));
      const second = await Promise.all(Array.from({ length: 20 }, (_, n) => create(n, `again ${n}`)));
      const total = held - sum(canceled) + sum(second.filter((r) => r.status === 202));
      assert.ok(total <= limit && limit - total < cheapest, JSON.stringify(second.map((r) => r.status)));
      assert.equal(await spent(), total);
      assert.equal((await balances(t, acct.id)).held_minor, total);
    } finally {
      for (const s of servers) s.child.kill('SIGTERM');
      for (const s of servers) await exited(s.child);
      await t?.close();
    }
  });
});

describe('daily limit of a key: voids give the amount back', () => {
  test('a canceled task no longer counts for the day it was created on, and never for a later day', async () => {
    const clock = new ManualClock('2026-11-22T10:00:00.000Z');
    const t = await startTestApp({ clock });
    try {
      const acct = await t.account({ balanceMinor: 100_000, dailyLimitMinor: PRICE * 2 });
      const spent = async (): Promise<number> =>
        (await t.call(acct.key, 'GET', '/v1/me')).json().spent_today_minor;
      const create = (prompt: string) => t.call(acct.key, 'POST', '/v1/tasks', body(`${prompt} [sim:slow]`));
      const first = await create('a');
      const second = await create('b');
      assert.deepEqual([first.statusCode, second.statusCode], [202, 202]);
      expectError(await create('c'), 403, 'key_daily_limit_exceeded');
      assert.equal(await spent(), PRICE * 2);
      // Canceling twice gives the amount back once.
      await Promise.all([
        t.call(acct.key, 'POST', `/v1/tasks/${first.json().id}/cancel`),
        t.call(acct.key, 'POST', `/v1/tasks/${first.json().id}/cancel`),
      ]);
      assert.equal(await spent(), PRICE);
      assert.equal((await create('d')).statusCode, 202);
      expectError(await create('e'), 403, 'key_daily_limit_exceeded');
      // Next Moscow day: yesterday's task canceled today leaves today's spend alone.
      clock.set('2026-11-22T21:00:00.000Z');
      assert.equal((await create('f')).statusCode, 202);
      await t.call(acct.key, 'POST', `/v1/tasks/${second.json().id}/cancel`);
      assert.equal(await spent(), PRICE);
      assert.equal((await create('g')).statusCode, 202);
      expectError(await create('h'), 403, 'key_daily_limit_exceeded');
      assert.equal(await spent(), PRICE * 2);
    } finally {
      await t.close();
    }
  });
});

describe('limits at creation, before any hold', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('404 model_not_found, 403 model_not_allowed_for_key, 503 model_unavailable, 429 too_many_active', async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    expectError(
      await t.call(acct.key, 'POST', '/v1/tasks', { model: 'nope', settings: {} }),
      404,
      'model_not_found',
    );
    expectError(
      await t.call(acct.key, 'POST', '/v1/price', { model: 'nope', settings: {} }),
      404,
      'model_not_found',
    );
    const restricted = await t.account({ balanceMinor: 100_000, models: ['image'] });
    expectError(await t.call(restricted.key, 'POST', '/v1/tasks', body()), 403, 'model_not_allowed_for_key');
    await t.admin('PATCH', '/admin/v1/models/model-3d', { available: false });
    const off = await t.call(acct.key, 'POST', '/v1/tasks', body());
    expectError(off, 503, 'model_unavailable');
    await t.admin('PATCH', '/admin/v1/models/model-3d', { available: true, max_active: 2 });
    const first = await t.call(acct.key, 'POST', '/v1/tasks', body('a [sim:slow]'));
    const second = await t.call(acct.key, 'POST', '/v1/tasks', body('b [sim:slow]'));
    assert.deepEqual([first.statusCode, second.statusCode], [202, 202]);
    const third = await t.call(acct.key, 'POST', '/v1/tasks', body('c'));
    expectError(third, 429, 'too_many_active');
    assert.ok(Number(third.headers['retry-after']) > 0);
    assert.equal((await balances(t, acct.id)).held_minor, PRICE * 2);
    // Another account is not affected by this account's active tasks.
    const other = await t.account({ balanceMinor: 100_000 });
    assert.equal((await t.call(other.key, 'POST', '/v1/tasks', body('d'))).statusCode, 202);
    await t.call(acct.key, 'POST', `/v1/tasks/${first.json().id}/cancel`);
    assert.equal((await t.call(acct.key, 'POST', '/v1/tasks', body('e'))).statusCode, 202);
    await t.admin('PATCH', '/admin/v1/models/model-3d', { max_active: 10 });
  });

  test('settings errors: 422 unknown_setting and invalid_settings naming the field; nothing held', async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const unknown = await t.call(
      acct.key,
      'POST',
      '/v1/tasks',
      body('x', { image_url: ['https://e.com/a.png'] }),
    );
    expectError(unknown, 422, 'unknown_setting');
    assert.match(unknown.json().error.message, /settings\.image_url/);
    const invalid = await t.call(acct.key, 'POST', '/v1/tasks', body('x', { face_limit: 10 }));
    expectError(invalid, 422, 'invalid_settings');
    assert.match(invalid.json().error.message, /settings\.face_limit/);
    const ru = await t.call(acct.key, 'POST', '/v1/tasks?lang=ru', body('x', { face_limit: 10 }));
    assert.match(ru.json().error.message, /[а-я]/i);
    expectError(
      await t.call(acct.key, 'POST', '/v1/tasks', { model: 'model-3d', settings: { prompt: 'x' } }),
      422,
      'invalid_settings',
    );
    expectError(await t.call(acct.key, 'POST', '/v1/tasks', { model: 'model-3d' }), 422, 'invalid_request');
    expectError(await t.call(acct.key, 'POST', '/v1/tasks', { ...body(), extra: 1 }), 422, 'invalid_request');
    expectError(
      await t.call(acct.key, 'POST', '/v1/tasks', { model: 'model-3d', settings: [] }),
      422,
      'invalid_request',
    );
    assert.equal((await balances(t, acct.id)).held_minor, 0);
  });

  test('task and price bodies up to 64 KB are read; larger ones are 413 request_too_large', async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const big = body('x'.repeat(40 * 1024));
    expectError(await t.call(acct.key, 'POST', '/v1/price', big), 422, 'invalid_settings');
    const huge = body('x'.repeat(70 * 1024));
    expectError(await t.call(acct.key, 'POST', '/v1/tasks', huge), 413, 'request_too_large');
    expectError(await t.call(acct.key, 'POST', '/v1/price', huge), 413, 'request_too_large');
  });
});

function pick(b: { balance_minor: number; held_minor: number; available_minor: number }) {
  return { balance_minor: b.balance_minor, held_minor: b.held_minor, available_minor: b.available_minor };
}
