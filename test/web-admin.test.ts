/**
 * The operator console at `/admin` over `app.inject` (CONTRACT §13): absent without ADMIN_TOKEN; the
 * token sign-in (wrong token refused, attempts limited per address, the cookie's flags), CSRF on every
 * form, a changed token ending the session, every page, a credit made once per reference, a key made
 * and shown once (its refusals at their fields, the eleventh refused), a model
 * switched off disappearing from /v1/models, and escaping of what people typed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../src/app.ts';
import { ScriptedUpstream, scriptedAdapters, testChannels } from './channel-adapters.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from './helpers.ts';
import { Browser, buttons, labels, operatorSignedIn, textOf } from './web-kit.ts';

/** An account with a person's e-mail attached through the operator API. */
async function accountWithEmail(t: TestApp, email: string, name = 'Person'): Promise<string> {
  const made = await t.admin('POST', '/admin/v1/accounts', { name });
  const id = made.json().id as string;
  const attached = await t.admin('POST', `/admin/v1/accounts/${id}/email`, { email });
  assert.equal(attached.statusCode, 200, attached.body);
  return id;
}

describe('operator console', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ worker: false });
  });
  after(() => t.close());

  test('every /admin page is 404 without ADMIN_TOKEN', async () => {
    const bare = await startTestApp({ worker: false, env: { ADMIN_TOKEN: '' } });
    try {
      for (const url of ['/admin', '/admin/signin', '/admin/accounts', '/admin/models', '/admin/channels']) {
        assert.equal((await bare.app.inject({ method: 'GET', url })).statusCode, 404, url);
      }
      const post = await bare.app.inject({ method: 'POST', url: '/admin/signin', payload: { token: 'x' } });
      assert.equal(post.statusCode, 404);
    } finally {
      await bare.close();
    }
  });

  test('the sign-in page; a wrong token is refused; the right one gives a strict /admin cookie', async () => {
    const browser = new Browser(t);
    assert.equal((await browser.get('/admin/accounts')).headers.location, '/admin/signin');
    const page = await browser.get('/admin/signin');
    assert.equal(page.statusCode, 200);
    assert.ok(labels(page.body).includes('Token'));
    assert.ok(labels(page.body).includes('Language'));
    assert.ok(buttons(page.body).includes('Sign in'));
    const wrong = await browser.post('/admin/signin', { token: `${ADMIN_TOKEN}x` });
    assert.equal(wrong.statusCode, 401);
    assert.match(textOf(wrong.body), /Wrong token/);
    assert.equal(browser.cookies.has('gta_console'), false);
    const right = await browser.post('/admin/signin', { token: ADMIN_TOKEN });
    assert.equal(right.statusCode, 303);
    const cookie = browser.cookies.get('gta_console');
    assert.ok(cookie);
    assert.match(cookie.attributes, /HttpOnly/i);
    assert.match(cookie.attributes, /SameSite=Strict/i);
    assert.match(cookie.attributes, /Path=\/admin(;|$)/);
    assert.match(cookie.attributes, /Max-Age=43200/);
    assert.equal((await browser.get('/admin/accounts')).statusCode, 200);
    // Signing out ends it.
    const out = await browser.post('/admin/signout', {});
    assert.equal(out.statusCode, 303);
    assert.equal((await browser.get('/admin/accounts')).statusCode, 303);
  });

  test("an /admin address nobody serves shows the console's header of the operator's state", async () => {
    const accept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    const operator = await operatorSignedIn(t);
    for (const url of ['/admin/nope', '/admin/accounts/x/y']) {
      const res = await operator.get(url, { accept });
      assert.equal(res.statusCode, 404, url);
      assert.match(res.body, /There is no such page\./, url);
      assert.match(res.body, /<nav class="sections"[^>]*>.*href="\/admin\/accounts"/s, url);
      assert.ok(buttons(res.body).includes('Sign out'), url);
      assert.doesNotMatch(res.body, /href="\/signin"|href="\/signup"/, url);
    }
    // Its Sign out form carries the console's token.
    assert.equal((await operator.post('/admin/signout', {})).statusCode, 303);
    const out = await operator.get('/admin/nope', { accept });
    assert.equal(out.statusCode, 404);
    assert.doesNotMatch(out.body, /<nav class="sections"/);
    assert.equal(buttons(out.body).includes('Sign out'), false);
    assert.doesNotMatch(out.body, /href="\/signup"/, 'the console, not the dashboard');
  });

  test('a console form past 64 KiB is a 413 page that says so', async () => {
    const operator = await operatorSignedIn(t);
    const big = await operator.post('/admin/accounts/x/credit', { note: 'x'.repeat(70_000) });
    assert.equal(big.statusCode, 413);
    assert.match(textOf(big.body), /The request body is larger than 64 KB\./);
  });

  test("a console form refused before it is read keeps the operator's header and language", async () => {
    const operator = await operatorSignedIn(t);
    await operator.get('/admin/accounts');
    assert.equal((await operator.post('/admin/language', { lang: 'ru', next: '/admin' })).statusCode, 303);
    await operator.get('/admin/accounts');
    const big = await operator.post('/admin/accounts/x/credit', { reference: 'я'.repeat(40_000) });
    assert.equal(big.statusCode, 413);
    assert.match(big.body, /<html lang="ru">/);
    assert.match(textOf(big.body), /Тело запроса больше 64 КБ\./);
    assert.match(big.body, /<nav class="sections"[^>]*>.*href="\/admin\/accounts"/s);
    assert.ok(buttons(big.body).includes('Выйти'));
    // Its forms (Sign out, Language) carry the session's token, so they still work.
    const csrf = /name="_csrf" value="([^"]+)"/.exec(big.body)?.[1];
    assert.equal(csrf, operator.csrf);
    // A form of a type the console does not read.
    const plain = await t.app.inject({
      method: 'POST',
      url: '/admin/accounts/x/credit',
      payload: `_csrf=${operator.csrf}`,
      headers: {
        cookie: [...operator.cookies].map(([k, v]) => `${k}=${v.value}`).join('; '),
        'content-type': 'text/plain',
      },
    });
    assert.equal(plain.statusCode, 415);
    assert.match(plain.body, /Что-то пошло не так/);
    assert.ok(buttons(plain.body).includes('Выйти'));
  });

  test('a HEAD of a console page answers the headers of its GET, its Content-Length too', async () => {
    const browser = await operatorSignedIn(t);
    const { id } = await t.account();
    for (const url of [
      '/admin/accounts?q=a',
      `/admin/accounts/${id}`,
      '/admin/models',
      '/admin/signin?x=1',
    ]) {
      const get = await browser.get(url);
      const head = await browser.head(url);
      assert.equal(head.statusCode, get.statusCode, url);
      assert.equal(head.headers['content-length'], get.headers['content-length'], url);
    }
  });

  test('console pages start with a Skip to content link to their <main>', async () => {
    const skip = /<body[^>]*>\s*<a class="skip" href="#content">Skip to content<\/a>\s*<header/;
    const out = await new Browser(t).get('/admin/signin');
    assert.match(out.body, skip);
    const operator = await operatorSignedIn(t);
    for (const url of ['/admin/accounts', '/admin/models', '/admin/channels', '/admin/topups']) {
      const res = await operator.get(url);
      assert.match(res.body, skip, url);
      assert.match(res.body, /<main id="content" tabindex="-1">/, url);
    }
    const ru = await new Browser(t, { 'accept-language': 'ru' }).get('/admin/signin');
    assert.match(ru.body, /<a class="skip" href="#content">К содержимому<\/a>/);
  });

  test('failed sign-ins are limited per address: 429 with Retry-After, other addresses unaffected', async () => {
    const attempt = async (remoteAddress: string, token: string) => {
      const page = await t.app.inject({ method: 'GET', url: '/admin/signin', remoteAddress });
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
      const cookie = String(page.headers['set-cookie']).split(';')[0];
      return t.app.inject({
        method: 'POST',
        url: '/admin/signin',
        remoteAddress,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _csrf: csrf, token }).toString(),
      });
    };
    for (let i = 0; i < 10; i += 1)
      assert.equal((await attempt('10.0.0.9', 'wrong-token-123456')).statusCode, 401);
    const limited = await attempt('10.0.0.9', ADMIN_TOKEN);
    assert.equal(limited.statusCode, 429);
    assert.ok(Number(limited.headers['retry-after']) > 0);
    assert.match(textOf(limited.body), /Too many attempts\. Try again in 1[45] min\./);
    assert.equal((await attempt('10.0.0.10', ADMIN_TOKEN)).statusCode, 303);
    // Sent together, the attempts are still weighed ten at a time: each is counted before its comparison.
    const together = await Promise.all(
      Array.from({ length: 30 }, () => attempt('10.0.0.11', 'wrong-token-123456')),
    );
    const statuses = together.map((res) => res.statusCode);
    assert.equal(statuses.filter((s) => s === 401).length, 10, statuses.join(' '));
    assert.equal(statuses.filter((s) => s === 429).length, 20, statuses.join(' '));
    // A right token gives back its own attempt, not the address's failures: one who guesses from the
    // operator's address (an office, a proxy not trusted) gets no fresh ten each time the operator signs in.
    for (let i = 0; i < 9; i += 1)
      assert.equal((await attempt('10.0.0.12', 'wrong-token-123456')).statusCode, 401);
    assert.equal((await attempt('10.0.0.12', ADMIN_TOKEN)).statusCode, 303);
    assert.equal((await attempt('10.0.0.12', 'wrong-token-123456')).statusCode, 401);
    assert.equal((await attempt('10.0.0.12', 'wrong-token-123456')).statusCode, 429);
  });

  test('a POST without the CSRF token is refused, signed in or not', async () => {
    const anonymous = new Browser(t);
    await anonymous.get('/admin/signin');
    assert.equal(
      (await anonymous.post('/admin/signin', { _csrf: 'forged', token: ADMIN_TOKEN })).statusCode,
      403,
    );
    const browser = await operatorSignedIn(t);
    const id = await accountWithEmail(t, 'csrf@example.com');
    await browser.get(`/admin/accounts/${id}`);
    const forged = await browser.post(`/admin/accounts/${id}/credit`, {
      _csrf: 'x'.repeat(43),
      amount: '10',
      reference: 'forged',
    });
    assert.equal(forged.statusCode, 403);
    const account = await t.admin('GET', `/admin/v1/accounts/${id}`);
    assert.equal(account.json().balance_minor, 0);
  });

  test('Sign out ends the session for every copy of its cookie, and no other session', async () => {
    const browser = await operatorSignedIn(t);
    const other = await operatorSignedIn(t);
    const copy = String(browser.cookies.get('gta_console')?.value);
    const withCopy = () =>
      t.app.inject({ method: 'GET', url: '/admin/accounts', headers: { cookie: `gta_console=${copy}` } });
    assert.equal((await withCopy()).statusCode, 200);
    assert.equal((await browser.get('/admin/accounts')).statusCode, 200);
    assert.equal((await browser.post('/admin/signout', {})).statusCode, 303);
    const refused = await withCopy();
    assert.equal(refused.statusCode, 303);
    assert.equal(refused.headers.location, '/admin/signin');
    assert.equal((await other.get('/admin/accounts')).statusCode, 200);
  });

  test('a signed-out session stays refused by an API restarted on the same database', async () => {
    const browser = await operatorSignedIn(t);
    const copy = String(browser.cookies.get('gta_console')?.value);
    assert.equal((await browser.get('/admin/accounts')).statusCode, 200);
    assert.equal((await browser.post('/admin/signout', {})).statusCode, 303);
    // A new app on the same database and token: what a restart (or another API process) serves.
    const restarted = await buildApp({ ...t.container });
    try {
      const res = await restarted.inject({
        method: 'GET',
        url: '/admin/accounts',
        headers: { cookie: `gta_console=${copy}` },
      });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, '/admin/signin');
      // Another session, never signed out, still works there.
      const other = await operatorSignedIn(t);
      const live = String(other.cookies.get('gta_console')?.value);
      const ok = await restarted.inject({
        method: 'GET',
        url: '/admin/accounts',
        headers: { cookie: `gta_console=${live}` },
      });
      assert.equal(ok.statusCode, 200);
    } finally {
      await restarted.close();
    }
  });

  test('a changed ADMIN_TOKEN ends every console session', async () => {
    const browser = await operatorSignedIn(t);
    const other = await startTestApp({ worker: false, env: { ADMIN_TOKEN: `${ADMIN_TOKEN}-rotated` } });
    try {
      const res = await other.app.inject({
        method: 'GET',
        url: '/admin/accounts',
        headers: { cookie: `gta_console=${browser.cookies.get('gta_console')?.value}` },
      });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, '/admin/signin');
      // A forged expiry with the old signature is refused too.
      const [, id, signature] = String(browser.cookies.get('gta_console')?.value).split('.');
      const forged = await t.app.inject({
        method: 'GET',
        url: '/admin/accounts',
        headers: { cookie: `gta_console=${Date.now() + 10 ** 10}.${id}.${signature}` },
      });
      assert.equal(forged.statusCode, 303);
    } finally {
      await other.close();
    }
  });

  test('accounts: a list cut at its 50 says so; a search longer than the API takes is refused, not cut', async () => {
    const browser = await operatorSignedIn(t);
    for (let i = 0; i < 51; i++) await t.admin('POST', '/admin/v1/accounts', { name: `bulk ${i}` });
    const cut = await browser.get('/admin/accounts?q=bulk');
    assert.equal((cut.body.match(/href="\/admin\/accounts\/[^"]+"/g) ?? []).length, 50);
    assert.match(textOf(cut.body), /Only the 50 newest matching accounts are shown/);
    const few = await browser.get('/admin/accounts?q=bulk%2050');
    assert.doesNotMatch(textOf(few.body), /Only the 50 newest/);
    // 254 characters are a search; 255 are refused as the API refuses them, with nothing listed.
    const longest = await browser.get(`/admin/accounts?q=${'b'.repeat(254)}`);
    assert.equal(longest.statusCode, 200);
    const tooLong = await browser.get(`/admin/accounts?q=bulk${'a'.repeat(251)}`);
    assert.equal(tooLong.statusCode, 422);
    assert.match(textOf(tooLong.body), /The search is at most 254 characters long/);
    assert.doesNotMatch(textOf(tooLong.body), /No accounts found/);
  });

  test('accounts: search by e-mail or name, the account page, credit once per reference, keys', async () => {
    const browser = await operatorSignedIn(t);
    const id = await accountWithEmail(t, 'findme@example.com', 'Anna <b>Bold</b>');
    await accountWithEmail(t, 'someone@example.com', 'Other');
    const newest = await browser.get('/admin/accounts');
    assert.match(textOf(newest.body), /findme@example\.com/);
    const found = await browser.get('/admin/accounts?q=FINDME@example.com');
    assert.match(textOf(found.body), /findme@example\.com \(not confirmed\)/);
    assert.doesNotMatch(textOf(found.body), /someone@example/);
    assert.match(found.body, /Anna &lt;b>Bold&lt;\/b>|Anna &lt;b&gt;Bold&lt;\/b&gt;/);
    assert.doesNotMatch(found.body, /<b>Bold<\/b>/);
    const byName = await browser.get('/admin/accounts?q=anna');
    assert.match(byName.body, new RegExp(`/admin/accounts/${id}`));

    const page = await browser.get(`/admin/accounts/${id}`);
    assert.equal(page.statusCode, 200);
    assert.ok(labels(page.body).includes('Amount'));
    assert.ok(labels(page.body).includes('Reference'));
    assert.ok(buttons(page.body).includes('Credit'));
    const reference = /id="credit-reference"[^>]*value="([^"]+)"/.exec(page.body)?.[1];
    assert.match(reference ?? '', /^console-[0-9a-f-]{36}$/);
    const again = await browser.get(`/admin/accounts/${id}`);
    assert.notEqual(/id="credit-reference"[^>]*value="([^"]+)"/.exec(again.body)?.[1], reference);
    const form = { amount: '1 234,56', reference: reference ?? '' };
    const first = await browser.post(`/admin/accounts/${id}/credit`, form);
    assert.equal(first.statusCode, 303);
    assert.equal(first.headers.location, `/admin/accounts/${id}?done=credited`);
    const second = await browser.post(`/admin/accounts/${id}/credit`, form);
    assert.equal(second.headers.location, `/admin/accounts/${id}?done=replayed`);
    const account = (await t.admin('GET', `/admin/v1/accounts/${id}`)).json();
    assert.equal(account.available_minor, 123_456);
    const shown = await browser.get(`/admin/accounts/${id}?done=credited`);
    assert.match(textOf(shown.body), /Credited\./);
    assert.match(textOf(shown.body), /RUB\s?1,234\.56/);
    assert.match(shown.body, /<td data-label="Kind">Credit<\/td>/);
    const bad = await browser.post(`/admin/accounts/${id}/credit`, { amount: 'lots', reference: 'r1' });
    assert.equal(bad.statusCode, 422);
    assert.match(textOf(bad.body), /The amount is rubles/);
    // Amounts past the form's bounds are told the bounds, not only the format they already follow.
    for (const amount of ['0', '0.00', '1000000000', '1 000 000 000,00']) {
      const outside = await browser.post(`/admin/accounts/${id}/credit`, { amount, reference: 'r1' });
      assert.equal(outside.statusCode, 422, amount);
      assert.match(textOf(outside.body), /from 0\.01 to 999,999,999\.99/, amount);
    }
    assert.equal((await t.admin('GET', `/admin/v1/accounts/${id}`)).json().available_minor, 123_456);
    // A reference is counted in characters, as the API counts it: 200 emoji fit, 201 do not.
    const long = await browser.post(`/admin/accounts/${id}/credit`, {
      amount: '1',
      reference: '€'.repeat(201),
    });
    assert.equal(long.statusCode, 422);
    await browser.get(`/admin/accounts/${id}`);
    const emoji = await browser.post(`/admin/accounts/${id}/credit`, {
      amount: '1',
      reference: '💶'.repeat(200),
    });
    assert.equal(emoji.statusCode, 303, emoji.body);

    const key = await t.admin('POST', `/admin/v1/accounts/${id}/keys`, { name: 'ops' });
    const withKey = await browser.get(`/admin/accounts/${id}`);
    assert.ok(buttons(withKey.body).includes('Revoke'));
    const keyId = key.json().id as string;
    const revoked = await browser.post(`/admin/accounts/${id}/revoke`, { key_id: keyId });
    assert.equal(revoked.statusCode, 303);
    assert.equal((await t.call(key.json().key, 'GET', '/v1/models')).statusCode, 401);
    assert.equal((await browser.get('/admin/accounts/no-such-account')).statusCode, 404);
  });

  test("Revoke with another account's key id is refused, never answered as revoked", async () => {
    const browser = await operatorSignedIn(t);
    const mine = (await t.admin('POST', '/admin/v1/accounts', { name: 'Mine' })).json().id as string;
    const other = (await t.admin('POST', '/admin/v1/accounts', { name: 'Other' })).json().id as string;
    const key = (await t.admin('POST', `/admin/v1/accounts/${other}/keys`, {})).json();
    await browser.get(`/admin/accounts/${mine}`);
    const refused = await browser.post(`/admin/accounts/${mine}/revoke`, { key_id: key.id });
    assert.equal(refused.statusCode, 404);
    assert.match(textOf(refused.body), /There is no API key/);
    assert.equal((await t.call(key.key, 'GET', '/v1/models')).statusCode, 200);
    const unknown = await browser.post(`/admin/accounts/${mine}/revoke`, { key_id: 'no-such-key' });
    assert.equal(unknown.statusCode, 404);
  });

  test('Create key: shown once with Copy, works on /v1; refusals at their field; the 11th is a 409', async () => {
    const browser = await operatorSignedIn(t);
    const id = (await t.admin('POST', '/admin/v1/accounts', { name: 'Keys' })).json().id as string;
    const other = (await t.admin('POST', '/admin/v1/accounts', { name: 'Other keys' })).json().id as string;
    const base = `/admin/accounts/${id}`;
    /** The account's keys with `Revoke`, read from its page with another operator's session. */
    const reader = await operatorSignedIn(t);
    const activeKeys = async () =>
      buttons((await reader.get(base)).body).filter((b) => b === 'Revoke').length;
    const page = await browser.get(base);
    assert.ok(buttons(page.body).includes('Create key'));
    for (const label of ['Name', 'Daily limit, RUB']) assert.ok(labels(page.body).includes(label), label);
    assert.match(
      page.body,
      new RegExp(
        `<form class="stack" method="post" action="${base}/keys" novalidate><input type="hidden" name="_csrf"`,
      ),
    );
    assert.match(page.body, /<input type="checkbox" name="models" value="model-3d"\/>/);

    const created = await browser.post(`${base}/keys`, {
      name: 'ops',
      models: ['model-3d', 'music'],
      daily_limit: '150,50',
    });
    // 303 to the account's page, which shows it: a reload makes no second key.
    assert.equal(created.statusCode, 303, created.body);
    assert.equal(created.headers.location, base);
    assert.doesNotMatch(String(created.headers.location), /gta_/, 'never in the address');
    const cookie = browser.cookies.get('gta_console_new_key');
    assert.ok(cookie, 'the key travels to the page in a cookie of its own');
    assert.match(cookie.attributes, new RegExp(`Path=${base}(;|$)`, 'i'));
    assert.match(cookie.attributes, /HttpOnly/i);
    assert.match(cookie.attributes, /SameSite=Strict/i);
    assert.match(cookie.attributes, /Max-Age=60/i);
    const shown = await browser.get(base);
    const key = /id="new-key"[^>]*value="([^"]+)"/.exec(shown.body)?.[1] ?? '';
    assert.match(key, /^gta_/);
    assert.match(textOf(shown.body), /The account's new key\. Copy it now: it is shown only once\./);
    assert.match(shown.body, /<button[^>]*data-copy="new-key"[^>]*>Copy<\/button>/);
    assert.match(shown.body, /src="\/assets\/copy\.js\?v=/);
    assert.equal(browser.cookies.has('gta_console_new_key'), false, 'the page that shows it clears it');
    const me = await t.call(key, 'GET', '/v1/me');
    assert.equal(me.statusCode, 200);
    assert.equal(me.json().account_id, id);
    assert.deepEqual(me.json().models, ['model-3d', 'music']);
    assert.equal(me.json().daily_limit_minor, 15_050);
    assert.ok(!(await browser.get(base)).body.includes(key), 'shown once: never again');
    // The cookie shows a key only on its own account's page.
    browser.cookies.set('gta_console_new_key', cookie);
    assert.ok(!(await browser.get(`/admin/accounts/${other}`)).body.includes(key));
    browser.cookies.delete('gta_console_new_key');

    // The dashboard's checks, said at their field with what was typed kept.
    await browser.get(base);
    const badLimit = await browser.post(`${base}/keys`, { name: 'ci', daily_limit: 'lots' });
    assert.equal(badLimit.statusCode, 422);
    assert.match(badLimit.body, /<p class="error" role="alert">The daily limit must be an amount in rubles/);
    assert.match(
      badLimit.body,
      /name="daily_limit"[^>]*value="lots" id="field-daily_limit" aria-invalid="true" aria-describedby="field-daily_limit-problem" autofocus/,
    );
    assert.match(
      badLimit.body,
      /<p class="error field-problem" id="field-daily_limit-problem">The daily limit/,
    );
    assert.match(badLimit.body, /name="name" required value="ci"/);
    const noName = await browser.post(`${base}/keys`, { name: ' ', daily_limit: '5' });
    assert.equal(noName.statusCode, 422);
    assert.match(noName.body, /name="name"[^>]*id="field-name" aria-invalid="true"/);
    const unknown = await browser.post(`${base}/keys`, { name: 'ci', models: 'no-such-model' });
    assert.equal(unknown.statusCode, 422);
    assert.match(textOf(unknown.body), /Choose models from the list\./);
    assert.equal(await activeKeys(), 1);

    // Ten active keys at most, as the API counts them: the 11th is refused in the form, nothing made.
    for (let i = 2; i <= 10; i++) {
      assert.equal((await browser.post(`${base}/keys`, { name: `k${i}` })).statusCode, 303, String(i));
    }
    browser.cookies.delete('gta_console_new_key');
    const eleventh = await browser.post(`${base}/keys`, { name: 'k11', daily_limit: '5' });
    assert.equal(eleventh.statusCode, 409);
    assert.match(textOf(eleventh.body), /already has 10 active keys/);
    assert.match(eleventh.body, /name="name" required value="k11"/);
    assert.equal(browser.cookies.has('gta_console_new_key'), false);
    assert.equal(await activeKeys(), 10);
    // An unknown account is the console's 404 page, nothing made.
    assert.equal((await browser.post('/admin/accounts/no-such-account/keys', { name: 'x' })).statusCode, 404);
  });

  test('Create key in Russian', async () => {
    const browser = await operatorSignedIn(t);
    const id = (await t.admin('POST', '/admin/v1/accounts', { name: 'Ключи' })).json().id as string;
    await browser.get('/admin/accounts');
    await browser.post('/admin/language', { lang: 'ru', next: '/admin' });
    const page = await browser.get(`/admin/accounts/${id}`);
    assert.ok(buttons(page.body).includes('Создать ключ'));
    assert.ok(labels(page.body).includes('Лимит в день, ₽'));
    await browser.post(`/admin/accounts/${id}/keys`, { name: 'ops' });
    const shown = await browser.get(`/admin/accounts/${id}`);
    assert.match(textOf(shown.body), /Новый ключ аккаунта\. Скопируйте его сейчас/);
    assert.ok(buttons(shown.body).includes('Копировать'));
  });

  test('balances up to the largest amount are shown to the kopeck', async () => {
    const browser = await operatorSignedIn(t);
    const id = (await t.admin('POST', '/admin/v1/accounts', { name: 'Huge' })).json().id as string;
    const credit = await t.admin('POST', `/admin/v1/accounts/${id}/credits`, {
      amount_minor: Number.MAX_SAFE_INTEGER - 4,
      reference: 'huge',
    });
    assert.equal(credit.statusCode, 201, credit.body);
    const page = await browser.get(`/admin/accounts/${id}`);
    assert.match(page.body, /data-testid="balance">RUB\s?90,071,992,547,409\.87</);
  });

  test('attach an e-mail to an operator-made account', async () => {
    const browser = await operatorSignedIn(t);
    const made = await t.admin('POST', '/admin/v1/accounts', { name: 'Bare' });
    const id = made.json().id as string;
    const page = await browser.get(`/admin/accounts/${id}`);
    assert.match(textOf(page.body), /no e-mail/);
    const res = await browser.post(`/admin/accounts/${id}/email`, { email: 'attached@example.com' });
    assert.equal(res.statusCode, 303);
    assert.match(textOf((await browser.get(`/admin/accounts/${id}`)).body), /attached@example\.com/);
    const taken = await browser.post(`/admin/accounts/${made.json().id}/email`, { email: 'x@example.com' });
    assert.equal(taken.statusCode, 409);
  });

  test('a refused Attach shows its message in its own form, the e-mail kept and named as labelled', async () => {
    const browser = await operatorSignedIn(t);
    const id = (await t.admin('POST', '/admin/v1/accounts', { name: 'Typo' })).json().id as string;
    await browser.get(`/admin/accounts/${id}`);
    const bad = await browser.post(`/admin/accounts/${id}/email`, { email: 'ann@@example.com' });
    assert.equal(bad.statusCode, 422);
    const attach = /<form[^>]*action="[^"]*\/email"[^>]*>([\s\S]*?)<\/form>/.exec(bad.body)?.[1] ?? '';
    assert.match(textOf(attach).trim(), /^E-mail: not a valid e-mail address/);
    assert.match(attach, /name="email"[^>]*value="ann@@example\.com"/);
    const credit = /<form[^>]*action="[^"]*\/credit"[^>]*>([\s\S]*?)<\/form>/.exec(bad.body)?.[1] ?? '';
    assert.doesNotMatch(credit, /role="alert"/, 'not in the Credit form');
    await accountWithEmail(t, 'taken-by-other@example.com');
    const taken = await browser.post(`/admin/accounts/${id}/email`, { email: 'taken-by-other@example.com' });
    assert.equal(taken.statusCode, 409);
    assert.match(taken.body, /name="email"[^>]*value="taken-by-other@example\.com"/);
  });

  test('Attach sent again once the account has an e-mail says why it was refused', async () => {
    const browser = await operatorSignedIn(t);
    const id = (await t.admin('POST', '/admin/v1/accounts', { name: 'Twice' })).json().id as string;
    await browser.get(`/admin/accounts/${id}`);
    const first = await browser.post(`/admin/accounts/${id}/email`, { email: 'twice@example.com' });
    assert.equal(first.statusCode, 303);
    // The same form sent again (a double click, a second tab): the account has its e-mail by now.
    const again = await browser.post(`/admin/accounts/${id}/email`, { email: 'twice-other@example.com' });
    assert.equal(again.statusCode, 409);
    assert.match(again.body, /role="alert"[^>]*>Account &quot;[^&]+&quot; has an e-mail already\.</);
    browser.cookies.set('lang', { value: 'ru', attributes: '' });
    const ru = await browser.post(`/admin/accounts/${id}/email`, { email: 'twice-other@example.com' });
    assert.equal(ru.statusCode, 409);
    assert.match(ru.body, /role="alert"[^>]*>У аккаунта «[^»]+» уже есть эл\. почта\.</);
  });

  test('models: switching one off takes it off /v1/models; the active tasks limit is saved', async () => {
    const browser = await operatorSignedIn(t);
    const customer = await t.account();
    const page = await browser.get('/admin/models');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /data-model="model-3d"/);
    const off = await browser.post('/admin/models/model-3d', { available: 'off' });
    assert.equal(off.statusCode, 303);
    const listed = (await t.call(customer.key, 'GET', '/v1/models')).json();
    const model = (listed.models ?? listed.data).find((m: { key: string }) => m.key === 'model-3d');
    assert.ok(!model || model.available === false, JSON.stringify(model));
    await browser.post('/admin/models/model-3d', { available: 'on' });
    const back = (await t.call(customer.key, 'GET', '/v1/models')).json();
    assert.equal(
      (back.models ?? back.data).find((m: { key: string }) => m.key === 'model-3d')?.available,
      true,
    );
    assert.equal((await browser.post('/admin/models/model-3d', { max_active: '7' })).statusCode, 303);
    assert.match((await browser.get('/admin/models')).body, /name="max_active"[^>]*value="7"/);
    assert.equal((await browser.post('/admin/models/model-3d', { max_active: '0' })).statusCode, 422);
    // The console takes the operator API's range (1 to 10,000), and its field allows what the API set.
    assert.equal((await browser.post('/admin/models/model-3d', { max_active: '5000' })).statusCode, 303);
    assert.match(
      (await browser.get('/admin/models')).body,
      /name="max_active"[^>]*max="10000"[^>]*value="5000"/,
    );
    assert.equal((await browser.post('/admin/models/model-3d', { max_active: '10001' })).statusCode, 422);
    await t.admin('PATCH', '/admin/v1/models/model-3d', { max_active: 10 });
    assert.equal((await browser.post('/admin/models/nope', { available: 'on' })).statusCode, 404);
  });

  test('channels, and the console in Russian', async () => {
    const browser = await operatorSignedIn(t);
    const channels = await browser.get('/admin/channels');
    assert.equal(channels.statusCode, 200);
    assert.match(textOf(channels.body), /No channels/);
    const lang = await browser.post('/admin/language', { lang: 'ru', next: '/admin/channels' });
    assert.equal(lang.headers.location, '/admin/channels');
    const ru = await browser.get('/admin/channels');
    assert.match(textOf(ru.body), /Каналов нет/);
    assert.match(textOf(ru.body), /Аккаунты/);
    // The page comes back as it was: a search or a ledger's filters stay.
    const search = await browser.post('/admin/language', { lang: 'en', next: '/admin/accounts?q=acme' });
    assert.equal(search.headers.location, '/admin/accounts?q=acme');
    for (const next of [
      '//evil.test',
      '/\\evil.test',
      'https://evil.test/admin',
      '/signin',
      '/administrator',
    ]) {
      const away = await browser.post('/admin/language', { lang: 'en', next });
      assert.equal(away.headers.location, '/admin', next);
    }
  });

  test('channels: name, provider, models, circuit and slots, switched off and on through the router', async () => {
    const withChannels = await startTestApp({
      worker: false,
      channels: testChannels([
        {
          name: 'tripo-main',
          provider: 'tripo',
          models: ['model-3d'],
          api_key_env: 'TEST_KEY',
          max_concurrency: 3,
        },
      ]),
      adapters: scriptedAdapters(new ScriptedUpstream()),
    });
    try {
      const browser = await operatorSignedIn(withChannels);
      const page = await browser.get('/admin/channels');
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<code>tripo-main<\/code>/);
      const row = textOf(/<tr data-channel=[\s\S]*?<\/tr>/.exec(page.body)?.[0] ?? '');
      assert.match(row, /tripo/);
      assert.match(row, /model-3d/);
      assert.match(row, /closed \(runs go\)/);
      assert.match(row, /0 \/ 3/);
      // In Russian the circuit is said in words, its state's name beside them.
      await browser.post('/admin/language', { lang: 'ru', next: '/admin/channels' });
      const ru = textOf(
        /<tr data-channel=[\s\S]*?<\/tr>/.exec((await browser.get('/admin/channels')).body)?.[0] ?? '',
      );
      assert.match(ru, /замкнут, запуски идут \(closed\)/);
      // A channel (канал) is said to be on in the masculine, a model (модель) in the feminine.
      assert.match(ru, /включён/);
      assert.doesNotMatch(ru, /включена/);
      await browser.post('/admin/language', { lang: 'en', next: '/admin/channels' });
      await browser.get('/admin/channels');
      // A form without on or off changes nothing and says so, never "Saved.".
      for (const enabled of ['maybe', '']) {
        const odd = await browser.post('/admin/channels/tripo-main', { enabled });
        assert.equal(odd.statusCode, 422, odd.body);
        assert.doesNotMatch(odd.headers.location ?? '', /done=saved/);
      }
      assert.equal((await withChannels.admin('GET', '/admin/v1/channels')).json().channels[0].enabled, true);
      const off = await browser.post(`/admin/channels/${encodeURIComponent('tripo-main')}`, {
        enabled: 'off',
      });
      assert.equal(off.statusCode, 303);
      const api = (await withChannels.admin('GET', '/admin/v1/channels')).json();
      assert.equal(api.channels[0].enabled, false);
      assert.ok(buttons((await browser.get('/admin/channels')).body).includes('Turn on'));
    } finally {
      await withChannels.close();
    }
  });

  test("top-ups: every account's, filtered by state and linked to the account; an account's on its page", async () => {
    const paying = await startTestApp({ worker: false, env: { PAYMENTS: 'test' } });
    try {
      const browser = await operatorSignedIn(paying);
      const a = await paying.account();
      const b = await paying.account();
      const topups = paying.container.services.topups;
      const make = async (key: string, amount: number) => {
        const made = await paying.call(key, 'POST', '/v1/topups', { amount_minor: amount });
        assert.equal(made.statusCode, 201, made.body);
        return made.json().id as string;
      };
      const paid = await make(a.key, 150_000);
      await make(a.key, 20_000);
      const other = await make(b.key, 30_000);
      await topups.decideTest(a.id, paid, 'succeeded');

      const all = await browser.get('/admin/topups');
      assert.equal(all.statusCode, 200);
      const text = textOf(all.body);
      for (const id of [paid, other]) assert.match(all.body, new RegExp(id));
      assert.match(text, /Paid/);
      assert.match(text, /Waiting for payment/);
      assert.match(all.body, new RegExp(`href="/admin/accounts/${b.id}"`));
      const succeeded = await browser.get('/admin/topups?status=succeeded');
      assert.match(succeeded.body, new RegExp(paid));
      assert.doesNotMatch(succeeded.body, new RegExp(other));
      assert.match(textOf(succeeded.body), /RUB\s?1,500\.00/);

      const page = await browser.get(`/admin/accounts/${a.id}`);
      assert.match(textOf(page.body), /Top-ups/);
      assert.match(page.body, new RegExp(paid));
      assert.doesNotMatch(page.body, new RegExp(other));
      // The credit is in the account's ledger with the payment's id as its reference.
      assert.match(textOf(page.body), /RUB\s?1,500\.00/);

      // One account's top-ups, past the page its console page shows: a link leads on to the older ones.
      const only = await browser.get(`/admin/topups?account=${a.id}`);
      assert.match(only.body, new RegExp(paid));
      assert.doesNotMatch(only.body, new RegExp(other));
      const many: string[] = [];
      for (let i = 0; i < 51; i += 1) many.push(await make(b.key, 10_000 + i));
      const bPage = await browser.get(`/admin/accounts/${b.id}`);
      const olderHref =
        /<p class="pager"><a href="([^"]+)"/.exec(bPage.body)?.[1]?.replaceAll('&amp;', '&') ?? '';
      assert.ok(olderHref.startsWith(`/admin/topups?account=${b.id}&cursor=`), olderHref);
      const older = await browser.get(olderHref);
      assert.equal(older.statusCode, 200);
      assert.match(older.body, new RegExp(other), 'the oldest of the account is on the next page');
      assert.doesNotMatch(older.body, new RegExp(paid), "never another account's");
      assert.ok(many.every((id) => bPage.body.includes(id) || older.body.includes(id)));
    } finally {
      await paying.close();
    }
  });
});
