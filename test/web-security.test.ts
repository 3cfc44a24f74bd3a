/**
 * The dashboard's security and language rules (CONTRACT §13): CSRF on every POST, the security headers
 * on pages only (not on /v1), no inline script, tokens of e-mail links never logged, and the language
 * choice (the person's setting or the `lang` cookie wins over Accept-Language) with Russian words.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from './helpers.ts';
import { Browser, buttons, FakePeople, labels, startWithFakePeople } from './web-kit.ts';

describe('dashboard security', () => {
  let t: TestApp;
  let people: FakePeople;
  const lines: string[] = [];
  before(async () => {
    ({ t, people } = await startWithFakePeople({
      env: { LOG_LEVEL: 'info' },
      logDestination: new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    }));
  });
  after(() => t.close());

  test('a POST without the CSRF token, or with another one, is refused with a 403 page', async () => {
    const browser = new Browser(t);
    await browser.get('/signup');
    const none = await browser.post('/signup', {
      _csrf: '',
      email: 'a@example.com',
      password: 'long enough 1',
    });
    assert.equal(none.statusCode, 403);
    assert.match(none.body, /This form has expired/);
    assert.equal(people.persons.size, 0, 'nothing was done');
    const forged = await browser.post('/signin', {
      _csrf: 'A'.repeat(43),
      email: 'a@example.com',
      password: 'x',
    });
    assert.equal(forged.statusCode, 403);

    // Signed in, the session's token is required: the signed-out cookie's no longer counts.
    const email = await browser.signUp();
    const anon = browser.cookies.get('gta_csrf')?.value ?? '';
    const withAnon = await browser.post('/settings', {
      _csrf: anon,
      current: 'correct horse 1',
      password: 'x'.repeat(9),
    });
    assert.equal(withAnon.statusCode, 403);
    const signOutForged = await browser.post('/signout', { _csrf: 'forged' });
    assert.equal(signOutForged.statusCode, 403);
    assert.ok(people.sessions.size > 0, 'still signed in');

    // The header works for calls that are not forms.
    const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v.value}`).join('; ');
    const viaHeader = await t.app.inject({
      method: 'POST',
      url: '/signout',
      headers: { cookie, 'x-csrf-token': browser.csrf },
    });
    assert.equal(viaHeader.statusCode, 303);
    assert.ok(email);
  });

  test('a form sent after its session ended sends the person to sign in and back, saying why', async () => {
    const browser = new Browser(t);
    await browser.signUp();
    assert.equal((await browser.get('/settings')).statusCode, 200);
    // Signed out meanwhile, in another tab: the same session cookie, with its token.
    const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v.value}`).join('; ');
    const out = await t.app.inject({
      method: 'POST',
      url: '/signout',
      headers: { cookie, 'x-csrf-token': browser.csrf },
    });
    assert.equal(out.statusCode, 303);
    const sent = await browser.post('/settings', { current: 'correct horse 1', password: 'y'.repeat(12) });
    assert.equal(sent.statusCode, 303);
    assert.equal(sent.headers.location, '/signin?next=%2Fsettings');
    const signin = await browser.get('/signin?next=%2Fsettings');
    assert.match(
      signin.body,
      /You were signed out \(in another tab, or as the session expired\), so the form was not sent/,
    );
    // Without a session cookie at all the form is still one from nowhere: the 403 page.
    const stranger = new Browser(t);
    await stranger.get('/signin');
    const forged = await stranger.post('/settings', {
      _csrf: 'forged',
      current: 'x',
      password: 'y'.repeat(12),
    });
    assert.equal(forged.statusCode, 403);
  });

  test('pages carry CSP without inline scripts, frame-ancestors none, no-referrer; /v1 does not', async () => {
    const browser = new Browser(t);
    const res = await browser.get('/signin');
    const csp = String(res.headers['content-security-policy']);
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.equal(res.headers['cache-control'], 'no-store');
    for (const script of res.body.match(/<script[^>]*>[\s\S]*?<\/script>/g) ?? []) {
      assert.match(script, /^<script[^>]* src="\/assets\/[^"]+"[^>]*><\/script>$/, script);
    }
    assert.doesNotMatch(res.body, / on[a-z]+="/, 'no inline event handlers');

    const account = await t.account();
    const api = await t.call(account.key, 'GET', '/v1/me', undefined, { cookie: 'gta_session=x' });
    assert.equal(api.statusCode, 200);
    assert.equal(api.headers['content-security-policy'], undefined);
    assert.equal(api.headers['set-cookie'], undefined);
    // A session cookie is no key on /v1.
    const cookieOnly = await t.app.inject({
      method: 'GET',
      url: '/v1/me',
      headers: { cookie: 'gta_session=x' },
    });
    assert.equal(cookieOnly.statusCode, 401);
  });

  test("an account's /v1 answers are never stored, with a key or a session", async () => {
    const account = await t.account();
    for (const path of ['/v1/me', '/v1/tasks', '/v1/webhooks/default/secret', '/v1/tasks/nope']) {
      const res = await t.call(account.key, 'GET', path);
      assert.equal(res.headers['cache-control'], 'no-store', path);
    }
    const people = t.container.services.people;
    const email = `cache-${Date.now()}@example.com`;
    await people.signUp({ email, password: 'a long password', lang: 'en' });
    const session = await people.signIn({ email, password: 'a long password', address: '203.0.113.9' });
    const cookie = `gta_session=${session.token}`;
    const me = await t.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie } });
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.headers['cache-control'], 'no-store');
    // The operator API's answers too: a new key's secret, accounts, refusals.
    const made = await t.admin('POST', `/admin/v1/accounts/${account.id}/keys`, {});
    assert.equal(made.statusCode, 201, made.body);
    assert.equal(made.headers['cache-control'], 'no-store');
    assert.equal((await t.admin('GET', '/admin/v1/accounts?q=x')).headers['cache-control'], 'no-store');
    const refused = await t.app.inject({ method: 'GET', url: '/admin/v1/accounts' });
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.headers['cache-control'], 'no-store');
  });

  test('session cookies are Secure when the public address is https', async () => {
    const secure = await startTestApp({
      env: { PUBLIC_BASE_URL: 'https://dash.example' },
      people: (container) => new FakePeople(container),
    });
    try {
      const browser = new Browser(secure);
      await browser.signUp();
      assert.match(browser.cookies.get('gta_session')?.attributes ?? '', /Secure/);
      assert.match(browser.cookies.get('gta_csrf')?.attributes ?? '', /Secure/);
    } finally {
      await secure.close();
    }
  });

  test('tokens of e-mail links are not written in the logs', async () => {
    const browser = new Browser(t);
    const secret = 'Zx9'.repeat(14);
    await browser.get(`/confirm?token=${secret}`);
    await browser.get(`/reset/new?token=${secret}`);
    const logged = lines.filter((l) => l.includes('/confirm') || l.includes('/reset/new'));
    assert.ok(logged.length >= 2, 'the requests were logged');
    assert.ok(!lines.some((l) => l.includes(secret)), 'no token in a log line');
  });

  test('Accept-Language picks Russian words; the lang cookie and then the saved setting win over it', async () => {
    const ru = new Browser(t, { 'accept-language': 'ru-RU,ru;q=0.9' });
    const signin = await ru.get('/signin');
    assert.match(signin.body, /<html lang="ru"/);
    for (const word of ['Эл. почта', 'Пароль', 'Язык']) assert.ok(labels(signin.body).includes(word), word);
    assert.ok(buttons(signin.body).includes('Войти'));
    assert.ok(!buttons(signin.body).includes('Sign in'));
    assert.ok(buttons((await ru.get('/signup')).body).includes('Зарегистрироваться'));

    const chosen = await ru.post('/language', { lang: 'en', next: '/signup' });
    assert.equal(chosen.statusCode, 303);
    assert.equal(chosen.headers.location, '/signup');
    assert.equal(ru.cookies.get('lang')?.value, 'en');
    const english = await ru.get('/signup');
    assert.match(english.body, /<html lang="en"/);
    assert.ok(buttons(english.body).includes('Sign up'));
    assert.match(english.body, /The language is saved/);

    // Signed in, the person's saved language beats both the cookie and the header.
    const email = await ru.signUp();
    const person = people.persons.get(email);
    assert.equal(person?.lang, 'en', 'sign-up keeps the chosen language');
    await ru.post('/language', { lang: 'ru', next: '/keys' });
    assert.equal(person?.lang, 'ru');
    const fresh = new Browser(t, { 'accept-language': 'en' });
    for (const [name, value] of ru.cookies) if (name !== 'lang') fresh.cookies.set(name, value);
    fresh.cookies.set('lang', { value: 'en', attributes: '' });
    const keys = await fresh.get('/keys');
    assert.match(keys.body, /<html lang="ru"/);
    assert.ok(buttons(keys.body).includes('Выйти'));
    assert.match(keys.body, /Подтвердите эл\. почту, чтобы создавать ключи/);
    await people.confirmEmail([...people.confirmTokens.keys()].at(-1) ?? '');
    const confirmed = await fresh.get('/keys');
    assert.ok(buttons(confirmed.body).includes('Создать ключ'));
  });

  test('the Language control comes back to the very page, its query included', async () => {
    const browser = new Browser(t);
    await browser.signUp();
    const page = await browser.get('/tasks?model=image');
    assert.match(page.body, /<input type="hidden" name="next" value="\/tasks\?model=image"/);
    const chosen = await browser.post('/language', { lang: 'ru', next: '/tasks?model=image' });
    assert.equal(chosen.headers.location, '/tasks?model=image');
    // The answer to a post (a refused form) comes back to its section's page.
    const refused = await browser.post('/keys', { action: 'create', name: '' });
    assert.match(refused.body, /<input type="hidden" name="next" value="\/keys"/);
  });

  test('a language outside the list and a foreign next change nothing', async () => {
    const browser = new Browser(t);
    await browser.get('/signin');
    const res = await browser.post('/language', { lang: 'de', next: 'https://evil.example/' });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/');
    assert.ok(!browser.cookies.has('lang'));
  });

  test("a fault inside a page is a 500 page in the person's language, logged, with nothing of the error", async () => {
    const browser = new Browser(t, { 'accept-language': 'ru' });
    await browser.signUp();
    const keys = people.keys;
    people.keys = async () => {
      throw new Error('database exploded: secret detail');
    };
    try {
      const res = await browser.get('/keys');
      assert.equal(res.statusCode, 500);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.body, /Что-то пошло не так/);
      assert.doesNotMatch(res.body, /exploded/);
      assert.ok(
        lines.some((l) => l.includes('database exploded')),
        'the cause is logged',
      );
    } finally {
      people.keys = keys;
    }
  });

  test('a malformed form body is a page, not a 500', async () => {
    const browser = new Browser(t);
    await browser.get('/signin');
    const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v.value}`).join('; ');
    const res = await t.app.inject({
      method: 'POST',
      url: '/signin',
      payload: 'x'.repeat(70 * 1024),
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.ok(res.statusCode >= 400 && res.statusCode < 500, String(res.statusCode));
    assert.match(String(res.headers['content-type']), /^text\/html/);
  });
});
