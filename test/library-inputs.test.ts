import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { makeMp4, makePng, makeWav } from '../src/media/fixtures.ts';
import { errorOf, startTestApp, type TestApp } from './helpers.ts';

/** A private address and a cloud metadata address: never fetched (CONTRACT §6). */
const BLOCKED = ['http://10.1.2.3/x.png', 'http://169.254.169.254/latest/meta-data/x.png'];

describe('library creations check every linked file', () => {
  let t: TestApp;
  let server: http.Server;
  let base = '';
  before(async () => {
    t = await startTestApp({ env: { FETCH_ALLOW_ADDRESSES: '127.0.0.1' } });
    const png = fs.readFileSync(await makePng(t.dir, 64, 64));
    const wav = fs.readFileSync(await makeWav(t.dir, 12));
    // An MP4 cut short before its index: recognised as mp4, its length unknown.
    const cut = fs.readFileSync(await makeMp4(t.dir, 3, 160, 120, true)).subarray(0, 1000);
    const long = fs.readFileSync(await makeMp4(t.dir, 9, 160, 120, true));
    server = http.createServer((req, res) => {
      if (req.url === '/photo.png') return void res.end(png);
      if (req.url === '/voice.wav') return void res.end(wav);
      if (req.url === '/cut.mp4') return void res.end(cut);
      if (req.url === '/long.mp4') return void res.end(long);
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.close();
    await t.close();
  });

  /** Every URL field of every library creation body, with a body whose other links are good files. */
  const cases = (bad: string) => [
    {
      path: 'video-elements/elements',
      field: 'image_urls',
      body: { name: 'A', tag: 'object', image_urls: [bad] },
    },
    {
      path: 'video-elements/elements',
      field: 'video_url',
      body: { name: 'B', tag: 'character', video_url: bad },
    },
    {
      path: 'voice/voices',
      field: 'sample_urls',
      body: { name: 'Me', sample_urls: [`${base}/voice.wav`, bad] },
    },
    { path: 'image/styles', field: 'image_urls', body: { name: 'Ink', image_urls: [bad] } },
    { path: 'music-styles/styles', field: 'track_urls', body: { name: 'Mine', track_urls: [bad] } },
    {
      path: 'video-omni/characters',
      field: 'portrait_url',
      body: { name: 'Ann', portrait_url: bad, full_body_url: `${base}/photo.png` },
    },
    {
      path: 'video-omni/characters',
      field: 'full_body_url',
      body: { name: 'Bob', portrait_url: `${base}/photo.png`, full_body_url: [bad] },
    },
    {
      path: 'video-omni/voices',
      field: 'sample_urls',
      body: { name: 'N', base_voice_id: 'preset-warm-narrator', sample_urls: [bad] },
    },
    {
      path: 'music/voices',
      field: 'source_url',
      body: { source_url: bad, start_seconds: 0, end_seconds: 10 },
    },
  ];

  test('[10.16] private, loopback-like and metadata URLs are refused in every URL field of every library', async () => {
    const acct = await t.account();
    for (const bad of BLOCKED) {
      for (const c of cases(bad)) {
        const res = await t.call(acct.key, 'POST', `/v1/models/${c.path}`, c.body);
        const what = `${c.path} ${c.field} ${bad}: ${res.body}`;
        assert.deepEqual(
          { status: res.statusCode, code: errorOf(res).code },
          { status: 422, code: 'invalid_request' },
          what,
        );
        assert.match(errorOf(res).message, new RegExp(`body\\.${c.field}`), what);
      }
    }
    const lists = await Promise.all(
      [
        'video-elements/elements',
        'voice/voices',
        'image/styles',
        'music-styles/styles',
        'video-omni/characters',
      ].map((p) => t.call(acct.key, 'GET', `/v1/models/${p}`)),
    );
    for (const list of lists) {
      const records = Object.values(list.json()).find(Array.isArray) as unknown[];
      assert.deepEqual(records, [], list.body);
    }
  });

  test('[10.16] the accepted-files rules apply to every URL field: a sound where a picture belongs is 422 file_type', async () => {
    const acct = await t.account();
    for (const c of cases(`${base}/voice.wav`).filter((c) => /image|portrait|full_body/.test(c.field))) {
      const res = await t.call(acct.key, 'POST', `/v1/models/${c.path}`, c.body);
      const what = `${c.path} ${c.field}: ${res.body}`;
      assert.deepEqual(
        { status: res.statusCode, code: errorOf(res).code },
        { status: 422, code: 'file_type' },
        what,
      );
    }
    const good = await t.call(acct.key, 'POST', '/v1/models/image/styles', {
      name: 'Good',
      image_urls: [`${base}/photo.png`],
    });
    assert.equal(good.statusCode, 201, good.body);
  });

  test('a video whose length cannot be read is refused where the field has a longest length', async () => {
    const acct = await t.account();
    const res = await t.call(acct.key, 'POST', '/v1/models/video-elements/elements', {
      name: 'Cut',
      tag: 'character',
      video_url: `${base}/cut.mp4`,
    });
    assert.deepEqual(
      { status: res.statusCode, code: errorOf(res).code },
      { status: 422, code: 'invalid_request' },
      res.body,
    );
    assert.match(errorOf(res).message, /body\.video_url: the length of the file cannot be read/);
    const list = await t.call(acct.key, 'GET', '/v1/models/video-elements/elements');
    assert.deepEqual(list.json().elements, []);
  });

  test("a video over the field's longest length is refused naming the file and both lengths", async () => {
    const acct = await t.account();
    const res = await t.call(acct.key, 'POST', '/v1/models/video-elements/elements', {
      name: 'Long',
      tag: 'character',
      video_url: `${base}/long.mp4`,
    });
    assert.equal(res.statusCode, 422, res.body);
    assert.match(
      errorOf(res).message,
      /^body\.video_url: the file is 9\.\d\d s long; at most 8 s is allowed$/,
    );
  });
});
