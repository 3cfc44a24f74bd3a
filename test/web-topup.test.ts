/**
 * The top-up form without scripts (CONTRACT §13, §14): a form sent twice makes one top-up; the same form
 * sent again with another amount makes another; a form without its key still works; a double click while
 * YooKassa is still creating the payment ends on that same top-up.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isApiError } from '../src/errors.ts';
import { YookassaFake } from './fakes/yookassa.ts';
import type { TestApp } from './helpers.ts';
import { Browser, type FakePeople, lastToken, startWithFakePeople } from './web-kit.ts';

describe('top-up form without scripts', () => {
  let t: TestApp;
  let people: FakePeople;
  before(async () => {
    ({ t, people } = await startWithFakePeople({
      env: { PAYMENTS: 'test' },
    }));
  });
  after(() => t.close());

  async function confirmed(): Promise<Browser> {
    const browser = new Browser(t);
    await browser.signUp();
    await people.confirmEmail(lastToken(people.confirmTokens));
    return browser;
  }

  test('one form sent twice makes one top-up; another amount from the same form makes another', async () => {
    const browser = await confirmed();
    const page = await browser.get('/topup');
    const formKey = /name="form_key" value="([0-9a-f-]{36})"/.exec(page.body)?.[1];
    assert.ok(formKey, 'the form carries its key');
    const send = async (amount: string, key: string | undefined = formKey) => {
      const res = await browser.post('/topup', key === undefined ? { amount } : { amount, form_key: key });
      assert.equal(res.statusCode, 303, res.body);
      return String(res.headers.location);
    };
    const first = await send('1500');
    assert.match(first, /^\/topups\/tp_/);
    assert.equal(await send('1500'), first, 'sent again: the same top-up');
    const other = await send('2000');
    assert.notEqual(other, first, 'another amount: another top-up');
    assert.notEqual(await send('1500', 'not-a-key'), first, 'a key it did not make is no key');
    // Each render gives the form a key of its own.
    const again = /name="form_key" value="([0-9a-f-]{36})"/.exec((await browser.get('/topup')).body)?.[1];
    assert.notEqual(again, formKey);
  });

  test("a return_url's host cannot add directives to the pay page's Content-Security-Policy", async () => {
    const browser = await confirmed();
    const accountId = [...people.persons.values()].at(-1)?.accountId;
    assert.ok(accountId);
    const policyOf = async (returnUrl: string) => {
      // What POST /v1/topups makes of a body with this return_url (its schema takes it as a URL).
      const { topup } = await t.container.services.topups.create(
        accountId,
        { amount_minor: 500, return_url: returnUrl },
        null,
      );
      const page = await browser.get(`/topups/${topup.id}/pay`);
      assert.equal(page.statusCode, 200, page.body);
      return String(page.headers['content-security-policy'])
        .split(';')
        .map((directive) => directive.trim().split(/\s+/));
    };
    // The URL parser keeps `;` in a host: written into the policy it ended form-action and put an empty
    // script-src (no script at all) ahead of the page's own.
    const injected = await policyOf('https://shop;script-src/back');
    assert.deepEqual(
      injected.filter(([name]) => name === 'script-src'),
      [['script-src', "'self'"]],
    );
    assert.deepEqual(
      injected.find(([name]) => name === 'form-action'),
      ['form-action', "'self'"],
    );
    // A plain origin is still allowed as the form's target.
    const plain = await policyOf('https://shop.example:8443/back?x=1');
    assert.deepEqual(
      plain.find(([name]) => name === 'form-action'),
      ['form-action', "'self'", 'https://shop.example:8443'],
    );
  });

  test('the list of top-ups goes on past its first page to the oldest', async () => {
    const browser = await confirmed();
    const accountId = [...people.persons.values()].at(-1)?.accountId;
    assert.ok(accountId);
    const made: string[] = [];
    for (let i = 0; i < 25; i++) {
      const { topup } = await t.container.services.topups.create(accountId, { amount_minor: 100 + i }, null);
      made.push(topup.id);
    }
    const listed: string[] = [];
    let next: string | null = '/topup';
    for (let pages = 0; next !== null && pages < 5; pages++) {
      const page = await browser.get(next);
      assert.equal(page.statusCode, 200, page.body);
      listed.push(...[...page.body.matchAll(/<code>(tp_[^<]+)<\/code>/g)].map((m) => m[1] ?? ''));
      const older = /<a rel="next" href="([^"]+)">Older top-ups<\/a>/.exec(page.body)?.[1];
      next = older === undefined ? null : older.replaceAll('&amp;', '&');
      if (pages > 0) assert.match(page.body, /<a href="\/topup">Newest top-ups<\/a>/);
    }
    assert.deepEqual(listed, made.toReversed(), 'every top-up once, newest first');
    const bad = await browser.get('/topup?cursor=nonsense');
    assert.equal(bad.statusCode, 422, bad.body);
  });
});

describe('top-up form without scripts, YooKassa slow to create the payment', () => {
  let fake: YookassaFake;
  let t: TestApp;
  let people: FakePeople;
  const realFetch = globalThis.fetch;
  /** While set, the service's POST to YooKassa waits for it; `entered` tells that one is waiting. */
  let gate: { open: Promise<void>; entered: () => void } | null = null;
  before(async () => {
    fake = await YookassaFake.start();
    globalThis.fetch = async (input, init) => {
      if (gate && init?.method === 'POST' && String(input).startsWith(fake.baseUrl)) {
        gate.entered();
        await gate.open;
      }
      return realFetch(input, init);
    };
    ({ t, people } = await startWithFakePeople({
      worker: false,
      env: fake.env,
    }));
  });
  after(async () => {
    globalThis.fetch = realFetch;
    await t.close();
    await fake.close();
  });

  test('a double click: the second send waits for the first and goes on to the same top-up', async () => {
    const browser = new Browser(t);
    await browser.signUp();
    await people.confirmEmail(lastToken(people.confirmTokens));
    const formKey = /name="form_key" value="([0-9a-f-]{36})"/.exec((await browser.get('/topup')).body)?.[1];
    assert.ok(formKey);
    let open = () => {};
    let entered = () => {};
    const waiting = new Promise<void>((resolve) => {
      entered = resolve;
    });
    gate = { open: new Promise<void>((resolve) => (open = resolve)), entered };
    const first = browser.post('/topup', { amount: '1500', form_key: formKey });
    await waiting;
    const second = browser.post('/topup', { amount: '1500', form_key: formKey });
    // POST /v1/topups under the same key (the island's) does not wait: 409 request_in_progress at once.
    const accountId = [...people.persons.values()].at(-1)?.accountId;
    assert.ok(accountId);
    await assert.rejects(
      t.container.services.topups.create(
        accountId,
        { amount_minor: 150_000 },
        `topup-form-${formKey}-150000`,
      ),
      (error) => isApiError(error) && error.code === 'request_in_progress',
    );
    setTimeout(open, 500);
    const [a, b] = await Promise.all([first, second]);
    gate = null;
    assert.equal(a.statusCode, 303, a.body);
    // The browser shows the second answer: the top-up's page, not a 409 whose new form makes another.
    assert.equal(b.statusCode, 303, b.body);
    assert.equal(b.headers.location, a.headers.location);
    assert.equal(fake.payments.size, 1);
  });
});
