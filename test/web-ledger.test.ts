/**
 * The ledger page and its CSV export over `app.inject` (CONTRACT §13): entries newest first with kinds
 * in words, task links and available amounts; filters by kind and period; pages by cursor; the CSV's
 * headers, columns, RFC 4180 quoting and formula safety, every entry over several reads; and never
 * another account's entries.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { credit, EntriesReader } from '../src/ledger/index.ts';
import { TopupService } from '../src/payments/index.ts';
import { ADMIN_TOKEN, type TestApp, waitForFinal } from './helpers.ts';
import { Browser, type FakePeople, lastToken, startWithFakePeople, textOf } from './web-kit.ts';

/** Parses RFC 4180 text (quoted fields, doubled quotes, CRLF lines). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i += 1;
    } else cell += c;
  }
  assert.equal(cell, '', 'the file ends with CRLF');
  return rows;
}

describe('ledger page and CSV export', () => {
  let t: TestApp;
  let people: FakePeople;
  let browser: Browser;
  let accountId: string;
  let taskId: string;
  let other: Browser;
  before(async () => {
    ({ t, people } = await startWithFakePeople());
    browser = new Browser(t);
    const email = await browser.signUp();
    const person = people.persons.get(email);
    assert.ok(person);
    accountId = person.accountId;
    for (const [amount, reference] of [
      [100_000, 'first'],
      [2_500, '=HYPERLINK("http://evil.test","x")'],
      [1_000, 'with, comma and "quotes"'],
      [700, '@sum'],
      [300, '<script>alert(1)</script>'],
    ] as const) {
      const res = await t.admin('POST', `/admin/v1/accounts/${accountId}/credits`, {
        amount_minor: amount,
        reference,
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    await people.confirmEmail(lastToken(people.confirmTokens));
    const issued = await people.createKey(person.id, { name: 'k', models: null, dailyLimitMinor: null });
    const task = await t.call(issued.key, 'POST', '/v1/tasks', {
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt: 'a lamp', texture: false, pbr: false },
    });
    assert.equal(task.statusCode, 202, task.body);
    taskId = task.json().id;
    assert.equal((await waitForFinal(t, issued.key, taskId)).status, 'succeeded');
    other = new Browser(t);
    const otherEmail = await other.signUp();
    const otherAccount = people.persons.get(otherEmail)?.accountId;
    await t.admin('POST', `/admin/v1/accounts/${otherAccount}/credits`, {
      amount_minor: 4_242,
      reference: 'not-yours',
    });
  });
  after(() => t.close());

  test('lists the entries newest first with kinds in words, task links and amounts', async () => {
    const res = await browser.get('/ledger');
    assert.equal(res.statusCode, 200);
    const text = textOf(res.body);
    const kinds = [
      ...res.body.matchAll(
        /<tr data-entry="[^"]+">\s*<td[^>]*>.*?<\/td>\s*<td data-label="Kind">([^<]+)<\/td>/g,
      ),
    ].map((m) => m[1]);
    assert.deepEqual(kinds, [
      'Charged (was held)',
      'Held for a task',
      'Credit',
      'Credit',
      'Credit',
      'Credit',
      'Credit',
    ]);
    assert.match(res.body, new RegExp(`href="/tasks/${taskId}"`));
    assert.match(text, /\+RUB\s?1,000\.00/);
    assert.match(text, /with, comma and "quotes"/);
    assert.doesNotMatch(res.body, /<script>alert/);
    assert.match(res.body, /&lt;script>alert\(1\)|&lt;script&gt;alert\(1\)/);
    assert.doesNotMatch(text, /not-yours|42\.42/);
    assert.match(text, /Available after/);
    // Moscow time: the date column shows the Moscow wall clock.
    assert.match(res.body, /<time datetime="[^"]+">\d{4}-\d{2}-\d{2} \d{2}:\d{2}<\/time>/);
    const ru = await browser.get('/ledger', { 'accept-language': 'ru' });
    assert.equal(ru.statusCode, 200);
  });

  test('a date out of range, a day the calendar lacks, and From after To are each said as what they are', async () => {
    const alert = (body: string) =>
      textOf(/<p class="error" role="alert">[^<]*<\/p>/.exec(body)?.[0] ?? '').trim();
    const ruBrowser = new Browser(t, { 'accept-language': 'ru' });
    await ruBrowser.signUp();
    for (const [url, en, ru] of [
      [
        '/ledger?from=0001-01-01',
        '“From”: 0001-01-01 is outside the supported dates, 1970-01-01 to 9999-12-31.',
        '«С»: дата 0001-01-01 вне поддерживаемых, с 1970-01-01 по 9999-12-31.',
      ],
      [
        '/ledger?to=1969-12-31',
        '“To”: 1969-12-31 is outside the supported dates, 1970-01-01 to 9999-12-31.',
        '«По»: дата 1969-12-31 вне поддерживаемых, с 1970-01-01 по 9999-12-31.',
      ],
      [
        '/ledger?to=2025-02-30',
        '“To”: the calendar has no day 2025-02-30.',
        '«По»: дня 2025-02-30 в календаре нет.',
      ],
      [
        '/ledger?from=2025-03-02&to=2025-03-01',
        '“From” (2025-03-02) is after “To” (2025-03-01), so nothing can match: choose a From on or before To.',
        'Дата «С» (2025-03-02) позже даты «По» (2025-03-01), подходящих записей быть не может: выберите «С» не позже «По».',
      ],
    ] as const) {
      const res = await browser.get(url, { 'accept-language': 'en' });
      assert.equal(res.statusCode, 422, url);
      assert.equal(alert(res.body), en, url);
      const csv = await browser.get(url.replace('/ledger', '/ledger.csv'), { 'accept-language': 'en' });
      assert.equal(csv.statusCode, 422, url);
      assert.equal(alert(csv.body), en, url);
      assert.equal(alert((await ruBrowser.get(url)).body), ru, url);
    }
    // One day, From equal to To, is a period; the supported edges are dates like any other.
    for (const url of ['/ledger?from=2025-03-01&to=2025-03-01', '/ledger?from=1970-01-01&to=9999-12-31']) {
      assert.equal((await browser.get(url)).statusCode, 200, url);
    }
    assert.match(
      (await browser.get('/ledger')).body,
      /name="from" value(="")? min="1970-01-01" max="9999-12-31"/,
    );
  });

  test('filters by kind and period, and pages by cursor', async () => {
    const holds = await browser.get('/ledger?kind=hold');
    assert.equal((holds.body.match(/<tr data-entry=/g) ?? []).length, 1);
    const future = await browser.get('/ledger?from=2999-01-01');
    assert.match(textOf(future.body), /No entries match/);
    const past = await browser.get('/ledger?to=2000-01-01');
    assert.match(textOf(past.body), /No entries match/);
    const bad = await browser.get('/ledger?from=yesterday');
    assert.equal(bad.statusCode, 422);
    assert.match(textOf(bad.body), /“From”: dates are written as YYYY-MM-DD, not “yesterday”\./);
    assert.equal((await browser.get('/ledger?kind=gift')).statusCode, 422);
    assert.equal((await browser.get('/ledger?cursor=nope')).statusCode, 422);
    // A filter sent twice is refused as written, not dropped (which listed every entry).
    const twice = await browser.get('/ledger?from=2030-01-01&from=2030-02-01');
    assert.equal(twice.statusCode, 422);
    assert.match(textOf(twice.body), /not “2030-01-01, 2030-02-01”/);
    assert.equal((await browser.get('/ledger?kind=credit&kind=hold')).statusCode, 422);
    assert.equal((await browser.get('/ledger.csv?kind=credit&kind=hold')).statusCode, 422);

    const ids = new Set<string>();
    let url: string | null = '/ledger';
    let pages = 0;
    // Pages of 50: add entries so there are two.
    await t.container.db.dialect.transaction(t.container.db.db, async (tx) => {
      for (let i = 0; i < 60; i += 1) {
        await credit(tx, { accountId, amountMinor: 1, reference: `bulk-page-${i}`, at: new Date() });
      }
    });
    while (url) {
      const page = await browser.get(url);
      for (const m of page.body.matchAll(/<tr data-entry="([^"]+)"/g)) ids.add(m[1] ?? '');
      const next = /<a rel="next" href="([^"]+)"/.exec(page.body)?.[1];
      url = next ? next.replaceAll('&amp;', '&') : null;
      pages += 1;
    }
    assert.equal(pages, 2);
    assert.equal(ids.size, 67);
  });

  test('the CSV export: headers, columns, quoting, formula safety, every entry over several reads', async () => {
    await t.container.db.dialect.transaction(t.container.db.db, async (tx) => {
      for (let i = 0; i < 1_100; i += 1) {
        await credit(tx, { accountId, amountMinor: 5, reference: `bulk-csv-${i}`, at: new Date() });
      }
    });
    const res = await browser.get('/ledger.csv');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
    assert.match(
      String(res.headers['content-disposition']),
      /^attachment; filename="ledger-\d{4}-\d{2}-\d{2}\.csv"$/,
    );
    const rows = parseCsv(res.body);
    assert.deepEqual(rows[0], [
      'id',
      'created_at',
      'kind',
      'amount_minor',
      'amount_rub',
      'currency',
      'task_id',
      'reference',
      'topup_id',
    ]);
    const entries = rows.slice(1);
    assert.equal(entries.length, 7 + 60 + 1_100);
    assert.equal(new Set(entries.map((r) => r[0])).size, entries.length);
    const byRef = new Map(entries.map((r) => [r[7], r]));
    assert.deepEqual(byRef.get('\'=HYPERLINK("http://evil.test","x")')?.slice(2, 6), [
      'credit',
      '2500',
      '25.00',
      'RUB',
    ]);
    assert.ok(byRef.has('with, comma and "quotes"'));
    assert.ok(byRef.has("'@sum"));
    assert.match(res.body, /"with, comma and ""quotes"""/);
    const capture = entries.find((r) => r[2] === 'capture');
    assert.equal(capture?.[6], taskId);
    assert.match(capture?.[1] ?? '', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.ok(entries.every((r) => r[7] !== 'not-yours'));

    const credits = parseCsv((await browser.get('/ledger.csv?kind=hold')).body);
    assert.equal(credits.length, 2);
    assert.equal((await browser.get('/ledger.csv?to=never')).statusCode, 422);
  });

  test('a failing first read of the export is an error page, never a 200 with a cut file', async () => {
    const page = EntriesReader.prototype.page;
    EntriesReader.prototype.page = () => Promise.reject(new Error('the database is gone'));
    try {
      const res = await browser.get('/ledger.csv');
      assert.equal(res.statusCode, 500, res.body.slice(0, 200));
      assert.notEqual(res.headers['content-type'], 'text/csv; charset=utf-8');
    } finally {
      EntriesReader.prototype.page = page;
    }
    assert.equal((await browser.get('/ledger.csv')).statusCode, 200);
  });

  test("another account's ledger shows only its own entry; signed out goes to sign-in", async () => {
    const theirs = await other.get('/ledger.csv');
    const rows = parseCsv(theirs.body).slice(1);
    assert.deepEqual(
      rows.map((r) => r[7]),
      ['not-yours'],
    );
    const page = await other.get('/ledger');
    assert.equal((page.body.match(/<tr data-entry=/g) ?? []).length, 1);
    const anonymous = await new Browser(t).get('/ledger.csv');
    assert.equal(anonymous.statusCode, 303);
  });
});

describe("the ledger names each top-up's credit by its top-up", () => {
  let t: TestApp;
  let people: FakePeople;
  before(async () => {
    ({ t, people } = await startWithFakePeople({
      env: { PAYMENTS: 'test' },
    }));
  });
  after(() => t.close());

  /** A confirmed person's browser and account. */
  async function person(): Promise<{ browser: Browser; accountId: string }> {
    const browser = new Browser(t);
    const email = await browser.signUp();
    await people.confirmEmail(lastToken(people.confirmTokens));
    const accountId = people.persons.get(email)?.accountId;
    assert.ok(accountId);
    return { browser, accountId };
  }

  /** Tops up `amount` rubles through the form and pays on the test page: the top-up and its payment. */
  async function paidTopup(browser: Browser, accountId: string, amount: string) {
    await browser.get('/topup');
    const made = await browser.post('/topup', { amount });
    assert.equal(made.statusCode, 303, made.body);
    const id = /^\/topups\/(tp_[0-9a-f-]+)$/.exec(String(made.headers.location))?.[1];
    assert.ok(id);
    await browser.get(`/topups/${id}/pay`);
    assert.equal((await browser.post(`/topups/${id}/pay`, { action: 'pay' })).statusCode, 303);
    const listed = await t.admin('GET', `/admin/v1/topups?account_id=${accountId}`);
    const topup = (listed.json().topups as Array<{ id: string; status: string; payment_id: string }>).find(
      (one) => one.id === id,
    );
    assert.equal(topup?.status, 'succeeded');
    return { id, paymentId: topup.payment_id };
  }

  test('the page links the top-up, in one call for the page; the CSV and the console name it', async () => {
    const { browser, accountId } = await person();
    const first = await paidTopup(browser, accountId, '150');
    const second = await paidTopup(browser, accountId, '250');
    const calls: string[][] = [];
    const ofPayments = TopupService.prototype.ofPayments;
    TopupService.prototype.ofPayments = function (this: TopupService, account, paymentIds) {
      calls.push([...paymentIds]);
      return ofPayments.call(this, account, paymentIds);
    };
    let page: Awaited<ReturnType<Browser['get']>>;
    try {
      page = await browser.get('/ledger');
    } finally {
      TopupService.prototype.ofPayments = ofPayments;
    }
    assert.equal(page.statusCode, 200);
    assert.deepEqual(
      calls.map((ids) => ids.toSorted()),
      [[first.paymentId, second.paymentId].toSorted()],
    );
    for (const { id, paymentId } of [first, second]) {
      const link = new RegExp(`<a href="/topups/${id}">top-up ${id}</a>`);
      assert.match(page.body, link);
      // The payment's id, the credit's reference, is still shown.
      assert.match(page.body, new RegExp(`<span class="hint">${paymentId}</span>`));
    }
    await browser.post('/language', { lang: 'ru', next: '/ledger' });
    const ru = await browser.get('/ledger');
    assert.match(ru.body, new RegExp(`<a href="/topups/${first.id}">пополнение ${first.id}</a>`));
    await browser.post('/language', { lang: 'en', next: '/ledger' });

    const rows = parseCsv((await browser.get('/ledger.csv')).body);
    assert.deepEqual(rows[0]?.slice(-3), ['task_id', 'reference', 'topup_id']);
    const byRef = new Map(rows.slice(1).map((r) => [r[7], r]));
    assert.equal(byRef.get(first.paymentId)?.[8], first.id);
    assert.equal(byRef.get(second.paymentId)?.[8], second.id);

    const operator = new Browser(t);
    await operator.get('/admin/signin');
    assert.equal((await operator.post('/admin/signin', { token: ADMIN_TOKEN })).statusCode, 303);
    const console = await operator.get(`/admin/accounts/${accountId}`);
    assert.equal(console.statusCode, 200);
    assert.match(console.body, new RegExp(`<span>top-up ${first.id}</span>`));
    assert.match(console.body, new RegExp(`<span class="hint">${first.paymentId}</span>`));
  });

  test("another account's payment id, taken as an operator's reference, is never linked", async () => {
    const payer = await person();
    const paid = await paidTopup(payer.browser, payer.accountId, '300');
    const other = await person();
    const credited = await t.admin('POST', `/admin/v1/accounts/${other.accountId}/credits`, {
      amount_minor: 30_000,
      reference: paid.paymentId,
    });
    assert.equal(credited.statusCode, 201, credited.body);
    const page = await other.browser.get('/ledger');
    assert.match(page.body, new RegExp(`<span>${paid.paymentId}</span>`));
    assert.doesNotMatch(page.body, new RegExp(paid.id));
    const rows = parseCsv((await other.browser.get('/ledger.csv')).body).slice(1);
    assert.deepEqual(
      rows.map((r) => [r[7], r[8]]),
      [[paid.paymentId, '']],
    );
  });
});
