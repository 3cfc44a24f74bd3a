import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { MINUTE_MS } from '../src/config.ts';
import { makeMp3, makePng } from '../src/media/fixtures.ts';
import {
  balances,
  expectError,
  startTestApp,
  type TestAccount,
  type TestApp,
  waitForFinal,
} from './helpers.ts';

/** Library items named in settings are checked before any hold (reference, CONTRACT §7). */
describe('library items in tasks', () => {
  let t: TestApp;
  let owner: TestAccount;
  let stranger: TestAccount;
  let png = '';
  let mp3 = '';

  async function link(key: string, file: string): Promise<string> {
    const res = await t.call(
      key,
      'POST',
      `/v1/files?filename=${file.split('/').pop()}`,
      fs.readFileSync(file),
      {
        'content-type': 'application/octet-stream',
      },
    );
    assert.equal(res.statusCode, 201, res.body);
    return res.json().url;
  }

  async function create(
    key: string,
    path: string,
    body: Record<string, unknown>,
  ): Promise<Record<string, unknown> & { id: string }> {
    const res = await t.call(key, 'POST', path, body);
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  }

  /** Both /v1/price and /v1/tasks refuse with the code, and nothing is held. */
  async function refused(
    key: string,
    accountId: string,
    model: string,
    settings: Record<string, unknown>,
    code: string,
  ): Promise<void> {
    expectError(await t.call(key, 'POST', '/v1/price', { model, settings }), 422, code);
    expectError(await t.call(key, 'POST', '/v1/tasks', { model, settings }), 422, code);
    assert.equal((await balances(t, accountId)).held_minor, 0);
  }

  before(async () => {
    t = await startTestApp();
    owner = await t.account({ balanceMinor: 10_000_000 });
    stranger = await t.account({ balanceMinor: 10_000_000 });
    png = await link(owner.key, await makePng(t.dir, 64, 64));
    mp3 = await link(owner.key, await makeMp3(t.dir, 3));
  });
  after(() => t.close());

  test('image styles: unknown or foreign → style_not_found; a vector style gives SVG files, a raster one PNG', async () => {
    const vector = await create(owner.key, '/v1/models/image/styles', {
      name: 'Lines',
      image_urls: [png],
      type: 'vector',
    });
    const raster = await create(owner.key, '/v1/models/image/styles', { name: 'Paint', image_urls: [png] });
    await refused(owner.key, owner.id, 'image', { prompt: 'a fox', style_id: 'nope' }, 'style_not_found');
    await refused(
      stranger.key,
      stranger.id,
      'image',
      { prompt: 'a fox', style_id: vector.id },
      'style_not_found',
    );

    const svgTask = await t.call(owner.key, 'POST', '/v1/tasks', {
      model: 'image',
      settings: { prompt: 'a fox', style_id: vector.id, n: 2 },
    });
    assert.equal(svgTask.statusCode, 202, svgTask.body);
    const svgDone = await waitForFinal(t, owner.key, svgTask.json().id);
    const svgFiles = (svgDone.result as { artifacts: Array<{ filename: string; download_path: string }> })
      .artifacts;
    assert.deepEqual(
      svgFiles.map((a) => a.filename),
      ['image-1.svg', 'image-2.svg'],
    );
    const svg = await t.call(owner.key, 'GET', svgFiles[0]!.download_path);
    assert.equal(svg.headers['content-type'], 'image/svg+xml');
    assert.match(svg.body, /<svg[^>]+xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);

    const pngTask = await t.call(owner.key, 'POST', '/v1/tasks', {
      model: 'image',
      settings: { prompt: 'a fox', style_id: raster.id },
    });
    const pngDone = await waitForFinal(t, owner.key, pngTask.json().id);
    assert.equal(
      (pngDone.result as { artifacts: Array<{ filename: string }> }).artifacts[0]!.filename,
      'image-1.png',
    );
  });

  test('elements: Element_<id> labels must name own, live elements; deleting one leaves finished videos alone', async () => {
    const element = await create(owner.key, '/v1/models/video-elements/elements', {
      name: 'Red Car',
      description: 'a small red car',
      tag: 'vehicle',
      image_urls: [png],
    });
    assert.equal(element.label, `Element_${element.id}`);
    const settings = { prompt: `${element.label} drives along the coast.`, length: 3 };
    await refused(stranger.key, stranger.id, 'video-elements', settings, 'element_not_found');
    await refused(
      owner.key,
      owner.id,
      'video-elements',
      { prompt: 'Element_00000000-0000-7000-8000-000000000000 waves' },
      'element_not_found',
    );
    const shots = {
      multi_shot: true,
      length: 4,
      shots: [
        { prompt: `${element.label} parks.`, duration: 2 },
        { prompt: 'Element_missing-one jumps.', duration: 2 },
      ],
    };
    await refused(owner.key, owner.id, 'video-elements', shots, 'element_not_found');

    const made = await t.call(owner.key, 'POST', '/v1/tasks', { model: 'video-elements', settings });
    assert.equal(made.statusCode, 202, made.body);
    const done = await waitForFinal(t, owner.key, made.json().id, 60_000);
    assert.equal(done.status, 'succeeded');
    assert.equal(
      (await t.call(owner.key, 'DELETE', `/v1/models/video-elements/elements/${element.id}`)).statusCode,
      204,
    );
    await refused(owner.key, owner.id, 'video-elements', settings, 'element_not_found');
    const video = (done.result as { artifacts: Array<{ download_path: string }> }).artifacts[0]!;
    assert.equal(
      (await t.call(owner.key, 'GET', video.download_path)).statusCode,
      200,
      'the finished video stays',
    );
  });

  test('music: persona_not_found and voice_not_found before any hold', async () => {
    const song = { mode: 'generate', songDescription: 'a song about rain' };
    await refused(owner.key, owner.id, 'music', { ...song, persona: 'nope' }, 'persona_not_found');
    await refused(owner.key, owner.id, 'music', { ...song, voice: 'nope' }, 'voice_not_found');
    // A caller's 5,000-character id is echoed clipped, as a model key is, in both languages.
    for (const lang of ['en', 'ru']) {
      const long = await t.call(owner.key, 'POST', `/v1/price?lang=${lang}`, {
        model: 'music',
        settings: { ...song, persona: `p${'x'.repeat(4999)}` },
      });
      assert.equal(long.statusCode, 422, long.body);
      const message: string = long.json().error.message;
      assert.equal(long.json().error.code, 'persona_not_found');
      assert.ok(message.includes(`p${'x'.repeat(99)}…`), message);
      assert.ok(message.length < 300, `${message.length} characters`);
    }
    const source = await t.call(owner.key, 'POST', '/v1/tasks', {
      model: 'music',
      settings: {
        mode: 'generate',
        customMode: true,
        title: 'Rain',
        style: 'lo-fi',
        prompt: 'drops on glass',
        duration: 10,
      },
    });
    assert.equal((await waitForFinal(t, owner.key, source.json().id, 60_000)).status, 'succeeded');
    const persona = await create(owner.key, '/v1/models/music/personas', {
      source_task_id: source.json().id,
      index: 0,
      name: 'Rainy',
      description: 'soft and low',
    });
    assert.equal(persona.song_title, 'Rain');
    assert.equal(
      (
        await t.call(owner.key, 'POST', '/v1/price', {
          model: 'music',
          settings: { ...song, persona: persona.id },
        })
      ).statusCode,
      200,
    );
    await refused(stranger.key, stranger.id, 'music', { ...song, persona: persona.id }, 'persona_not_found');
  });

  test('voice: cloned voices must exist and be the caller’s', async () => {
    const voice = await create(owner.key, '/v1/models/voice/voices', { name: 'Me', sample_urls: [mp3] });
    const settings = { mode: 'text_to_dialogue', text: 'Hello there.', voice: voice.id };
    assert.equal(
      (await t.call(owner.key, 'POST', '/v1/price', { model: 'voice', settings })).statusCode,
      200,
    );
    await refused(stranger.key, stranger.id, 'voice', settings, 'voice_not_found');
    await refused(
      owner.key,
      owner.id,
      'voice',
      { ...settings, voice_2: 'nope', text: '[voice_2] hi' },
      'voice_not_found',
    );
  });

  test('video-omni: character_not_found; preset and own voices in audio_ids', async () => {
    const character = await create(owner.key, '/v1/models/video-omni/characters', {
      name: 'Ann',
      portrait_url: png,
      full_body_url: png,
    });
    const own = await create(owner.key, '/v1/models/video-omni/voices', {
      name: 'Narrator',
      base_voice_id: 'preset-warm-narrator',
      sample_urls: [mp3],
    });
    const ok = {
      prompt: 'Ann says hello',
      character_ids: [character.id],
      audio_ids: ['preset-bright-host', own.id],
    };
    assert.equal(
      (await t.call(owner.key, 'POST', '/v1/price', { model: 'video-omni', settings: ok })).statusCode,
      200,
    );
    await refused(
      owner.key,
      owner.id,
      'video-omni',
      { ...ok, character_ids: ['nope'] },
      'character_not_found',
    );
    await refused(stranger.key, stranger.id, 'video-omni', ok, 'character_not_found');
    await refused(owner.key, owner.id, 'video-omni', { ...ok, audio_ids: ['nope'] }, 'voice_not_found');
  });
});

describe('files and models behind library creations and helpers', () => {
  test('a singing voice source must be an audio file (422 file_type); a switched-off model stops its helpers (503)', async () => {
    const t = await startTestApp({ worker: false });
    try {
      const acct = await t.account();
      const up = await t.call(
        acct.key,
        'POST',
        '/v1/files?filename=p.png',
        fs.readFileSync(await makePng(t.dir, 8, 8)),
        {
          'content-type': 'image/png',
        },
      );
      const voice = await t.call(acct.key, 'POST', '/v1/models/music/voices', {
        source_url: up.json().url,
        start_seconds: 0,
        end_seconds: 20,
      });
      expectError(voice, 422, 'file_type');
      assert.match(voice.json().error.message, /body\.source_url/);
      assert.equal(
        (await t.call(acct.key, 'POST', '/v1/models/music/lyrics', { prompt: 'rain' })).statusCode,
        200,
      );
      await t.admin('PATCH', '/admin/v1/models/music', { available: false });
      expectError(
        await t.call(acct.key, 'POST', '/v1/models/music/lyrics', { prompt: 'rain' }),
        503,
        'model_unavailable',
      );
    } finally {
      await t.close();
    }
  });
});

describe('styles that are still training', () => {
  test('music-styles: style_not_ready while training, accepted once ready', async () => {
    const { ManualClock } = await import('../src/lib/clock.ts');
    const clock = new ManualClock(new Date());
    const t = await startTestApp({ clock, worker: false });
    try {
      const acct = await t.account({ balanceMinor: 100_000 });
      const track = await t.call(
        acct.key,
        'POST',
        '/v1/files?filename=t.mp3',
        fs.readFileSync(await makeMp3(t.dir, 2)),
        {
          'content-type': 'audio/mpeg',
        },
      );
      const style = await t.call(acct.key, 'POST', '/v1/models/music-styles/styles', {
        name: 'Mine',
        track_urls: [track.json().url],
      });
      assert.equal(style.json().status, 'training');
      const settings = { prompt: 'an upbeat tune', style: style.json().id };
      expectError(
        await t.call(acct.key, 'POST', '/v1/tasks', { model: 'music-styles', settings }),
        422,
        'style_not_ready',
      );
      assert.equal((await balances(t, acct.id)).held_minor, 0);
      clock.advance(11 * MINUTE_MS);
      assert.equal(
        (await t.call(acct.key, 'POST', '/v1/tasks', { model: 'music-styles', settings })).statusCode,
        202,
      );
      expectError(
        await t.call(acct.key, 'POST', '/v1/tasks', {
          model: 'music-styles',
          settings: { ...settings, style: 'nope' },
        }),
        422,
        'style_not_found',
      );
    } finally {
      await t.close();
    }
  });
});
