import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { runAdminCommand } from '../src/cli/admin.ts';
import { isApiError } from '../src/errors.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { CSRF_HEADER, PeopleService, SESSION_COOKIE } from '../src/people/index.ts';
import { LoginLimiter } from '../src/people/login-limiter.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { decodedParts, outboxLink } from './mail-kit.ts';

const latestMail = (dir: string): string => {
  const files = fs.readdirSync(path.join(dir, 'outbox')).sort();
  return fs.readFileSync(path.join(dir, 'outbox', files[files.length - 1] as string), 'utf8');
};

const mailCount = (dir: string): number =>
  fs.existsSync(path.join(dir, 'outbox')) ? fs.readdirSync(path.join(dir, 'outbox')).length : 0;

/** Awaits a rejection and returns its ApiError code. */
async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isApiError(error)) return error.code;
    throw error;
  }
  throw new Error('expected a refusal');
}

const PASSWORD = 'correct horse battery';

describe('people: sign-up, confirmation, sessions and keys', () => {
  let t: TestApp;
  let people: PeopleService;
  before(async () => {
    t = await startTestApp({ env: { SIGNUP_CREDIT_MINOR: '50000' } });
    people = t.container.services.people;
  });
  after(() => t.close());

  /** A confirmed person signed in: cookie and CSRF token. */
  async function signedIn(email: string, address = '203.0.113.1') {
    await people.signUp({ email, password: PASSWORD, lang: 'en' });
    await people.confirmEmail(outboxLink(t.dir, email, 'confirm'));
    const s = await people.signIn({ email, password: PASSWORD, address });
    return { ...s, cookie: `${SESSION_COOKIE}=${s.token}` };
  }

  test('sign-up mails a link; keys wait for it; the key then works on /v1 with the sign-up credit', async () => {
    const { personId, accountId } = await people.signUp({
      email: ' Ann@Example.COM ',
      password: PASSWORD,
      lang: 'ru',
    });
    const token = outboxLink(t.dir, 'ann@example.com', 'confirm');
    assert.equal(
      await codeOf(people.createKey(personId, { name: 'k', models: null, dailyLimitMinor: null })),
      'email_not_confirmed',
    );
    const s = await people.signIn({ email: 'ann@example.com', password: PASSWORD, address: '198.51.100.7' });
    const before = await people.session(s.token);
    assert.deepEqual(before, {
      personId,
      accountId,
      email: 'ann@example.com',
      emailConfirmed: false,
      lang: 'ru',
      csrf: s.csrf,
    });
    await people.confirmEmail(token);
    assert.equal((await people.session(s.token))?.emailConfirmed, true);
    assert.equal(await codeOf(people.confirmEmail(token)), 'invalid_token', 'a link works once');
    const key = await people.createKey(personId, {
      name: 'studio',
      models: ['image'],
      dailyLimitMinor: 1000,
    });
    const me = await t.call(key.key, 'GET', '/v1/me');
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.json().account_id, accountId);
    assert.equal(me.json().email, 'ann@example.com');
    assert.equal(me.json().email_confirmed, true);
    assert.equal(me.json().available_minor, 50_000);
    assert.deepEqual(me.json().models, ['image']);
    const ledger = (await t.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).json().entries;
    assert.deepEqual(
      ledger.map((e: { reference: string }) => e.reference),
      [`signup:${accountId}`],
    );
    assert.deepEqual(
      (await people.keys(personId)).map((k) => k.id),
      [key.id],
    );
  });

  test('a new confirmation link can be asked for, in the person’s language; none once confirmed', async () => {
    const { personId } = await people.signUp({ email: 'olga@example.com', password: PASSWORD, lang: 'ru' });
    const first = outboxLink(t.dir, 'olga@example.com', 'confirm');
    const raw = latestMail(t.dir);
    assert.ok(
      decodedParts(raw).some((part) => part.includes('Откройте ссылку')),
      'a Russian mail',
    );
    await people.resendConfirmation(personId);
    const second = outboxLink(t.dir, 'olga@example.com', 'confirm');
    assert.notEqual(second, first);
    await people.confirmEmail(second);
    const mails = mailCount(t.dir);
    await people.resendConfirmation(personId);
    assert.equal(mailCount(t.dir), mails);
  });

  test('e-mails and passwords are checked; a taken e-mail is 409 email_taken, whatever its case', async () => {
    await people.signUp({ email: 'bob@example.com', password: PASSWORD, lang: null });
    assert.equal(
      await codeOf(people.signUp({ email: 'BOB@example.com', password: PASSWORD, lang: null })),
      'email_taken',
    );
    for (const email of [
      'bob',
      'bob@',
      '@example.com',
      'a b@example.com',
      `${'x'.repeat(250)}@example.com`,
    ]) {
      assert.equal(
        await codeOf(people.signUp({ email, password: PASSWORD, lang: null })),
        'invalid_request',
        email,
      );
    }
    for (const password of ['short', 'x'.repeat(201)]) {
      assert.equal(
        await codeOf(people.signUp({ email: 'carol@example.com', password, lang: null })),
        'invalid_request',
      );
    }
  });

  test('passwords are 8 to 200 characters counted as characters: an emoji is one, not two', async () => {
    for (const password of ['\u{1f600}'.repeat(4), '\u{1f600}'.repeat(201)]) {
      assert.equal(
        await codeOf(people.signUp({ email: 'emoji@example.com', password, lang: null })),
        'invalid_request',
        `${password.length} UTF-16 units`,
      );
    }
    const long = '\u{1f600}'.repeat(150);
    await people.signUp({ email: 'emoji@example.com', password: long, lang: null });
    const s = await people.signIn({ email: 'emoji@example.com', password: long, address: '198.51.100.41' });
    assert.ok(await people.session(s.token));
  });

  test('an e-mail is one address however its accents were typed (NFC): taken, signed in, found', async () => {
    const composed = '\u00e9lise@example.com';
    const decomposed = 'e\u0301lise@example.com';
    const { accountId } = await people.signUp({ email: decomposed, password: PASSWORD, lang: null });
    assert.equal(
      await codeOf(people.signUp({ email: composed, password: PASSWORD, lang: null })),
      'email_taken',
    );
    const s = await people.signIn({ email: composed, password: PASSWORD, address: '198.51.100.40' });
    assert.equal((await people.session(s.token))?.email, composed);
    const [found] = await people.findAccounts({ email: decomposed });
    assert.equal(found?.id, accountId);
  });

  test('two sign-ups racing with one e-mail make one account and one credit', async () => {
    const results = await Promise.allSettled(
      [1, 2, 3].map(() => people.signUp({ email: 'race@example.com', password: PASSWORD, lang: null })),
    );
    const made = results.filter((r) => r.status === 'fulfilled');
    assert.equal(made.length, 1);
    for (const r of results) {
      if (r.status === 'rejected') assert.equal(isApiError(r.reason) && r.reason.code, 'email_taken');
    }
    const db = t.container.db.db;
    const rows = await db
      .selectFrom('people')
      .select('account_id')
      .where('email', '=', 'race@example.com')
      .execute();
    assert.equal(rows.length, 1);
    const credits = await db
      .selectFrom('ledger_entries')
      .select('reference')
      .where('reference', 'like', 'signup:%')
      .execute();
    const accounts = await db
      .selectFrom('accounts')
      .select('id')
      .where('name', '=', 'race@example.com')
      .execute();
    assert.equal(accounts.length, 1, 'the losers left no account behind');
    assert.equal(credits.filter((c) => c.reference === `signup:${accounts[0]?.id}`).length, 1);
  });

  test('every unsafe /v1 operation declares the 403 csrf_failed a session without the token gets', async () => {
    const s = await signedIn('csrf-doc@example.com');
    // Operations that refuse nothing else with 403; the helper fails an answer the document does not declare.
    for (const [method, url] of [
      ['DELETE', '/v1/files/some-file'],
      ['POST', '/v1/tasks/some-task/cancel'],
      ['POST', '/v1/webhooks'],
      ['POST', '/v1/webhooks/some-hook/rotate-secret'],
      ['POST', '/v1/webhook-deliveries/some-delivery/retry'],
    ] as const) {
      const res = await t.app.inject({ method, url, headers: { cookie: s.cookie }, payload: {} });
      assert.equal(res.statusCode, 403, `${method} ${url}: ${res.body}`);
      assert.equal(res.json().error.code, 'csrf_failed');
    }
  });

  test('a session cookie opens /v1 as the whole account; unsafe calls need the CSRF header', async () => {
    const s = await signedIn('dora@example.com');
    const me = await t.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie: s.cookie } });
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.json().key, null);
    assert.equal(me.json().restricted, false);
    assert.equal(me.json().daily_limit_minor, null);
    assert.equal(me.json().email, 'dora@example.com');
    const task = { model: 'model-3d', settings: { task_type: 'text_to_model', prompt: 'a chair' } };
    const without = await t.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: { cookie: s.cookie },
      payload: task,
    });
    assert.equal(without.statusCode, 403, without.body);
    assert.equal(without.json().error.code, 'csrf_failed');
    const wrong = await t.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: { cookie: s.cookie, [CSRF_HEADER]: `${s.csrf.slice(1)}x` },
      payload: task,
    });
    assert.equal(wrong.json().error.code, 'csrf_failed');
    const made = await t.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: { cookie: `other=1; ${s.cookie}`, [CSRF_HEADER]: s.csrf },
      payload: task,
    });
    assert.equal(made.statusCode, 202, made.body);
    const row = await t.container.db.db
      .selectFrom('tasks')
      .select('key_id')
      .where('id', '=', made.json().id)
      .executeTakeFirstOrThrow();
    assert.equal(row.key_id, null, 'a session is no key');
    // A Bearer header wins over the cookie, even a wrong one.
    const bearer = await t.app.inject({
      method: 'GET',
      url: '/v1/me',
      headers: { cookie: s.cookie, authorization: 'Bearer gta_nope' },
    });
    assert.equal(bearer.json().error.code, 'invalid_api_key');
    await people.signOut(s.token);
    const gone = await t.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie: s.cookie } });
    assert.equal(gone.statusCode, 401);
  });

  test('sign-in: wrong is 401 invalid_credentials; 10 failures per address or per e-mail are 429', async () => {
    const longest = 'p'.repeat(200);
    await people.signUp({ email: 'pat@example.com', password: longest, lang: null });
    assert.ok(await people.signIn({ email: 'pat@example.com', password: longest, address: '192.0.2.99' }));
    assert.equal(
      await codeOf(
        people.signIn({ email: 'pat@example.com', password: `${longest}p`, address: '192.0.2.99' }),
      ),
      'invalid_credentials',
      'a longer password is not its first 200 characters',
    );
    await signedIn('eve@example.com');
    await signedIn('fay@example.com', '203.0.113.9');
    assert.equal(
      await codeOf(
        people.signIn({ email: 'eve@example.com', password: 'wrong password', address: '192.0.2.1' }),
      ),
      'invalid_credentials',
    );
    assert.equal(
      await codeOf(people.signIn({ email: 'nobody@example.com', password: PASSWORD, address: '192.0.2.1' })),
      'invalid_credentials',
    );
    for (let i = 0; i < 8; i++) {
      await codeOf(
        people.signIn({ email: 'eve@example.com', password: 'wrong password', address: '192.0.2.1' }),
      );
    }
    // Ten failures from 192.0.2.1: even the right password of another person is not compared from there.
    try {
      await people.signIn({ email: 'fay@example.com', password: PASSWORD, address: '192.0.2.1' });
      assert.fail('expected 429');
    } catch (error) {
      assert.ok(isApiError(error) && error.code === 'rate_limited');
      assert.ok(Number(error.headers['Retry-After']) > 0);
    }
    // Nine failures on eve's e-mail; one more from elsewhere closes it for every address.
    await codeOf(
      people.signIn({ email: 'eve@example.com', password: 'wrong password', address: '192.0.2.2' }),
    );
    assert.equal(
      await codeOf(people.signIn({ email: 'eve@example.com', password: PASSWORD, address: '192.0.2.3' })),
      'rate_limited',
    );
    assert.ok(await people.signIn({ email: 'fay@example.com', password: PASSWORD, address: '192.0.2.3' }));
  });

  test('sign-ins sent together are counted before any password is compared: ten, then 429', async () => {
    await signedIn('kim@example.com');
    const codes = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        codeOf(people.signIn({ email: 'kim@example.com', password: `guess ${i}`, address: '192.0.2.77' })),
      ),
    );
    assert.equal(codes.filter((code) => code === 'invalid_credentials').length, 10);
    assert.equal(codes.filter((code) => code === 'rate_limited').length, 20);
  });

  test('password reset: silent for strangers, once, ends every session; changing needs the current one', async () => {
    const s = await signedIn('gus@example.com');
    const mails = mailCount(t.dir);
    await people.requestPasswordReset('stranger@example.com');
    assert.equal(mailCount(t.dir), mails, 'no mail for an unknown e-mail');
    await people.requestPasswordReset('GUS@example.com');
    const token = outboxLink(t.dir, 'gus@example.com', 'reset/new');
    assert.equal(await codeOf(people.resetPassword(token, 'short')), 'invalid_request');
    await people.resetPassword(token, 'a brand new secret');
    assert.equal(await people.session(s.token), null, 'the old session ended');
    assert.equal(await codeOf(people.resetPassword(token, 'another new secret')), 'invalid_token');
    assert.equal(
      await codeOf(people.signIn({ email: 'gus@example.com', password: PASSWORD, address: '192.0.2.50' })),
      'invalid_credentials',
    );
    const again = await people.signIn({
      email: 'gus@example.com',
      password: 'a brand new secret',
      address: '192.0.2.50',
    });
    const from = { sessionToken: again.token, address: '192.0.2.50' };
    assert.equal(
      await codeOf(people.changePassword(again.personId, PASSWORD, 'third secret!', from)),
      'invalid_credentials',
    );
    await people.changePassword(again.personId, 'a brand new secret', 'third secret!', from);
    assert.ok(
      await people.signIn({ email: 'gus@example.com', password: 'third secret!', address: '192.0.2.50' }),
    );
    await people.setLanguage(again.personId, 'ru');
    assert.equal((await people.session(again.token))?.lang, 'ru');
  });

  test('a new password ends the person’s other sessions and every reset link still open', async () => {
    const here = await signedIn('ned@example.com');
    const elsewhere = await people.signIn({
      email: 'ned@example.com',
      password: PASSWORD,
      address: '198.51.100.60',
    });
    await people.requestPasswordReset('ned@example.com');
    const link = outboxLink(t.dir, 'ned@example.com', 'reset/new');
    await people.changePassword(here.personId, PASSWORD, 'changed secret 1', {
      sessionToken: here.token,
      address: '198.51.100.60',
    });
    assert.ok(await people.session(here.token), 'the session that changed it stays signed in');
    assert.equal(await people.session(elsewhere.token), null, 'any other session ended');
    assert.equal(await codeOf(people.resetPassword(link, 'taken over secret')), 'invalid_token');

    // A reset closes the links asked for before it too, not only its own.
    await people.requestPasswordReset('ned@example.com');
    const older = outboxLink(t.dir, 'ned@example.com', 'reset/new');
    await people.requestPasswordReset('ned@example.com');
    const newer = outboxLink(t.dir, 'ned@example.com', 'reset/new');
    assert.notEqual(older, newer);
    await people.resetPassword(newer, 'reset secret 2');
    assert.equal(await codeOf(people.resetPassword(older, 'taken over secret')), 'invalid_token');
    assert.ok(
      await people.signIn({ email: 'ned@example.com', password: 'reset secret 2', address: '198.51.100.60' }),
    );
  });

  test('a sign-in with the old password that ends after a reset or a change opens no session', async () => {
    // A sign-in compares the password (a tenth of a second of scrypt) before it makes its session: one
    // that compared the old password while the person reset or changed it must not make a session after
    // the new password ended every other one, or whoever knew the old password stays signed in.
    /** A sign-in held between its comparison (then `compared` resolves) and its session until `go()`. */
    const heldSignIn = (password: string, address: string) => {
      const compared = Promise.withResolvers<void>();
      const release = Promise.withResolvers<void>();
      class HeldLimiter extends LoginLimiter {
        override async succeeded(client: string, email: string): Promise<void> {
          compared.resolve();
          await release.promise;
          await super.succeeded(client, email);
        }
      }
      const held = new PeopleService({
        db: t.container.db,
        clock: t.container.clock,
        mailer: { send: async () => {}, close: () => {} },
        models: t.container.services.models,
        limiter: new HeldLimiter(),
        publicBaseUrl: 'http://api.test',
        signupCreditMinor: 0,
        sessionTtlMs: 3_600_000,
      });
      const code = codeOf(held.signIn({ email: 'quin@example.com', password, address }));
      return { compared: compared.promise, go: () => release.resolve(), code };
    };
    const owner = await signedIn('quin@example.com');
    const late = heldSignIn(PASSWORD, '192.0.2.90');
    await late.compared;
    await people.requestPasswordReset('quin@example.com');
    await people.resetPassword(outboxLink(t.dir, 'quin@example.com', 'reset/new'), 'reset while signing in');
    assert.equal(await people.session(owner.token), null);
    late.go();
    assert.equal(
      await late.code,
      'invalid_credentials',
      'the password it compared is no longer the password',
    );

    // The same with a change of the password from a session, which stays.
    const again = await people.signIn({
      email: 'quin@example.com',
      password: 'reset while signing in',
      address: '192.0.2.91',
    });
    const stale = heldSignIn('reset while signing in', '192.0.2.92');
    await stale.compared;
    await people.changePassword(again.personId, 'reset while signing in', 'changed meanwhile', {
      sessionToken: again.token,
      address: '192.0.2.91',
    });
    stale.go();
    assert.equal(await stale.code, 'invalid_credentials');
    assert.ok(await people.session(again.token), 'the session that changed it stays');
  });

  test('the current password asked by a change is limited like sign-in; reset mails per e-mail too', async () => {
    const s = await signedIn('oli@example.com');
    const from = { sessionToken: s.token, address: '198.51.100.70' };
    for (let i = 0; i < 10; i++) {
      assert.equal(
        await codeOf(people.changePassword(s.personId, `guess ${i} wrong`, 'stolen secret', from)),
        'invalid_credentials',
      );
    }
    // Past the e-mail's budget even the right password is not compared, from any address, and sign-in
    // (which counts the same failures) waits too.
    assert.equal(
      await codeOf(
        people.changePassword(s.personId, PASSWORD, 'stolen secret', { ...from, address: '198.51.100.71' }),
      ),
      'rate_limited',
    );
    assert.equal(
      await codeOf(people.signIn({ email: 'oli@example.com', password: PASSWORD, address: '198.51.100.72' })),
      'rate_limited',
    );

    const mails = mailCount(t.dir);
    for (let i = 0; i < 8; i++) await people.requestPasswordReset('oli@example.com');
    assert.equal(mailCount(t.dir), mails + 5, 'five reset mails an hour, then silence');
  });

  test('a mail server that does not answer holds a sign-up only up to its wait; the mail goes on', async () => {
    const held = Promise.withResolvers<void>();
    const asked: string[] = [];
    const slow = new PeopleService({
      db: t.container.db,
      clock: t.container.clock,
      mailer: {
        send: (message) => {
          asked.push(message.to);
          return held.promise;
        },
        close: () => {},
      },
      models: t.container.services.models,
      limiter: new LoginLimiter(),
      publicBaseUrl: 'https://studio.example',
      signupCreditMinor: 0,
      sessionTtlMs: 3_600_000,
      mailWaitMs: 20,
    });
    const made = await slow.signUp({ email: 'slow@example.com', password: PASSWORD, lang: null });
    assert.ok(made.accountId, 'answered while the mail server still holds the mail');
    assert.deepEqual(asked, ['slow@example.com']);
    let sent = false;
    const all = slow.mailsSent().then(() => {
      sent = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(sent, false, 'the mail is still going out');
    held.resolve();
    await all;
    assert.equal(sent, true);
  });

  test('confirmation mails share the five mails an hour; past them a resend is 429', async () => {
    const { personId } = await people.signUp({ email: 'pia@example.com', password: PASSWORD, lang: null });
    const mails = mailCount(t.dir);
    await people.requestPasswordReset('pia@example.com');
    for (let i = 0; i < 4; i++) await people.resendConfirmation(personId);
    assert.equal(mailCount(t.dir), mails + 5);
    assert.equal(await codeOf(people.resendConfirmation(personId)), 'rate_limited');
    await people.requestPasswordReset('pia@example.com');
    assert.equal(mailCount(t.dir), mails + 5, 'nor a reset mail, for the same address');
  });

  test('keys: ten active at most, revoked ones stop working, another account’s key is 404', async () => {
    const s = await signedIn('hal@example.com');
    const other = await t.account();
    assert.equal(await codeOf(people.revokeKey(s.personId, other.keyId)), 'key_not_found');
    assert.equal((await t.call(other.key, 'GET', '/v1/me')).statusCode, 200);
    assert.equal(
      await codeOf(
        people.createKey(s.personId, { name: null, models: ['no-such-model'], dailyLimitMinor: null }),
      ),
      'model_not_found',
    );
    const keys = [];
    for (let i = 0; i < 10; i++)
      keys.push(await people.createKey(s.personId, { name: `k${i}`, models: null, dailyLimitMinor: null }));
    assert.equal(
      await codeOf(people.createKey(s.personId, { name: 'k11', models: null, dailyLimitMinor: null })),
      'too_many_keys',
    );
    const first = keys[0]!;
    await people.revokeKey(s.personId, first.id);
    assert.equal((await t.call(first.key, 'GET', '/v1/me')).statusCode, 401);
    const listed = await people.keys(s.personId);
    assert.equal(listed.length, 10);
    assert.ok(listed.find((k) => k.id === first.id)?.revoked_at);
    assert.ok(!JSON.stringify(listed).includes(first.key), 'a key is shown once only');
    assert.ok(await people.createKey(s.personId, { name: 'k11', models: null, dailyLimitMinor: null }));
  });

  test('the operator finds accounts by e-mail or name and attaches an e-mail to an operator-made account', async () => {
    await signedIn('ivy@example.com');
    const byEmail = await t.admin('GET', '/admin/v1/accounts?email=IVY@example.com');
    assert.equal(byEmail.statusCode, 200, byEmail.body);
    assert.deepEqual(
      byEmail.json().accounts.map((a: { email: string }) => a.email),
      ['ivy@example.com'],
    );
    assert.equal(byEmail.json().accounts[0].email_confirmed, true);
    const plain = await t.account();
    await t.admin('POST', '/admin/v1/accounts', { name: 'Zed 100%_Studio' });
    const byName = await t.admin('GET', `/admin/v1/accounts?q=${encodeURIComponent('ZED 100%_')}`);
    assert.deepEqual(
      byName.json().accounts.map((a: { name: string }) => a.name),
      ['Zed 100%_Studio'],
    );
    assert.equal(byName.json().accounts[0].email, null);
    assert.equal((await t.admin('GET', '/admin/v1/accounts?q=ivy@')).json().accounts.length, 1);
    // Letters beyond ASCII fold too, on SQLite as on PostgreSQL.
    await t.admin('POST', '/admin/v1/accounts', { name: 'ООО Ромашка' });
    for (const q of ['ромашка', 'РОМАШКА', 'Ромашка']) {
      const found = await t.admin('GET', `/admin/v1/accounts?q=${encodeURIComponent(q)}`);
      assert.deepEqual(
        found.json().accounts.map((a: { name: string }) => a.name),
        ['ООО Ромашка'],
        q,
      );
    }
    // A name sent decomposed (`й` as `и` and a combining breve, as text copied on macOS) is kept composed,
    // as the search composes what is searched for: otherwise no search typed on a keyboard finds it.
    const decomposed = 'ООО Зайка'.normalize('NFD');
    const made = await t.admin('POST', '/admin/v1/accounts', { name: decomposed });
    assert.equal(made.json().name, 'ООО Зайка'.normalize('NFC'));
    for (const q of ['зайка', 'ЗАЙКА'.normalize('NFD')]) {
      const found = await t.admin('GET', `/admin/v1/accounts?q=${encodeURIComponent(q)}`);
      assert.deepEqual(
        found.json().accounts.map((a: { name: string }) => a.name),
        ['ООО Зайка'],
        q,
      );
    }
    assert.equal((await t.admin('GET', '/admin/v1/accounts?q=ivy@&lang=ru')).json().accounts.length, 1);

    const attached = await t.admin('POST', `/admin/v1/accounts/${plain.id}/email`, {
      email: 'Jon@Example.com',
    });
    assert.equal(attached.statusCode, 200, attached.body);
    assert.equal(attached.json().email, 'jon@example.com');
    assert.equal(attached.json().email_confirmed, false);
    assert.ok(outboxLink(t.dir, 'jon@example.com', 'confirm'));
    const twice = await t.admin('POST', `/admin/v1/accounts/${plain.id}/email`, {
      email: 'other@example.com',
    });
    assert.equal(twice.json().error.code, 'account_has_email');
    const another = await t.account();
    const taken = await t.admin('POST', `/admin/v1/accounts/${another.id}/email`, {
      email: 'ivy@example.com',
    });
    assert.equal(taken.statusCode, 409);
    assert.equal(taken.json().error.code, 'email_taken');
    const missing = await t.admin('POST', '/admin/v1/accounts/nope/email', { email: 'kim@example.com' });
    assert.equal(missing.statusCode, 404);
    // No password yet: the person sets one through a reset, and the old key keeps working.
    assert.equal(
      await codeOf(people.signIn({ email: 'jon@example.com', password: PASSWORD, address: '192.0.2.70' })),
      'invalid_credentials',
    );
    await people.requestPasswordReset('jon@example.com');
    await people.resetPassword(outboxLink(t.dir, 'jon@example.com', 'reset/new'), PASSWORD);
    const s = await people.signIn({ email: 'jon@example.com', password: PASSWORD, address: '192.0.2.70' });
    assert.equal((await people.session(s.token))?.accountId, plain.id);
    assert.equal((await t.call(plain.key, 'GET', '/v1/me')).json().email, 'jon@example.com');
  });
});

describe('people: expiry of links and sessions', () => {
  test('confirmation links last 48 hours, reset links 1 hour, sessions SESSION_TTL', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00.000Z');
    const t = await startTestApp({ clock, worker: false, env: { SESSION_TTL: '2h' } });
    try {
      const people = t.container.services.people;
      await people.signUp({ email: 'late@example.com', password: PASSWORD, lang: null });
      const confirm = outboxLink(t.dir, 'late@example.com', 'confirm');
      const s = await people.signIn({ email: 'late@example.com', password: PASSWORD, address: '192.0.2.80' });
      await people.requestPasswordReset('late@example.com');
      const reset = outboxLink(t.dir, 'late@example.com', 'reset/new');
      clock.advance(61 * 60_000);
      assert.equal(await codeOf(people.resetPassword(reset, 'new secret 123')), 'invalid_token');
      assert.ok(await people.session(s.token));
      clock.advance(60 * 60_000);
      assert.equal(await people.session(s.token), null, 'past SESSION_TTL');
      clock.advance(47 * 60 * 60_000);
      assert.equal(await codeOf(people.confirmEmail(confirm)), 'invalid_token');
      assert.equal(await codeOf(people.confirmEmail('not-a-token')), 'invalid_token');
    } finally {
      await t.close();
    }
  });
});

describe('people: the operator CLI', () => {
  test('accounts find and accounts email call the same service as the operator API', async () => {
    const t = await startTestApp({ worker: false });
    try {
      const plain = await t.account();
      const attached = (await runAdminCommand(t.container.services, ['accounts', 'email', plain.id], {
        email: 'Lee@Example.com',
      })) as { email: string; email_confirmed: boolean };
      assert.equal(attached.email, 'lee@example.com');
      assert.equal(attached.email_confirmed, false);
      assert.ok(outboxLink(t.dir, 'lee@example.com', 'confirm'));
      const found = (await runAdminCommand(t.container.services, ['accounts', 'find'], { q: 'LEE@' })) as {
        accounts: Array<{ id: string }>;
      };
      assert.deepEqual(
        found.accounts.map((a) => a.id),
        [plain.id],
      );
      await assert.rejects(
        runAdminCommand(t.container.services, ['accounts', 'email', plain.id], { email: 'x@example.com' }),
        { code: 'account_has_email' },
      );
      // What the API refuses (422 past 254 characters), the command line refuses too.
      for (const option of ['q', 'email']) {
        const long = { [option]: 'a'.repeat(255) };
        assert.equal(
          (await t.admin('GET', `/admin/v1/accounts?${new URLSearchParams(long)}`)).statusCode,
          422,
        );
        await assert.rejects(runAdminCommand(t.container.services, ['accounts', 'find'], long), {
          code: 'invalid_request',
        });
      }
    } finally {
      await t.close();
    }
  });
});

describe('people: sessions on /v1 share the account’s limits; mail failures do not lose sign-ups', () => {
  test('a session’s requests count against the account’s request budget, with its keys', async () => {
    const t = await startTestApp({
      worker: false,
      limits: { accountRequests: 3, wrongKeyAttempts: 100, windowSeconds: 60 },
    });
    try {
      const people = t.container.services.people;
      await people.signUp({ email: 'max@example.com', password: PASSWORD, lang: null });
      await people.confirmEmail(outboxLink(t.dir, 'max@example.com', 'confirm'));
      const s = await people.signIn({ email: 'max@example.com', password: PASSWORD, address: '192.0.2.90' });
      const key = await people.createKey(s.personId, { name: null, models: null, dailyLimitMinor: null });
      const cookie = `${SESSION_COOKIE}=${s.token}`;
      const first = await t.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie } });
      assert.match(String(first.headers.ratelimit), /r=2/);
      assert.equal((await t.call(key.key, 'GET', '/v1/me')).statusCode, 200);
      assert.equal(
        (await t.app.inject({ method: 'GET', url: '/v1/models', headers: { cookie } })).statusCode,
        200,
      );
      const over = await t.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie } });
      assert.equal(over.statusCode, 429);
      assert.equal(over.json().error.code, 'rate_limited');
    } finally {
      await t.close();
    }
  });

  test('with the SMTP server down, sign-up still makes the account and logs the failed mail', async () => {
    const lines: string[] = [];
    const t = await startTestApp({
      worker: false,
      env: { SMTP_URL: 'smtp://u:never-logged@127.0.0.1:9', LOG_LEVEL: 'warn' },
      logDestination: new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    });
    try {
      const made = await t.container.services.people.signUp({
        email: 'ned@example.com',
        password: PASSWORD,
        lang: null,
      });
      assert.ok(made.accountId);
      assert.ok(lines.some((l) => l.includes('sending a mail failed')));
      assert.ok(!lines.join('').includes('never-logged'), 'the SMTP password is never written');
      assert.equal(fs.existsSync(path.join(t.dir, 'outbox')), false);
    } finally {
      await t.close();
    }
  });
});
