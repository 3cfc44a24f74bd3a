/**
 * The dashboard's first pages over `app.inject` (CONTRACT §13): sign-up, confirm, keys (create, shown
 * once, revoke, 10 at most), sign-in and out, password reset, settings, and the overview. The people
 * service is the in-memory one of test/web-kit.ts; keys are real and tried on /v1.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type TestApp, waitForFinal } from './helpers.ts';
import {
  Browser,
  buttons,
  type FakePeople,
  labels,
  lastToken,
  startWithFakePeople,
  textOf,
} from './web-kit.ts';

describe('dashboard pages', () => {
  let t: TestApp;
  let people: FakePeople;
  before(async () => {
    ({ t, people } = await startWithFakePeople());
  });
  after(() => t.close());

  test('signed-out visits to private pages go to /signin with a same-site next', async () => {
    const browser = new Browser(t);
    for (const [url, next] of [
      ['/', '%2F'],
      ['/keys?revoke=x', '%2Fkeys%3Frevoke%3Dx'],
      ['/settings', '%2Fsettings'],
    ] as const) {
      const res = await browser.get(url);
      assert.equal(res.statusCode, 303, url);
      assert.equal(res.headers.location, `/signin?next=${next}`);
    }
  });

  test('a HEAD of a page answers the headers of its GET: the same Location and Content-Length', async () => {
    // RFC 9110 §9.3.2: HEAD is GET without the body. The language control's way back (and a signed-out
    // visit's next) read the address of a GET only, so a HEAD's page was another, shorter one.
    const browser = new Browser(t, { accept: 'text/html' });
    const same = async (url: string) => {
      const get = await browser.get(url);
      const head = await browser.head(url);
      assert.equal(head.statusCode, get.statusCode, url);
      for (const name of ['location', 'content-length', 'content-type'])
        assert.equal(head.headers[name], get.headers[name], `${name} of ${url}`);
      assert.equal(head.body, '', url);
    };
    for (const url of ['/keys?revoke=x', '/tasks?status=queued', '/signin?next=%2Fkeys']) await same(url);
    await browser.signUp();
    for (const url of ['/tasks?status=queued', '/libraries/music/personas/new', '/keys', '/ledger?days=7'])
      await same(url);
  });

  test('a browser visiting an address nobody serves gets the 404 page; API clients keep the JSON', async () => {
    const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    for (const url of ['/nope', '/keys/extra/parts', '/favicon.ico']) {
      const res = await t.app.inject({ method: 'GET', url, headers: { accept: browserAccept } });
      assert.equal(res.statusCode, 404, url);
      assert.match(res.headers['content-type'] as string, /^text\/html/);
      assert.match(res.body, /There is no such page\./);
      assert.match(res.body, /<title>Not found/);
      assert.match(String(res.headers['content-security-policy']), /default-src 'self'/);
      assert.equal(res.headers['x-frame-options'], 'DENY');
    }
    const ru = await t.app.inject({
      method: 'GET',
      url: '/nope',
      headers: { accept: browserAccept, cookie: 'lang=ru' },
    });
    assert.match(ru.body, /Такой страницы нет\./);
    assert.match(ru.body, /<title>Не найдено/);
    for (const [url, accept] of [
      ['/nope', '*/*'],
      ['/nope', 'application/json'],
      ['/v1/nope', browserAccept],
      ['/admin/v1/nope', browserAccept],
    ]) {
      const res = await t.app.inject({
        method: 'GET',
        url: url as string,
        headers: { accept: accept as string },
      });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().error.code, 'not_found', `${url} ${accept}`);
    }
    const post = await t.app.inject({ method: 'POST', url: '/nope', headers: { accept: browserAccept } });
    assert.equal(post.json().error.code, 'not_found', 'only page loads get the page');
  });

  test('a page load of an address only forms post to is the 404 page; API clients keep the 405', async () => {
    const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    const browser = new Browser(t, { accept: browserAccept });
    const email = await browser.signUp();
    for (const url of ['/signout', '/language', '/tasks/x/cancel']) {
      const res = await browser.get(url);
      assert.equal(res.statusCode, 404, url);
      assert.match(res.headers['content-type'] as string, /^text\/html/, url);
      assert.match(res.body, /There is no such page\./, url);
      assert.ok(textOf(res.body).includes(email), url);
      assert.equal(browser.cookies.has('gta_session'), true, url);
    }
    for (const [url, accept] of [
      ['/signout', 'application/json'],
      ['/v1/tasks/x/cancel', browserAccept],
    ] as const) {
      const res = await t.app.inject({ method: 'GET', url, headers: { accept } });
      assert.equal(res.statusCode, 405, url);
      assert.equal(res.json().error.code, 'method_not_allowed', url);
      assert.equal(res.headers.allow, 'POST', url);
    }
  });

  test('an address the router refuses (bad percent-encoding, an over-long id) is the 404 page too', async () => {
    const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    const browser = new Browser(t, { accept: browserAccept });
    const email = await browser.signUp();
    for (const url of ['/tasks/%E0%A4%A', `/tasks/${'a'.repeat(5_000)}`, '/%zz']) {
      const res = await browser.get(url);
      assert.equal(res.statusCode, 404, url);
      assert.match(res.headers['content-type'] as string, /^text\/html/, url);
      assert.match(res.body, /There is no such page\./, url);
      assert.ok(textOf(res.body).includes(email), url);
      assert.equal(res.headers['x-frame-options'], 'DENY', url);
    }
    for (const url of ['/v1/tasks/%E0%A4%A', `/tasks/${'a'.repeat(5_000)}`]) {
      const accept = url.startsWith('/v1/') ? browserAccept : 'application/json';
      const res = await t.app.inject({ method: 'GET', url, headers: { accept } });
      assert.equal(res.statusCode, 404, url);
      assert.equal(res.json().error.code, 'not_found', url);
    }
  });

  test("a signed-in person's 404 page keeps their header: navigation and sign-out, not sign-in", async () => {
    const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    const browser = new Browser(t, { accept: browserAccept });
    const email = await browser.signUp();
    for (const url of ['/nope', '/keys/x', '/libraries/zzz']) {
      const res = await browser.get(url);
      assert.equal(res.statusCode, 404, url);
      assert.match(res.body, /There is no such page\./, url);
      assert.ok(textOf(res.body).includes(email), url);
      assert.ok(buttons(res.body).includes('Sign out'), url);
      assert.match(res.body, /<nav class="sections"[^>]*>.*href="\/tasks"/s, url);
      assert.doesNotMatch(res.body, /href="\/signin"/, url);
    }
    // The person's saved language applies, and the page's forms carry the session's token: its
    // Language control and Sign out work from it.
    assert.equal((await browser.post('/language', { lang: 'ru', next: '/nope' })).statusCode, 303);
    const ru = await browser.get('/nope');
    assert.match(ru.body, /Такой страницы нет\./);
    assert.ok(buttons(ru.body).includes('Выйти'));
    assert.match(ru.body, /<nav class="sections"[^>]*>.*Задачи/s);
    const out = await browser.post('/signout', {});
    assert.equal(out.statusCode, 303);
    assert.equal(browser.cookies.has('gta_session'), false);
  });

  test("a form refused before it is read keeps the person's header and language, and says why", async () => {
    const browser = new Browser(t, { accept: 'text/html' });
    const email = await browser.signUp();
    assert.equal((await browser.post('/language', { lang: 'ru', next: '/settings' })).statusCode, 303);
    await browser.get('/settings');
    // A password pasted past the forms' 64 KiB.
    const big = await browser.post('/settings', { current: 'correct horse 1', password: 'я'.repeat(40_000) });
    assert.equal(big.statusCode, 413);
    assert.match(big.body, /Тело запроса больше 64 КБ\./);
    assert.ok(textOf(big.body).includes(email));
    assert.ok(buttons(big.body).includes('Выйти'));
    assert.doesNotMatch(big.body, /href="\/signin"/);
    // A form of a type the dashboard does not read.
    const plain = await t.app.inject({
      method: 'POST',
      url: '/settings',
      payload: `_csrf=${browser.csrf}`,
      headers: {
        accept: 'text/html',
        cookie: [...browser.cookies].map(([k, v]) => `${k}=${v.value}`).join('; '),
        'content-type': 'text/plain',
      },
    });
    assert.equal(plain.statusCode, 415);
    assert.match(
      plain.body,
      /Отправьте форму так, как это делает браузер: Content-Type: application\/x-www-form-urlencoded\./,
    );
    assert.ok(buttons(plain.body).includes('Выйти'));
    // A body of a type the dashboard reads (JSON) that does not parse.
    const broken = await t.app.inject({
      method: 'POST',
      url: '/settings',
      payload: '{bad',
      headers: {
        accept: 'text/html',
        cookie: [...browser.cookies].map(([k, v]) => `${k}=${v.value}`).join('; '),
        'content-type': 'application/json',
      },
    });
    assert.equal(broken.statusCode, 400);
    assert.match(broken.body, /Форму не удалось прочитать: её тело составлено неверно\./);
  });

  test('every page starts with a Skip to content link to its <main>, in its language', async () => {
    /** The first focusable element after <body>: a link, button, input, select or textarea. */
    const firstFocusable = (body: string) =>
      /<body[^>]*>[\s\S]*?(<(?:a|button|input(?![^>]*type="hidden")|select|textarea)\b[^>]*>[^<]*)/.exec(
        body,
      )?.[1];
    const accept = 'text/html';
    const browser = new Browser(t, { accept });
    const pages = async (b: Browser, urls: string[], word: string) => {
      for (const url of urls) {
        const res = await b.get(url);
        assert.equal(firstFocusable(res.body), `<a class="skip" href="#content">${word}`, url);
        assert.match(res.body, /<main id="content" tabindex="-1">/, url);
      }
    };
    await pages(browser, ['/signin', '/signup', '/reset', '/nope'], 'Skip to content');
    await browser.signUp();
    await pages(
      browser,
      ['/', '/keys', '/settings', '/ledger', '/tasks', '/new', '/libraries', '/uploads', '/nope'],
      'Skip to content',
    );
    await pages(new Browser(t, { accept, 'accept-language': 'ru' }), ['/signin', '/nope'], 'К содержимому');
  });

  test('the sign-up and sign-in pages carry the accessible names and a CSRF field', async () => {
    const browser = new Browser(t);
    for (const [url, button] of [
      ['/signup', 'Sign up'],
      ['/signin', 'Sign in'],
    ] as const) {
      const res = await browser.get(url);
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.ok(labels(res.body).includes('E-mail'), labels(res.body).join('|'));
      assert.ok(labels(res.body).includes('Password'));
      assert.ok(labels(res.body).includes('Language'));
      assert.ok(buttons(res.body).includes(button));
      assert.match(res.body, /<option value="en"[^>]*>English<\/option>/);
      assert.match(res.body, /<option value="ru"[^>]*>Русский<\/option>/);
      assert.match(res.body, /name="_csrf" value="[A-Za-z0-9_-]{43}"/);
    }
    assert.ok(browser.cookies.has('gta_csrf'));
  });

  test('sign-up signs in, keys wait for the confirmation, the link confirms and leaves the URL', async () => {
    const browser = new Browser(t);
    const email = await browser.signUp();
    const session = browser.cookies.get('gta_session');
    assert.ok(session);
    assert.match(session.attributes, /HttpOnly/i);
    assert.match(session.attributes, /SameSite=Lax/i);
    assert.doesNotMatch(session.attributes, /Secure/i, 'http PUBLIC_BASE_URL: not Secure');

    assert.match(browser.lastBody, /We sent a confirmation link to your e-mail/, 'the page after sign-up');
    const home = await browser.get('/');
    assert.equal(home.statusCode, 200);
    assert.doesNotMatch(home.body, /We sent a confirmation link/, 'a flash shows once');
    assert.ok(buttons(home.body).includes('Sign out'));

    const keys = await browser.get('/keys');
    assert.match(
      textOf(keys.body),
      new RegExp(`Confirm your e-mail to create keys\\. We sent a link to ${email}`),
    );
    assert.ok(!buttons(keys.body).includes('Create key'));
    assert.ok(buttons(keys.body).includes('Send the link again'));
    const before = people.confirmTokens.size;
    const resent = await browser.post('/keys', { action: 'resend' });
    assert.equal(resent.statusCode, 303);
    assert.equal(people.confirmTokens.size, before + 1);

    const confirmed = await browser.get(`/confirm?token=${lastToken(people.confirmTokens)}`);
    assert.equal(confirmed.statusCode, 303);
    assert.equal(confirmed.headers.location, '/keys');
    const after = await browser.get('/keys');
    assert.match(after.body, /Your e-mail is confirmed/);
    assert.ok(buttons(after.body).includes('Create key'));

    // A dead link opened by a person whose e-mail is confirmed tells them so, not of a failure.
    const again = await browser.get(`/confirm?token=${'x'.repeat(43)}`);
    assert.equal(again.statusCode, 303);
    const told = (await browser.get('/keys')).body;
    assert.match(told, /Your e-mail is already confirmed\./);
    assert.doesNotMatch(told, /This confirmation link was used or has expired/);
    // Signed out, the link's person is unknown: the link is said to be dead.
    const stranger = new Browser(t);
    const dead = await stranger.get(`/confirm?token=${'x'.repeat(43)}`);
    assert.equal(dead.statusCode, 303);
    assert.match(
      (await stranger.get(String(dead.headers.location))).body,
      /This confirmation link was used or has expired/,
    );
  });

  test("another person's link opened while signed in confirms that person and says so", async () => {
    const signedIn = new Browser(t);
    const mine = await signedIn.signUp();
    const otherEmail = await new Browser(t).signUp();
    const theirs = lastToken(people.confirmTokens);
    const confirmed = await signedIn.get(`/confirm?token=${theirs}`);
    assert.equal(confirmed.statusCode, 303);
    const keys = await signedIn.get('/keys');
    assert.match(textOf(keys.body), /That link confirmed the e-mail of another account/);
    assert.doesNotMatch(keys.body, /Your e-mail is confirmed/);
    assert.equal(people.persons.get(otherEmail)?.confirmed, true);
    assert.equal(people.persons.get(mine)?.confirmed, false);
    assert.ok(
      buttons(keys.body).includes('Send the link again'),
      'the signed-in person is still unconfirmed',
    );
  });

  test('a key is shown once with a copy button, works on /v1, and is revoked after a confirmation', async () => {
    const browser = new Browser(t);
    const email = await browser.signUp();
    await people.confirmEmail(lastToken(people.confirmTokens));
    const person = people.persons.get(email);
    assert.ok(person);
    await browser.get('/keys');
    const created = await browser.post('/keys', {
      action: 'create',
      name: 'ci',
      models: ['model-3d', 'music'],
      daily_limit: '150,50',
    });
    // 303 to the page that shows it: a reload of that page makes no second key.
    assert.equal(created.statusCode, 303, created.body);
    assert.equal(created.headers.location, '/keys');
    const newKeyCookie = browser.cookies.get('gta_new_key');
    assert.ok(newKeyCookie, 'the key travels to the page in a cookie of its own');
    assert.match(newKeyCookie.attributes, /Path=\/keys/i);
    assert.match(newKeyCookie.attributes, /HttpOnly/i);
    assert.match(newKeyCookie.attributes, /Max-Age=60/i);
    const shown = await browser.get('/keys');
    const key =
      /id="new-key"[^>]*value="([^"]+)"/.exec(shown.body)?.[1] ??
      /value="([^"]+)"[^>]*id="new-key"/.exec(shown.body)?.[1];
    assert.ok(key, 'the key is in the page');
    assert.match(shown.body, /<button[^>]*data-copy="new-key"[^>]*>Copy<\/button>/);
    assert.match(shown.body, /id="new-key"[^>]*aria-label="New key"/);
    assert.match(shown.body, /src="\/assets\/copy\.js\?v=/);
    assert.ok(!browser.cookies.has('gta_new_key'), 'the page that shows it clears it');
    assert.equal(people.keyList.get(person.id)?.length, 1, 'one key');
    // The cookie is good for its own person only: another person's session shows nothing.
    const other = new Browser(t);
    await other.signUp();
    other.cookies.set('gta_new_key', newKeyCookie);
    const theirs = await other.get('/keys');
    assert.ok(!theirs.body.includes(key), "another person's page never shows it");

    const me = await t.call(key, 'GET', '/v1/me');
    assert.equal(me.statusCode, 200);
    assert.equal(me.json().account_id ?? person.accountId, person.accountId);

    const listed = await browser.get('/keys');
    assert.ok(!listed.body.includes(key), 'shown once: never again');
    const row = people.keyList.get(person.id)?.[0];
    assert.ok(row);
    assert.deepEqual(row.models, ['model-3d', 'music']);
    assert.equal(row.daily_limit_minor, 15_050);
    assert.match(textOf(listed.body), /model-3d, music/);
    assert.match(listed.body, new RegExp(row.prefix));

    const confirm = await browser.get(`/keys?revoke=${row.id}`);
    assert.match(textOf(confirm.body), /Revoke the key ci/);
    assert.deepEqual(
      buttons(confirm.body).filter((b) => b === 'Revoke'),
      ['Revoke'],
      'one Revoke button: the confirmation',
    );
    const revoked = await browser.post('/keys', { action: 'revoke', id: row.id });
    assert.equal(revoked.statusCode, 303);
    const afterRevoke = await browser.get('/keys');
    assert.match(afterRevoke.body, /The key is revoked/);
    assert.match(textOf(afterRevoke.body), /Revoked \d{4}-\d{2}-\d{2}/, 'still listed, marked revoked');
    assert.ok(!buttons(afterRevoke.body).includes('Revoke'), 'no Revoke for a revoked key');
    const noConfirm = await browser.get(`/keys?revoke=${row.id}`);
    assert.doesNotMatch(textOf(noConfirm.body), /Revoke the key ci/);
    assert.equal((await t.call(key, 'GET', '/v1/me')).statusCode, 401);
  });

  test('the Russian key form names the models in Russian', async () => {
    const browser = new Browser(t, { 'accept-language': 'ru' });
    await browser.signUp();
    await people.confirmEmail(lastToken(people.confirmTokens));
    const text = textOf((await browser.get('/keys')).body);
    assert.match(text, /Изображения в своих стилях \(image\)/);
    assert.match(text, /Песни и звуки \(music\)/);
    assert.doesNotMatch(text, /Images in own styles|Songs and sounds/);
  });

  test('the key form refuses bad input and the eleventh key with a message, never a 500', async () => {
    const browser = new Browser(t);
    const email = await browser.signUp();
    await people.confirmEmail(lastToken(people.confirmTokens));
    await browser.get('/keys');
    const badLimit = await browser.post('/keys', { action: 'create', name: 'x', daily_limit: '1.234' });
    assert.equal(badLimit.statusCode, 422);
    assert.match(badLimit.body, /The daily limit must be an amount in rubles/);
    assert.match(badLimit.body, /value="x"/, 'the form keeps what was typed');
    const badModel = await browser.post('/keys', { action: 'create', name: 'x', models: 'nope' });
    assert.equal(badModel.statusCode, 422);
    const noName = await browser.post('/keys', { action: 'create', name: '  ' });
    assert.equal(noName.statusCode, 422);
    // Names are counted in characters, as the API counts them: 100 emoji fit, 101 do not.
    assert.equal((await browser.post('/keys', { action: 'create', name: '🔑'.repeat(101) })).statusCode, 422);
    assert.equal((await browser.post('/keys', { action: 'create', name: '🔑'.repeat(100) })).statusCode, 303);
    await browser.get('/keys');
    for (let i = 0; i < 9; i += 1) {
      const ok = await browser.post('/keys', { action: 'create', name: `k${i}` });
      assert.equal(ok.statusCode, 303, ok.body);
    }
    const eleventh = await browser.post('/keys', {
      action: 'create',
      name: 'k10',
      models: 'music',
      daily_limit: '99,50',
    });
    assert.equal(eleventh.statusCode, 409);
    assert.match(eleventh.body, /role="alert"/);
    assert.match(eleventh.body, /name="name"[^>]*value="k10"/, 'the refused form keeps what was typed');
    assert.match(eleventh.body, /value="music" checked/);
    assert.match(eleventh.body, /name="daily_limit"[^>]*value="99,50"/);
    assert.equal(people.keyList.get(people.persons.get(email)?.id ?? '')?.length, 10);
  });

  test('sign-in: wrong password shown in the page, next kept on this site, sign-out ends the session', async () => {
    const browser = new Browser(t);
    const email = await browser.signUp();
    await browser.post('/signout', {});
    assert.ok(!browser.cookies.has('gta_session'));
    assert.equal((await browser.get('/')).statusCode, 303);

    await browser.get('/signin?next=%2Fsettings');
    const wrong = await browser.post('/signin', { email, password: 'wrong password', next: '/settings' });
    assert.equal(wrong.statusCode, 401);
    assert.match(wrong.body, /Wrong e-mail or password\./);
    assert.match(wrong.body, /name="next" value="\/settings"/);
    const right = await browser.post('/signin', { email, password: 'correct horse 1', next: '/settings' });
    assert.equal(right.statusCode, 303);
    assert.equal(right.headers.location, '/settings');
    await browser.get('/settings');

    await browser.post('/signout', {});
    await browser.get('/signin');
    for (const next of ['//evil.example/', '/\\evil.example', 'https://evil.example/']) {
      const res = await browser.post('/signin', { email, password: 'correct horse 1', next });
      assert.equal(res.headers.location, '/', next);
      await browser.get('/');
      await browser.post('/signout', {});
      await browser.get('/signin');
    }
    // A next in other letters than ASCII signs in and goes back there, percent-encoded (a header is ASCII).
    const cyrillic = await browser.post('/signin', {
      email,
      password: 'correct horse 1',
      next: '/ключи?q=а б',
    });
    assert.equal(cyrillic.statusCode, 303, cyrillic.body);
    assert.equal(cyrillic.headers.location, '/%D0%BA%D0%BB%D1%8E%D1%87%D0%B8?q=%D0%B0%20%D0%B1');
    assert.ok(browser.cookies.has('gta_session'));
    const signedIn = await browser.get('/signin?next=%2F%E3%80%80%2Fx');
    assert.equal(signedIn.statusCode, 303);
    assert.equal(signedIn.headers.location, '/%E3%80%80/x');
    await browser.get('/');
    await browser.post('/signout', {});
    await browser.get('/signin');
    // A NUL anywhere in a request is refused whole (422, a page), on both engines: no session, no redirect.
    const nul = await browser.post('/signin', { email, password: 'correct horse 1', next: '/ok\u0000' });
    assert.equal(nul.statusCode, 422);
    assert.equal(nul.headers.location, undefined);
    assert.match(nul.headers['content-type'] as string, /text\/html/);
    assert.match(nul.body, /NUL/);
    assert.ok(!browser.cookies.has('gta_session'));
  });

  test('too many sign-ins: 429 with Retry-After, shown in the page', async () => {
    const browser = new Browser(t);
    const email = await browser.signUp();
    await browser.post('/signout', {});
    await browser.get('/signin');
    people.wrongLimit = people.wrong;
    try {
      const res = await browser.post('/signin', { email, password: 'correct horse 1' });
      assert.equal(res.statusCode, 429);
      assert.equal(res.headers['retry-after'], '30');
      assert.match(res.body, /role="alert"/);
      // A person is told the wait, not sent to a header.
      assert.match(res.body, /Too many attempts\. Try again in 30 s\./);
      assert.doesNotMatch(res.body, /Retry-After/);
    } finally {
      people.wrongLimit = 1_000;
    }
  });

  test('password reset: the link lands, leaves the URL, and the new password works; sessions end', async () => {
    const browser = new Browser(t);
    const email = await browser.signUp();
    const other = new Browser(t);
    await other.get('/reset');
    const sent = await other.post('/reset', { email });
    // 303 to the page that says so: a reload sends no second mail.
    assert.equal(sent.statusCode, 303);
    assert.equal(sent.headers.location, '/reset');
    const told = await other.get('/reset');
    assert.match(told.body, /If an account has this e-mail/);
    assert.doesNotMatch(told.body, /<form[^>]*action="\/reset"/, 'no form under the message');
    const mails = people.resetTokens.size;
    assert.doesNotMatch((await other.get('/reset')).body, /If an account has this e-mail/, 'said once');
    assert.equal(people.resetTokens.size, mails, 'a reload sends nothing');
    const unknown = await other.post('/reset', { email: 'nobody@example.com' });
    assert.deepEqual(
      [unknown.statusCode, unknown.headers.location],
      [303, '/reset'],
      'the same answer for anyone',
    );
    assert.match((await other.get('/reset')).body, /If an account has this e-mail/);

    const token = lastToken(people.resetTokens);
    const landing = await other.get(`/reset/new?token=${token}`);
    assert.equal(landing.statusCode, 303);
    assert.equal(landing.headers.location, '/reset/new');
    const held = other.cookies.get('gta_reset');
    assert.ok(held);
    assert.match(held.attributes, /Path=\/reset\/new/);
    assert.match(held.attributes, /HttpOnly/i);
    const form = await other.get('/reset/new');
    assert.ok(labels(form.body).includes('New password'));
    assert.ok(!form.body.includes(token), 'the token is never in the page');
    const short = await other.post('/reset/new', { password: 'short' });
    assert.equal(short.statusCode, 422);
    assert.ok(other.cookies.has('gta_reset'), 'a refused password may be tried again');
    const done = await other.post('/reset/new', { password: 'brand new pass' });
    assert.equal(done.statusCode, 303);
    assert.equal(done.headers.location, '/signin');
    assert.ok(!other.cookies.has('gta_reset'));
    assert.equal((await browser.get('/')).statusCode, 303, 'the old session ended');
    const expired = await other.get('/reset/new');
    assert.match(expired.body, /This link was used or has expired/);
    // A used token posted again: refused, and the form is not offered again.
    other.cookies.set('gta_reset', { value: token, attributes: 'Path=/reset/new' });
    const reused = await other.post('/reset/new', { password: 'third pass 333' });
    assert.ok(reused.statusCode >= 400 && reused.statusCode < 500, String(reused.statusCode));
    assert.match(reused.body, /This link was used or has expired/);
    assert.equal(reused.body.match(/role="alert"/g)?.length, 1, 'said once');
    assert.ok(!other.cookies.has('gta_reset'));
    // With no link at all (the cookie's 15 minutes are over): the same page, refused as a dead link is.
    const none = await other.post('/reset/new', { password: 'third pass 333' });
    assert.equal(none.statusCode, reused.statusCode);
    assert.match(none.body, /This link was used or has expired/);
    await other.get('/signin');
    assert.equal((await other.post('/signin', { email, password: 'brand new pass' })).statusCode, 303);
  });

  test('the reset form answers without waiting for the mail, so its time tells no one the e-mail exists', async () => {
    const email = await new Browser(t).signUp();
    let release = () => {};
    people.mailSent = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      const browser = new Browser(t);
      await browser.get('/reset');
      const stuck = new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 2_000).unref());
      const sent = await Promise.race([browser.post('/reset', { email }), stuck]);
      assert.notEqual(sent, 'waited', 'the answer waited for the mail server');
      assert.deepEqual(sent === 'waited' ? null : [sent.statusCode, sent.headers.location], [303, '/reset']);
    } finally {
      release();
      people.mailSent = Promise.resolve();
    }
  });

  test('a used or made-up reset link is said dead when its page opens, once, with a way to a new link', async () => {
    const email = await new Browser(t).signUp();
    const alerts = (body: string) => body.match(/role="alert"/g)?.length ?? 0;
    for (const [lang, dead, again] of [
      ['en', /This link was used or has expired\. Ask for a new one\./, 'Ask for a new link'],
      ['ru', /Эта ссылка уже использована или устарела\. Запросите новую\./, 'Запросить новую ссылку'],
    ] as const) {
      const browser = new Browser(t, { 'accept-language': lang });
      const landing = await browser.get(`/reset/new?token=${'x'.repeat(43)}`);
      assert.equal(landing.statusCode, 303);
      const made = await browser.get('/reset/new');
      assert.equal(made.statusCode, 200);
      assert.match(made.body, dead);
      assert.equal(alerts(made.body), 1);
      assert.doesNotMatch(made.body, /name="password"/, 'no form that can only be refused');
      assert.match(made.body, new RegExp(`<a href="/reset">${again}</a>`));
      assert.ok(!browser.cookies.has('gta_reset'), 'the dead link is forgotten');
    }
    // An open link is checked, not used up: opening its page twice still lets it set the password.
    const browser = new Browser(t);
    await browser.get('/reset');
    await browser.post('/reset', { email });
    const token = lastToken(people.resetTokens);
    await browser.get(`/reset/new?token=${token}`);
    assert.ok(labels((await browser.get('/reset/new')).body).includes('New password'));
    assert.ok(labels((await browser.get('/reset/new')).body).includes('New password'));
    const short = await browser.post('/reset/new', { password: 'short' });
    assert.equal(short.statusCode, 422);
    assert.equal(alerts(short.body), 1, 'a refused password: one message above the form');
    assert.ok(labels(short.body).includes('New password'));
    assert.equal((await browser.post('/reset/new', { password: 'fresh password 9' })).statusCode, 303);
    // The same link used meanwhile (another tab): its page says so before any password is typed.
    browser.cookies.set('gta_reset', { value: token, attributes: 'Path=/reset/new' });
    const used = await browser.get('/reset/new');
    assert.match(used.body, /This link was used or has expired/);
    assert.doesNotMatch(used.body, /name="password"/);
  });

  test('settings: the password changes with the current one, a wrong one is shown', async () => {
    const browser = new Browser(t);
    const email = await browser.signUp();
    const elsewhere = new Browser(t);
    await elsewhere.get('/signin');
    assert.equal((await elsewhere.post('/signin', { email, password: 'correct horse 1' })).statusCode, 303);
    const page = await browser.get('/settings');
    assert.ok(labels(page.body).includes('Current password'));
    assert.ok(labels(page.body).includes('New password'));
    const wrong = await browser.post('/settings', { current: 'nope nope', password: 'another pass 2' });
    assert.equal(wrong.statusCode, 401);
    assert.match(wrong.body, /The current password is wrong\./);
    assert.doesNotMatch(wrong.body, /The e-mail or the password is wrong/);
    const ok = await browser.post('/settings', { current: 'correct horse 1', password: 'another pass 2' });
    assert.equal(ok.statusCode, 303);
    assert.match((await browser.get('/settings')).body, /The password is changed/);
    // The page names its own session to the service: this browser stays signed in, the other one does not.
    assert.equal((await elsewhere.get('/settings')).statusCode, 303);
  });

  test('overview: available and held money, and the 30-day spend chart once something was spent', async () => {
    const browser = new Browser(t);
    const email = await browser.signUp();
    const person = people.persons.get(email);
    assert.ok(person);
    const empty = await browser.get('/');
    assert.match(empty.body, /data-testid="available">RUB\s?0\.00</);
    assert.match(empty.body, /Nothing spent in the last 30 days/);
    assert.doesNotMatch(empty.body, /vendor\/chart\.js/);

    await t.admin('POST', `/admin/v1/accounts/${person.accountId}/credits`, {
      amount_minor: 100_000,
      reference: 'web-overview',
    });
    await people.confirmEmail(lastToken(people.confirmTokens));
    const issued = await people.createKey(person.id, { name: 'k', models: null, dailyLimitMinor: null });
    const task = await t.call(issued.key, 'POST', '/v1/tasks', {
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt: 'a lamp', texture: false, pbr: false },
    });
    assert.equal(task.statusCode, 202, task.body);
    const final = await waitForFinal(t, issued.key, task.json().id);
    assert.equal(final.status, 'succeeded');
    const price = Number(task.json().price_minor ?? task.json().price?.amount_minor);

    const ru = new Browser(t, { 'accept-language': 'ru' });
    for (const [name, value] of browser.cookies) ru.cookies.set(name, value);
    const full = await browser.get('/');
    const canvas = /<canvas[^>]*data-spend="([^"]*)"/.exec(full.body)?.[1];
    assert.ok(canvas, 'a chart');
    const data = JSON.parse(canvas.replaceAll('&quot;', '"'));
    assert.equal(data.days.length, 30);
    assert.equal(data.byModel['model-3d'].at(-1), price);
    assert.match(full.body, /src="\/assets\/vendor\/chart\.js\?v=[^"]+"/);
    assert.match(full.body, /src="\/assets\/spend-chart\.js\?v=[^"]+"/);
    // Models by name, as the other pages show them: in the legend's data and in the table.
    assert.equal(data.names['model-3d'], '3D model generator');
    const today = data.days.at(-1);
    assert.match(
      textOf(full.body),
      new RegExp(`${today} 3D model generator RUB\\s?${(price / 100).toFixed(2)}`),
      'the same numbers as a table',
    );
    assert.match(textOf(full.body), new RegExp(`Available RUB\\s?${((100_000 - price) / 100).toFixed(2)}`));
  });
});
