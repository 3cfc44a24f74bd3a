import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { runFfmpeg } from '../src/generators/simulator/media/mp4.ts';
import { makeMp3, makeMp4, makePng, makeWav } from '../src/media/fixtures.ts';
import { errorOf, expectError, startTestApp, type TestApp } from './helpers.ts';

/** Uploads a file made in the test and returns its direct link. */
async function link(t: TestApp, key: string, file: string): Promise<string> {
  const res = await t.call(
    key,
    'POST',
    `/v1/files?filename=${encodeURIComponent(file.split('/').pop()!)}`,
    fs.readFileSync(file),
    {
      'content-type': 'application/octet-stream',
    },
  );
  assert.equal(res.statusCode, 201, res.body);
  return res.json().url;
}

/** A long, small MP3 (mono 8 kHz, 8 kbit/s) so eight-minute rules stay cheap to test. */
async function longMp3(dir: string, seconds: number): Promise<string> {
  const out = `${dir}/long-${seconds}.mp3`;
  await runFfmpeg([
    '-y',
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=220:sample_rate=8000:duration=${seconds}`,
    '-ac',
    '1',
    '-c:a',
    'libmp3lame',
    '-b:a',
    '8k',
    out,
  ]);
  return out;
}

describe('per-field rules that need the file (reference, CONTRACT §6)', () => {
  let t: TestApp;
  let key = '';
  before(async () => {
    t = await startTestApp({ worker: false });
    key = (await t.account({ balanceMinor: 10_000_000 })).key;
  });
  after(() => t.close());

  const price = (model: string, settings: Record<string, unknown>) =>
    t.call(key, 'POST', '/v1/price', { model, settings });

  test('omni: each video 1–15 s and at most 15 s together; audio likewise; input seconds are charged', async () => {
    const v8 = await link(t, key, await makeMp4(t.dir, 8, 160, 120));
    const v9 = await link(t, key, await makeMp4(t.dir, 9, 160, 120));
    const omni = (videos: string[]) => ({
      mode: 'omni',
      prompt: videos.map((_, i) => `@Video${i + 1}`).join(' and '),
      ref_video_urls: videos,
      quality: '480p',
      duration: '2s',
    });
    const one = await price('video', omni([v8]));
    assert.equal(one.statusCode, 200, one.body);
    assert.equal(one.json().amount_minor, 800 * (2 + 8));
    const together = await price('video', omni([v8, v9]));
    expectError(together, 422, 'invalid_settings');
    assert.match(together.json().error.message, /ref_video_urls/);
    const wav = await link(t, key, await makeWav(t.dir, 0.5));
    const short = await price('video', { mode: 'omni', prompt: 'with @Audio1', ref_audio_urls: [wav] });
    expectError(short, 422, 'invalid_settings');
  });

  test('omni: files of exactly 15 s together are accepted, however their lengths add up in floating point', async () => {
    // 1.3 + 8.3 + 5.4 is 15.000000000000002 in binary floating point.
    const wavs = [
      await link(t, key, await makeWav(t.dir, 1.3)),
      await link(t, key, await makeWav(t.dir, 8.3)),
      await link(t, key, await makeWav(t.dir, 5.4)),
    ];
    const res = await price('video', {
      mode: 'omni',
      prompt: '@Audio1, @Audio2 and @Audio3',
      ref_audio_urls: wavs,
      quality: '480p',
      duration: '2s',
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().amount_minor, 800 * (2 + 2 + 9 + 6));
  });

  test('frames: pictures up to 10 MB in jpeg/png/webp; a sound file in image_urls is 422 file_type', async () => {
    const png = await link(t, key, await makePng(t.dir, 64, 64));
    assert.equal((await price('video', { mode: 'frames', prompt: 'go', image_urls: [png] })).statusCode, 200);
    const mp3 = await link(t, key, await makeMp3(t.dir, 1));
    expectError(await price('video', { mode: 'frames', prompt: 'go', image_urls: [mp3] }), 422, 'file_type');
  });

  test('music extend: continueAt before the end of the file; longer inputs cost more', async () => {
    const track60 = await link(t, key, await makeMp3(t.dir, 60));
    const track150 = await link(t, key, await longMp3(t.dir, 150));
    const extend = (audio: string, continueAt: number) => ({
      mode: 'extend',
      audio: [audio],
      continueAt,
      instrumental: true,
    });
    const base = await price('music', extend(track60, 30));
    assert.equal(base.statusCode, 200, base.body);
    assert.equal(base.json().amount_minor, 1200);
    const longer = await price('music', extend(track150, 30));
    assert.ok(longer.json().amount_minor > 1200, longer.body);
    const past = await price('music', extend(track60, 70));
    expectError(past, 422, 'invalid_settings');
    assert.match(past.json().error.message, /continueAt/);
  });

  test('music cover and extend: tracks of at most 8 minutes', async () => {
    const long = await link(t, key, await longMp3(t.dir, 490));
    const cover = await price('music', {
      mode: 'cover_upload',
      audio: [long],
      songDescription: 'a calm cover',
    });
    expectError(cover, 422, 'invalid_settings');
    assert.match(cover.json().error.message, /audio/);
    const ok = await link(t, key, await longMp3(t.dir, 470));
    assert.equal(
      (await price('music', { mode: 'cover_upload', audio: [ok], songDescription: 'a calm cover' }))
        .statusCode,
      200,
    );
  });

  test('music replace_upload: the section is at least 10 s and at most half the track', async () => {
    const track = await link(t, key, await makeMp3(t.dir, 40));
    const replace = (start: number, end: number) => ({
      mode: 'replace_upload',
      audio: [track],
      infillStartS: start,
      infillEndS: end,
      prompt: 'new words here',
      fullLyrics: 'old words, new words here, old words',
      tags: 'pop',
      title: 'Song',
    });
    assert.equal((await price('music', replace(5, 20))).statusCode, 200);
    expectError(await price('music', replace(5, 30)), 422, 'invalid_settings');
    expectError(await price('music', replace(5, 10)), 422, 'invalid_settings');
  });

  test('Russian refusals write the seconds with a decimal comma', async () => {
    const short = await link(t, key, await makeWav(t.dir, 0.5));
    const track = await link(t, key, await makeWav(t.dir, 25));
    const ru = (model: string, settings: Record<string, unknown>) =>
      t.call(key, 'POST', '/v1/price?lang=ru', { model, settings });
    const tooShort = await ru('video', { mode: 'omni', prompt: 'x @Audio1', ref_audio_urls: [short] });
    expectError(tooShort, 422, 'invalid_settings');
    assert.equal(
      errorOf(tooShort).message,
      'settings.ref_audio_urls.0: длительность файла 0,50 с; нужно не меньше 1 с',
    );
    const overHalf = await ru('music', {
      mode: 'replace_upload',
      audio: [track],
      infillStartS: 0,
      infillEndS: 20.5,
      prompt: 'new words here',
      fullLyrics: 'old words, new words here',
      tags: 'pop',
      title: 'Song',
    });
    expectError(overHalf, 422, 'invalid_settings');
    assert.equal(
      errorOf(overHalf).message,
      'settings.infillEndS: заменяемый участок (infillEndS - infillStartS = 20,5 с) должен быть не длиннее половины трека (12,5 с)',
    );
  });

  test('an unreadable link is echoed clipped to 100 characters, in both languages', async () => {
    const url = `https://a.invalid/${'x'.repeat(5_000)}.png`;
    for (const lang of ['en', 'ru']) {
      const res = await t.call(key, 'POST', `/v1/price?lang=${lang}`, {
        model: 'model-3d',
        settings: { task_type: 'image_to_model', image_url: [url] },
      });
      expectError(res, 422, 'invalid_settings');
      const message: string = res.json().error.message;
      assert.ok(message.includes(`${url.slice(0, 100)}…`), message.slice(0, 300));
      assert.ok(message.length < 300, `${message.length} characters`);
    }
  });

  test('music: a track whose length cannot be read is refused, not priced or bounded as a short one', async () => {
    // A WAV whose header says 0 samples per second: recognised as audio, its length unreadable.
    const wav = fs.readFileSync(await makeWav(t.dir, 200));
    wav.writeUInt32LE(0, 24);
    wav.writeUInt32LE(0, 28);
    const path = `${t.dir}/no-rate.wav`;
    fs.writeFileSync(path, wav);
    const track = await link(t, key, path);
    const modes = [
      { mode: 'add_vocals', audio: [track], title: 'T', style: 'pop', prompt: 'la', negativeTags: 'metal' },
      { mode: 'add_instrumental', audio: [track], title: 'T', tags: 'pop', negativeTags: 'metal' },
      { mode: 'mashup', audio: [track], audio2: [track], songDescription: 'both as one' },
      {
        mode: 'replace_upload',
        audio: [track],
        infillStartS: 0,
        infillEndS: 5000,
        prompt: 'new words',
        fullLyrics: 'old words, new words',
        tags: 'pop',
        title: 'Song',
      },
    ];
    for (const settings of modes) {
      const res = await price('music', settings);
      expectError(res, 422, 'invalid_settings');
      assert.match(res.json().error.message, /settings\.audio\.0: the length of the file cannot be read/);
    }
  });
});
