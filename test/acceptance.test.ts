import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { makePng, makeWav } from '../src/media/fixtures.ts';
import { balances, errorOf, expectError, startTestApp, type TestApp } from './helpers.ts';

const MB = 1024 * 1024;

/**
 * A file server for URL settings: `/held/…` answers only when the test says so, `/big/<bytes>.png` is a
 * valid picture padded to that size, anything else a small picture; every download is counted.
 */
class FileServer {
  hits = 0;
  readonly #held: http.ServerResponse[] = [];
  readonly #arrivals: Array<() => void> = [];
  #png = Buffer.alloc(0);
  readonly server = http.createServer((req, res) => {
    this.hits++;
    const url = req.url ?? '';
    if (url.startsWith('/held/')) {
      this.#held.push(res);
      this.#arrivals.shift()?.();
      return;
    }
    const big = /^\/big\/(\d+)\.png(\?|$)/.exec(url);
    if (big) return void res.end(Buffer.concat([this.#png, Buffer.alloc(Number(big[1]))]));
    res.end(this.#png);
  });
  base = '';

  async start(dir: string): Promise<void> {
    this.#png = fs.readFileSync(await makePng(dir, 64, 48));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resolves once `count` downloads of `/held/…` are waiting at the same time. */
  async held(count: number): Promise<void> {
    while (this.#held.length < count) await new Promise<void>((resolve) => this.#arrivals.push(resolve));
  }

  release(): void {
    for (const res of this.#held.splice(0)) res.end(this.#png);
  }

  close(): void {
    for (const res of this.#held.splice(0)) res.destroy();
    this.server.close();
  }
}

const photo = (url: string) => ({
  model: 'model-3d',
  settings: { task_type: 'image_to_model', image_url: [url], texture: false, pbr: false },
});
const views = (front: string, left: string) => ({
  model: 'model-3d',
  settings: {
    task_type: 'multiview_to_model',
    front_url: [front],
    left_url: [left],
    texture: false,
    pbr: false,
  },
});

describe('acceptance checks what it can before downloading', () => {
  let t: TestApp;
  const files = new FileServer();
  before(async () => {
    t = await startTestApp({ worker: false, env: { FETCH_ALLOW_ADDRESSES: '127.0.0.1' } });
    await files.start(t.dir);
  });
  after(async () => {
    files.close();
    await t.close();
  });

  test('[10.17] an account that cannot afford the cheapest run downloads nothing: 402 before any download', async () => {
    const broke = await t.account();
    files.hits = 0;
    const res = await t.call(
      broke.key,
      'POST',
      '/v1/tasks',
      views(`${files.base}/a.png`, `${files.base}/b.png`),
    );
    expectError(res, 402, 'insufficient_funds');
    assert.equal(files.hits, 0);
    // The price is still answered: the caller sees the amount beside what is available.
    const price = await t.call(
      broke.key,
      'POST',
      '/v1/price',
      views(`${files.base}/a.png`, `${files.base}/b.png`),
    );
    assert.equal(price.statusCode, 200, price.body);
    assert.equal(price.json().available_minor, 0);
    assert.ok(price.json().amount_minor > 0);
  });

  test('[10.17] a refusal before the downloads names the cheapest price as a floor, not as the price', async () => {
    // music extend: 1200 kopecks with up to 90 s of input; a 121 s file adds two started 30 s blocks.
    const acct = await t.account({ balanceMinor: 1000 });
    const uploaded = await t.app.inject({
      method: 'POST',
      url: '/v1/files?filename=track.wav',
      payload: fs.readFileSync(await makeWav(t.dir, 121)),
      headers: { 'content-type': 'audio/wav', authorization: `Bearer ${acct.key}` },
    });
    assert.equal(uploaded.statusCode, 201, uploaded.body);
    const extend = {
      model: 'music',
      settings: { mode: 'extend', audio: [uploaded.json().url], continueAt: 60, instrumental: true },
    };
    const price = await t.call(acct.key, 'POST', '/v1/price', extend);
    assert.equal(price.json().amount_minor, 1800, price.body);
    const refused = await t.call(acct.key, 'POST', '/v1/tasks', extend);
    expectError(refused, 402, 'insufficient_funds');
    assert.match(errorOf(refused).message, /costs at least 1200 kopecks/);
    const ru = await t.call(acct.key, 'POST', '/v1/tasks', extend, { 'accept-language': 'ru' });
    assert.match(errorOf(ru).message, /стоит не меньше 1200 коп\./);
  });

  test('[10.17] the active-task limit and the daily limit refuse before any download', async () => {
    const acct = await t.account({ balanceMinor: 1_000_000, dailyLimitMinor: 100 });
    files.hits = 0;
    expectError(
      await t.call(acct.key, 'POST', '/v1/tasks', photo(`${files.base}/c.png`)),
      403,
      'key_daily_limit_exceeded',
    );
    assert.equal(files.hits, 0);
    const busy = await t.account({ balanceMinor: 1_000_000 });
    assert.equal((await t.admin('PATCH', '/admin/v1/models/model-3d', { max_active: 1 })).statusCode, 200);
    try {
      const first = await t.call(busy.key, 'POST', '/v1/tasks', photo(`${files.base}/d.png`));
      assert.equal(first.statusCode, 202, first.body);
      files.hits = 0;
      expectError(
        await t.call(busy.key, 'POST', '/v1/tasks', photo(`${files.base}/e.png`)),
        429,
        'too_many_active',
      );
      assert.equal(files.hits, 0);
    } finally {
      await t.admin('PATCH', '/admin/v1/models/model-3d', { max_active: 10 });
    }
  });
});

describe('downloads have a total time and byte budget', () => {
  let t: TestApp;
  const files = new FileServer();
  before(async () => {
    t = await startTestApp({
      worker: false,
      env: {
        FETCH_ALLOW_ADDRESSES: '127.0.0.1',
        DOWNLOAD_TIMEOUT: '2s',
        DOWNLOAD_REQUEST_MB: '1',
        DOWNLOAD_ACCOUNT_MB: '4',
      },
    });
    await files.start(t.dir);
  });
  after(async () => {
    files.close();
    await t.close();
  });

  test('[10.1] URL inputs download in parallel under one total budget; past it the request is refused', {
    timeout: 30_000,
  }, async () => {
    const acct = await t.account({ balanceMinor: 1_000_000 });
    const pending = t.call(
      acct.key,
      'POST',
      '/v1/tasks',
      views(`${files.base}/held/front.png`, `${files.base}/held/left.png`),
    );
    // Both fields are downloading at once.
    await files.held(2);
    const res = await pending;
    expectError(res, 422, 'invalid_settings');
    assert.match(res.json().error.message, /2 s/);
    assert.match(res.json().error.message, /\/v1\/files/);
    files.release();
    assert.equal((await balances(t, acct.id)).held_minor, 0);
  });

  test('[10.17] the links of one request together are capped: 413 request_too_large, also for /v1/price', async () => {
    const acct = await t.account({ balanceMinor: 1_000_000 });
    const big = photo(`${files.base}/big/${Math.round(1.5 * MB)}.png`);
    const price = await t.call(acct.key, 'POST', '/v1/price', big);
    expectError(price, 413, 'request_too_large');
    assert.match(price.json().error.message, /1 MB/);
    // The unit is in the request's language, as the rest of the message.
    const priceRu = await t.call(acct.key, 'POST', '/v1/price?lang=ru', big);
    expectError(priceRu, 413, 'request_too_large');
    assert.match(priceRu.json().error.message, /больше 1 МБ\./);
    expectError(await t.call(acct.key, 'POST', '/v1/tasks', big), 413, 'request_too_large');
    const ok = await t.call(
      acct.key,
      'POST',
      '/v1/price',
      photo(`${files.base}/big/${Math.round(0.5 * MB)}.png`),
    );
    assert.equal(ok.statusCode, 200, ok.body);
  });

  test('[10.17] the bytes one account makes the server download are capped per minute: 429 rate_limited', async () => {
    const acct = await t.account({ balanceMinor: 1_000_000 });
    const answers: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await t.call(
        acct.key,
        'POST',
        '/v1/price',
        photo(`${files.base}/big/${Math.round(0.9 * MB)}.png?n=${i}`),
      );
      answers.push(res.statusCode);
      if (res.statusCode === 429) {
        expectError(res, 429, 'rate_limited');
        assert.ok(Number(res.headers['retry-after']) >= 1);
        assert.match(res.json().error.message, /4 MB/);
      }
    }
    const ru = await t.call(
      acct.key,
      'POST',
      '/v1/price',
      photo(`${files.base}/big/${Math.round(0.9 * MB)}.png?n=ru`),
      { 'accept-language': 'ru' },
    );
    expectError(ru, 429, 'rate_limited');
    assert.match(ru.json().error.message, /скачал 4 МБ за последнюю минуту/);
    assert.deepEqual(answers.slice(0, 2), [200, 200], String(answers));
    assert.equal(answers.at(-1), 429, String(answers));
    // Another account is not affected.
    const other = await t.account({ balanceMinor: 1_000_000 });
    const res = await t.call(
      other.key,
      'POST',
      '/v1/price',
      photo(`${files.base}/big/${Math.round(0.9 * MB)}.png`),
    );
    assert.equal(res.statusCode, 200, res.body);
  });
});
