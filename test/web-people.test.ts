/**
 * The dashboard's pages on the real people service (no fake): sign-up, the confirmation mail in the
 * outbox, a key made in the page working on /v1, revoking it, the reset link, and the Russian interface
 * of a person who chose it. SQLite by default; PostgreSQL with TEST_DATABASE_URL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from './helpers.ts';
import { mailedLink, outboxLink } from './mail-kit.ts';
import { Browser, buttons, textOf } from './web-kit.ts';

describe('dashboard on the people service', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ worker: false });
  });
  after(() => t.close());

  test('sign-up → outbox → confirm → Create key → /v1/me → Revoke → 401', async () => {
    const browser = new Browser(t);
    const email = 'web-real@example.com';
    await browser.signUp(email, 'correct horse battery');
    assert.ok(buttons(browser.lastBody).includes('Sign out'));
    const early = await browser.get('/keys');
    assert.ok(!buttons(early.body).includes('Create key'), 'keys wait for the confirmation');

    const confirmed = await browser.get(`/confirm?token=${outboxLink(t.dir, email, 'confirm')}`);
    assert.equal(confirmed.statusCode, 303);
    assert.equal(confirmed.headers.location, '/keys');
    const keys = await browser.get('/keys');
    assert.match(keys.body, /Your e-mail is confirmed/);
    // The same link again, by its person, signed in and confirmed: no failure to them.
    await browser.get(`/confirm?token=${outboxLink(t.dir, email, 'confirm')}`);
    const again = await browser.get('/keys');
    assert.match(textOf(again.body), /Your e-mail is already confirmed\./);
    assert.doesNotMatch(again.body, /was used or has expired/);

    const created = await browser.post('/keys', { action: 'create', name: 'laptop', models: 'model-3d' });
    assert.equal(created.statusCode, 303, created.body);
    const key = /gta_[A-Za-z0-9]{32}/.exec((await browser.get('/keys')).body)?.[0];
    assert.ok(key);
    const me = await t.call(key, 'GET', '/v1/me');
    assert.equal(me.statusCode, 200);
    assert.equal(me.json().email, email);
    assert.equal(me.json().email_confirmed, true);

    const listed = await browser.get('/keys');
    assert.ok(!listed.body.includes(key), 'shown once');
    // The hints under the models and the daily limit are read with them (their accessible descriptions).
    assert.match(listed.body, /<fieldset aria-describedby="key-models-hint">/);
    assert.match(listed.body, /<p class="hint" id="key-models-hint">/);
    assert.match(listed.body, /name="daily_limit"[^>]*aria-describedby="key-limit-hint"/);
    assert.match(listed.body, /<p class="hint" id="key-limit-hint">Rubles per Moscow day/);
    const id = /name="revoke" value="([^"]+)"/.exec(listed.body)?.[1];
    assert.ok(id);
    await browser.get(`/keys?revoke=${id}`);
    assert.equal((await browser.post('/keys', { action: 'revoke', id })).statusCode, 303);
    assert.equal((await t.call(key, 'GET', '/v1/me')).statusCode, 401);
    assert.match(textOf((await browser.get('/keys')).body), /Revoked \d{4}-\d{2}-\d{2}/);
  });

  test('a taken e-mail and a wrong password are shown in the page; a reset link sets a new password', async () => {
    const browser = new Browser(t);
    const email = 'web-reset@example.com';
    const signUpForm = (await browser.get('/signup')).body;
    assert.match(signUpForm, /name="password"[^>]*aria-describedby="password-hint"/);
    assert.match(signUpForm, /<p class="hint" id="password-hint">At least 8 characters\.<\/p>/);
    await browser.signUp(email, 'first password 1');
    await browser.post('/signout', {});
    await browser.get('/signup');
    const taken = await browser.post('/signup', { email, password: 'another password' });
    assert.ok(taken.statusCode >= 400 && taken.statusCode < 500, String(taken.statusCode));
    assert.match(taken.body, /role="alert"/);
    await browser.get('/signin');
    const wrong = await browser.post('/signin', { email, password: 'not the password' });
    assert.equal(wrong.statusCode, 401);
    assert.match(wrong.body, /role="alert"/);

    await browser.get('/reset');
    await browser.post('/reset', { email });
    // The answer does not wait for the mail (its time would tell that the e-mail has an account).
    const landing = await browser.get(`/reset/new?token=${await mailedLink(t.dir, email, 'reset/new')}`);
    assert.equal(landing.headers.location, '/reset/new');
    // Opening the page checks the link without using it up.
    assert.match((await browser.get('/reset/new')).body, /name="password"/);
    assert.match((await browser.get('/reset/new')).body, /name="password"/);
    assert.equal((await browser.post('/reset/new', { password: 'second password 2' })).statusCode, 303);
    await browser.get(`/reset/new?token=${outboxLink(t.dir, email, 'reset/new')}`);
    const used = await browser.get('/reset/new');
    assert.match(used.body, /This link was used or has expired\./);
    assert.doesNotMatch(used.body, /name="password"/);
    await browser.get('/signin');
    assert.equal((await browser.post('/signin', { email, password: 'second password 2' })).statusCode, 303);
  });

  test('signing in as someone else over a live session ends that session', async () => {
    const alice = new Browser(t);
    const aliceEmail = await alice.signUp();
    await alice.post('/signout', {});
    const bob = new Browser(t);
    await bob.signUp();
    await bob.get('/settings');
    const bobSession = bob.cookies.get('gta_session')?.value;
    assert.ok(bobSession);
    const me = (session: string) =>
      t.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie: `gta_session=${session}` } });
    assert.equal((await me(bobSession)).statusCode, 200);
    // Bob's browser posts the sign-in form as Alice (GET /signin sends a signed-in visitor away).
    const over = await bob.post('/signin', { email: aliceEmail, password: 'correct horse 1' });
    assert.equal(over.statusCode, 303, over.body);
    assert.notEqual(bob.cookies.get('gta_session')?.value, bobSession);
    assert.equal((await me(bobSession)).statusCode, 401, "Bob's old session opens nothing any more");
  });

  test("a reset link opened over another person's session names its owner, ends that session, drops its cookie", async () => {
    const alice = new Browser(t);
    await alice.signUp();
    await alice.get('/settings');
    const aliceSession = alice.cookies.get('gta_session')?.value;
    assert.ok(aliceSession);
    const bob = new Browser(t);
    const bobEmail = await bob.signUp();
    await bob.post('/signout', {});
    // Bob asks for a reset link and opens it in Alice's browser, where she is signed in.
    await bob.get('/reset');
    await bob.post('/reset', { email: bobEmail });
    await alice.get(`/reset/new?token=${await mailedLink(t.dir, bobEmail, 'reset/new')}`);
    // The form says whose password it sets: a link passed on by its owner names the owner.
    const form = (await alice.get('/reset/new')).body;
    assert.match(form, /This link sets the password of the account of <strong>([^<]+)<\/strong>/);
    assert.equal(/account of <strong>([^<]+)<\/strong>/.exec(form)?.[1], bobEmail);
    assert.equal((await alice.post('/reset/new', { password: 'bob new password' })).statusCode, 303);
    assert.equal(alice.cookies.get('gta_session'), undefined, 'the browser is signed out');
    const me = await t.app.inject({
      method: 'GET',
      url: '/v1/me',
      headers: { cookie: `gta_session=${aliceSession}` },
    });
    assert.equal(me.statusCode, 401, "Alice's dropped session opens nothing any more");
  });

  test("refusals name the field with the form's label, in the page's language; the API keeps its words", async () => {
    // Said at the field: the one control marked invalid (with the focus) names the message under it.
    const atField = (body: string) => {
      const control = /<input [^>]*aria-invalid="true"[^>]*>/.exec(body)?.[0] ?? '';
      const id = /aria-describedby="([^"]+)"/.exec(control)?.[1];
      assert.match(control, / autofocus/);
      assert.equal(body.match(/aria-invalid=/g)?.length, 1);
      // The alert above the form says it too.
      assert.match(body, /<p class="error" role="alert">/);
      return textOf(
        new RegExp(`<p class="error field-problem" id="${id}">[^<]*</p>`).exec(body)?.[0] ?? '',
      ).trim();
    };
    const en = new Browser(t, { 'accept-language': 'en' });
    await en.get('/signup');
    const badEmail = await en.post('/signup', { email: 'not an address', password: 'correct horse battery' });
    assert.equal(badEmail.statusCode, 422);
    assert.equal(atField(badEmail.body), 'E-mail: not a valid e-mail address (at most 254 characters).');
    const short = await en.post('/signup', { email: 'web-labels@example.com', password: 'short' });
    assert.equal(atField(short.body), 'Password: from 8 to 200 characters.');
    await en.signUp('web-labels@example.com', 'correct horse battery');
    await en.get('/settings');
    const settings = await en.post('/settings', { current: 'correct horse battery', password: 'short' });
    assert.equal(settings.statusCode, 422);
    assert.equal(atField(settings.body), 'New password: from 8 to 200 characters.');

    const ru = new Browser(t, { 'accept-language': 'ru' });
    await ru.get('/signup');
    const ruEmail = await ru.post('/signup', { email: 'не адрес', password: 'correct horse battery' });
    assert.equal(atField(ruEmail.body), 'Эл. почта: это не адрес эл. почты (не длиннее 254 символов).');
    await ru.signUp('web-labels-ru@example.com', 'correct horse battery');
    await ru.get('/settings');
    const ruSettings = await ru.post('/settings', { current: 'correct horse battery', password: 'short' });
    assert.equal(atField(ruSettings.body), 'Новый пароль: от 8 до 200 символов.');

    // The JSON API answers as before: the field is its own name there.
    const account = (await t.admin('POST', '/admin/v1/accounts', { name: 'labels' })).json().id as string;
    const api = await t.admin('POST', `/admin/v1/accounts/${account}/email`, { email: 'not an address' });
    assert.equal(api.statusCode, 422);
    assert.match(api.json().error.message, /^email: not a valid e-mail address/);
  });

  test('an e-mail thousands of characters long signs nobody in and is refused as a wrong one', async () => {
    // On PostgreSQL the failure counter's key column holds 255 characters: this was a 500 page there.
    const browser = new Browser(t);
    await browser.get('/signin');
    for (const length of [300, 20_000]) {
      const res = await browser.post('/signin', {
        email: `${'a'.repeat(length)}@example.com`,
        password: 'x',
      });
      assert.equal(res.statusCode, 401, `${length}`);
      assert.match(res.body, /The e-mail or the password is wrong\./);
    }
  });

  test('a person who chose Russian gets it on the next sign-in, whatever the browser says', async () => {
    const browser = new Browser(t, { 'accept-language': 'en' });
    const email = 'web-ru@example.com';
    await browser.signUp(email, 'correct horse battery');
    await browser.post('/language', { lang: 'ru', next: '/' });
    await browser.post('/signout', {});
    const fresh = new Browser(t, { 'accept-language': 'en' });
    await fresh.get('/signin');
    await fresh.post('/signin', { email, password: 'correct horse battery' });
    const home = await fresh.get('/');
    assert.match(home.body, /<html lang="ru"/);
    assert.ok(buttons(home.body).includes('Выйти'));
  });
});

describe('dashboard sign-up from an address locked out of sign-in', () => {
  test("other people's failed sign-ins behind one address do not keep a new account out", async () => {
    const t = await startTestApp({ worker: false });
    try {
      // Ten failures from this address (an office's, say): its sign-ins wait now.
      const stranger = new Browser(t);
      await stranger.get('/signin');
      for (let i = 0; i < 10; i++)
        await stranger.post('/signin', { email: 'x@example.com', password: 'wrong one' });
      assert.equal(
        (await stranger.post('/signin', { email: 'x@example.com', password: 'wrong one' })).statusCode,
        429,
      );
      // A new person behind the same address signs up, and is signed in at once, as every new person is.
      const browser = new Browser(t);
      await browser.get('/signup');
      const made = await browser.post('/signup', {
        email: 'office@example.com',
        password: 'correct horse battery',
      });
      assert.equal(made.statusCode, 303, made.body);
      assert.equal(made.headers.location, '/');
      const home = await browser.get('/');
      assert.ok(buttons(home.body).includes('Sign out'));
      assert.match(textOf(home.body), /We sent a confirmation link to your e-mail/);
    } finally {
      await t.close();
    }
  });
});
