import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runAdminCommand, UsageError } from '../src/cli/admin.ts';
import { ADMIN_TOKEN, expectError, startTestApp, type TestApp } from './helpers.ts';

describe('operator API (CONTRACT §9)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('creates an account with a zero balance and reads it back with balance, held and available', async () => {
    const res = await t.admin('POST', '/admin/v1/accounts', { name: 'Acme' });
    assert.equal(res.statusCode, 201);
    const { id } = res.json();
    assert.equal(res.json().balance_minor, 0);
    const got = await t.admin('GET', `/admin/v1/accounts/${id}`);
    assert.deepEqual(
      {
        name: got.json().name,
        b: got.json().balance_minor,
        h: got.json().held_minor,
        a: got.json().available_minor,
      },
      { name: 'Acme', b: 0, h: 0, a: 0 },
    );
    expectError(await t.admin('GET', '/admin/v1/accounts/nope'), 404, 'account_not_found');
    expectError(await t.admin('POST', '/admin/v1/accounts', { name: '' }), 422, 'invalid_request');
    expectError(await t.admin('POST', '/admin/v1/accounts', { name: 'x', extra: 1 }), 422, 'invalid_request');
  });

  test('the ledger pages: every entry once, 1,000 a page by default, next_cursor to go on', async () => {
    const { id } = (await t.admin('POST', '/admin/v1/accounts', { name: 'Busy' })).json();
    const admin = t.container.services.admin;
    for (let i = 0; i < 1_003; i++) await admin.credit(id, 1, `r-${i}`);
    const first = await t.admin('GET', `/admin/v1/accounts/${id}/ledger`);
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().entries.length, 1_000);
    assert.equal(first.json().entries[0].reference, 'r-1002', 'newest first');
    const rest = await t.admin(
      'GET',
      `/admin/v1/accounts/${id}/ledger?cursor=${encodeURIComponent(first.json().next_cursor)}`,
    );
    assert.deepEqual(
      rest.json().entries.map((e: { reference: string }) => e.reference),
      ['r-2', 'r-1', 'r-0'],
    );
    assert.equal(rest.json().next_cursor, null);
    const seen = new Set<string>();
    let cursor: string | null = null;
    do {
      const url: string = `/admin/v1/accounts/${id}/ledger?limit=400${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await t.admin('GET', url);
      for (const e of page.json().entries as Array<{ id: string }>) seen.add(e.id);
      cursor = page.json().next_cursor;
    } while (cursor);
    assert.equal(seen.size, 1_003);
    for (const bad of ['limit=0', 'limit=1001', 'cursor=bogus'])
      expectError(await t.admin('GET', `/admin/v1/accounts/${id}/ledger?${bad}`), 422, 'invalid_request');
    // The command line prints every entry, page after page, and refuses a credit of nothing as the API does.
    const printed = (await runAdminCommand(t.container.services, ['ledger', id], {})) as {
      entries: unknown[];
    };
    assert.equal(printed.entries.length, 1_003);
    await assert.rejects(
      runAdminCommand(t.container.services, ['credit', id], { amount: '0', reference: 'zero' }),
      UsageError,
    );
    // Kopecks are written in decimal digits: Number() alone would credit 1000 for 1e3 and 16 for 0x10.
    for (const amount of ['1e3', '0x10', ' 12', '12.0', '-5'])
      await assert.rejects(
        runAdminCommand(t.container.services, ['credit', id], { amount, reference: `odd ${amount}` }),
        UsageError,
        amount,
      );
    for (const command of ['credit', 'ledger'])
      await assert.rejects(runAdminCommand(t.container.services, [command], {}), /missing ACCOUNT_ID/);
  });

  test('credits are idempotent by reference and appear in the ledger', async () => {
    const { id } = (await t.admin('POST', '/admin/v1/accounts', { name: 'Payer' })).json();
    const first = await t.admin('POST', `/admin/v1/accounts/${id}/credits`, {
      amount_minor: 5000,
      reference: 'inv-1',
    });
    assert.equal(first.statusCode, 201);
    assert.equal(first.json().type, 'credit');
    const again = await t.admin('POST', `/admin/v1/accounts/${id}/credits`, {
      amount_minor: 5000,
      reference: 'inv-1',
    });
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().id, first.json().id);
    // Spaces around a reference are no part of it (the console's form trims too); only spaces is none.
    const spaced = await t.admin('POST', `/admin/v1/accounts/${id}/credits`, {
      amount_minor: 5000,
      reference: '  inv-1 ',
    });
    assert.equal(spaced.statusCode, 200, spaced.body);
    assert.equal(spaced.json().id, first.json().id);
    expectError(
      await t.admin('POST', `/admin/v1/accounts/${id}/credits`, { amount_minor: 1, reference: '   ' }),
      422,
      'invalid_request',
    );
    await t.admin('POST', `/admin/v1/accounts/${id}/credits`, { amount_minor: 700, reference: 'inv-2' });
    assert.equal((await t.admin('GET', `/admin/v1/accounts/${id}`)).json().available_minor, 5700);
    const ledger = await t.admin('GET', `/admin/v1/accounts/${id}/ledger`);
    assert.deepEqual(
      ledger
        .json()
        .entries.map((e: { reference: string; amount_minor: number }) => [e.reference, e.amount_minor]),
      [
        ['inv-2', 700],
        ['inv-1', 5000],
      ],
    );
    for (const amount of [0, -5, 1.5, '10']) {
      expectError(
        await t.admin('POST', `/admin/v1/accounts/${id}/credits`, { amount_minor: amount, reference: 'x' }),
        422,
        'invalid_request',
      );
    }
    expectError(
      await t.admin('POST', '/admin/v1/accounts/nope/credits', { amount_minor: 1, reference: 'x' }),
      404,
      'account_not_found',
    );
  });

  test('concurrent credits with one reference credit once', async () => {
    const { id } = (await t.admin('POST', '/admin/v1/accounts', { name: 'Race' })).json();
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        t.admin('POST', `/admin/v1/accounts/${id}/credits`, { amount_minor: 100, reference: 'same' }),
      ),
    );
    assert.equal(results.filter((r) => r.statusCode === 201).length, 1);
    assert.equal((await t.admin('GET', `/admin/v1/accounts/${id}`)).json().balance_minor, 100);
  });

  test('the command line refuses what the API refuses: blank names, long references, active limits', async () => {
    const services = t.container.services;
    const { id } = (await t.admin('POST', '/admin/v1/accounts', { name: 'Bounds' })).json();
    const refused = async (positionals: string[], options: Record<string, string>): Promise<void> => {
      await assert.rejects(runAdminCommand(services, positionals, options), (error: unknown) => {
        assert.ok(
          error instanceof UsageError || (error as { code?: string }).code === 'invalid_request',
          String(error),
        );
        return true;
      });
    };
    await refused(['accounts', 'create'], { name: '   ' });
    await refused(['accounts', 'create'], { name: 'n'.repeat(201) });
    await refused(['credit', id], { amount: '100', reference: 'r'.repeat(201) });
    await refused(['models', 'set', 'music'], { 'max-active': '0' });
    await refused(['models', 'set', 'music'], { 'max-active': '10001' });
    // Neither option: the API's `{}` is 422 invalid_request, not a silent no-op.
    await refused(['models', 'set', 'music'], {});
    const model = (await t.call((await t.account()).key, 'GET', '/v1/models')).json().models as Array<{
      key: string;
      max_active: number;
    }>;
    assert.equal(model.find((m) => m.key === 'music')?.max_active, 10, 'the limit was left as it was');
    assert.equal((await t.admin('GET', `/admin/v1/accounts/${id}`)).json().balance_minor, 0);
    // Names are kept trimmed, as the API keeps them.
    const made = (await runAdminCommand(services, ['accounts', 'create'], { name: '  Acme  ' })) as {
      name: string;
    };
    assert.equal(made.name, 'Acme');
    // Lengths count characters, as the API's schemas do: 200 emoji are 200 characters (400 UTF-16 units).
    const emoji = '\u{1F600}'.repeat(200);
    const viaApi = await t.admin('POST', '/admin/v1/accounts', { name: emoji });
    assert.equal(viaApi.statusCode, 201, viaApi.body);
    const credited = await t.admin('POST', `/admin/v1/accounts/${id}/credits`, {
      amount_minor: 1,
      reference: emoji,
    });
    assert.equal(credited.statusCode, 201, credited.body);
    const keyed = await t.admin('POST', `/admin/v1/accounts/${id}/keys`, { name: emoji });
    assert.equal(keyed.statusCode, 201, keyed.body);
  });

  test('the command line issues no key the API would refuse, and never widens an empty --models', async () => {
    const services = t.container.services;
    const { id } = (await t.admin('POST', '/admin/v1/accounts', { name: 'Key bounds' })).json();
    for (const options of [{ models: '' }, { models: ',' }, { name: 'n'.repeat(201) }]) {
      await assert.rejects(
        runAdminCommand(services, ['keys', 'create', id], options),
        (error: unknown) =>
          error instanceof UsageError || (error as { code?: string }).code === 'invalid_request',
        JSON.stringify(options),
      );
    }
    const keys = await services.admin.keys(id);
    assert.equal(keys.length, 0, 'no key was issued');
    const made = (await runAdminCommand(services, ['keys', 'create', id], { models: ' music , ' })) as {
      models: string[];
    };
    assert.deepEqual(made.models, ['music']);
    const twice = (await runAdminCommand(services, ['keys', 'create', id], {
      models: 'music,image,music',
    })) as {
      models: string[];
    };
    assert.deepEqual(twice.models, ['music', 'image'], 'a model named twice is kept once, as by the API');
    assert.deepEqual((await services.admin.keys(id))[0]?.models, ['music', 'image']);
  });

  test('the command line refuses arguments past what a command takes, before doing anything', async () => {
    const services = t.container.services;
    const { id } = (await t.admin('POST', '/admin/v1/accounts', { name: 'Surplus' })).json();
    const first = (await t.admin('POST', `/admin/v1/accounts/${id}/keys`, {})).json();
    const second = (await t.admin('POST', `/admin/v1/accounts/${id}/keys`, {})).json();
    // `keys revoke A B` revoked A only and exited 0, leaving B working while the operator thought it gone.
    for (const [positionals, options] of [
      [['keys', 'revoke', first.id, second.id], {}],
      [['credit', id, 'extra'], { amount: '100', reference: 'surplus' }],
      [['accounts', 'get', id, 'extra'], {}],
      [['accounts', 'create', 'extra'], { name: 'Extra' }],
      [['models', 'set', 'music', 'image'], { available: 'false' }],
      [['channels', 'list', 'extra'], {}],
    ] as const) {
      await assert.rejects(
        runAdminCommand(services, positionals, options),
        (error: unknown) => error instanceof UsageError && /unexpected argument/.test(error.message),
        positionals.join(' '),
      );
    }
    for (const key of [first, second])
      assert.equal((await t.call(key.key, 'GET', '/v1/me')).statusCode, 200, 'no key was revoked');
    assert.equal((await t.admin('GET', `/admin/v1/accounts/${id}`)).json().balance_minor, 0);
    const music = (await t.call(first.key, 'GET', '/v1/models/music')).json();
    assert.equal(music.available, true, 'the model was left as it was');
  });

  test('issues keys shown once with their restrictions', async () => {
    const { id } = (await t.admin('POST', '/admin/v1/accounts', { name: 'Keys' })).json();
    const res = await t.admin('POST', `/admin/v1/accounts/${id}/keys`, {
      name: 'ci',
      models: ['image'],
      daily_limit_minor: 900,
    });
    assert.equal(res.statusCode, 201);
    const key = res.json();
    assert.match(key.key, /^gta_[A-Za-z0-9]{32}$/);
    assert.equal(key.prefix, key.key.slice(0, 12));
    assert.deepEqual(key.models, ['image']);
    assert.equal(key.daily_limit_minor, 900);
    // A blank name is no name, as the dashboard keeps it.
    for (const name of ['', '   ']) {
      const blank = await t.admin('POST', `/admin/v1/accounts/${id}/keys`, { name });
      assert.equal(blank.statusCode, 201, blank.body);
      assert.equal(blank.json().name, null, JSON.stringify(name));
    }
    expectError(await t.admin('POST', '/admin/v1/accounts/nope/keys', {}), 404, 'account_not_found');
  });

  test('the operator API needs the admin token', async () => {
    expectError(
      await t.app.inject({ method: 'GET', url: '/admin/v1/accounts/x' }),
      401,
      'invalid_admin_token',
    );
    expectError(
      await t.app.inject({
        method: 'GET',
        url: '/admin/v1/accounts/x',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}x` },
      }),
      401,
      'invalid_admin_token',
    );
    const acct = await t.account();
    expectError(
      await t.call(acct.key, 'POST', '/admin/v1/accounts', { name: 'x' }),
      401,
      'invalid_admin_token',
    );
  });

  test('max_active null (the command line: default) gives a model the service default back', async () => {
    const stored = async () =>
      (
        await t.container.db.db
          .selectFrom('model_settings')
          .select('max_active')
          .where('key', '=', 'music')
          .executeTakeFirst()
      )?.max_active;
    const listed = async () => {
      const models = (await t.call((await t.account()).key, 'GET', '/v1/models')).json().models as Array<{
        key: string;
        max_active: number;
      }>;
      return models.find((m) => m.key === 'music')?.max_active;
    };
    const set = await t.admin('PATCH', '/admin/v1/models/music', { max_active: 3 });
    assert.equal(set.json().max_active, 3);
    assert.equal(await listed(), 3);
    const reset = await t.admin('PATCH', '/admin/v1/models/music', { max_active: null });
    assert.equal(reset.statusCode, 200, reset.body);
    assert.equal(reset.json().max_active, 10);
    assert.equal(await stored(), null, 'the default itself, not a copy of its value');
    assert.equal(await listed(), 10);
    const services = t.container.services;
    await runAdminCommand(services, ['models', 'set', 'music'], { 'max-active': '4' });
    assert.equal(await listed(), 4);
    const back = (await runAdminCommand(services, ['models', 'set', 'music'], {
      'max-active': 'default',
    })) as {
      max_active: number;
    };
    assert.equal(back.max_active, 10);
    assert.equal(await stored(), null);
    // A switch of a model without a row of its own keeps following the default too.
    assert.equal((await t.admin('PATCH', '/admin/v1/models/voice', { available: false })).statusCode, 200);
    const voice = await t.container.db.db
      .selectFrom('model_settings')
      .select('max_active')
      .where('key', '=', 'voice')
      .executeTakeFirstOrThrow();
    assert.equal(voice.max_active, null);
    await t.admin('PATCH', '/admin/v1/models/voice', { available: true });
  });

  test('a model change with nothing to change is refused in Russian when asked', async () => {
    const res = await t.app.inject({
      method: 'PATCH',
      url: '/admin/v1/models/image?lang=ru',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: {},
    });
    expectError(res, 422, 'invalid_request');
    assert.equal(res.json().error.message, 'body: передайте available и/или max_active');
  });
});

describe('operator API switched off', () => {
  test('without ADMIN_TOKEN the operator routes do not exist', async () => {
    const t = await startTestApp({ env: { ADMIN_TOKEN: '' } });
    try {
      const res = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/accounts',
        payload: { name: 'x' },
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expectError(res, 404, 'not_found');
    } finally {
      await t.close();
    }
  });
});
