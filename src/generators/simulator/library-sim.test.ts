import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LIBRARIES, RECORDING_SECONDS, VOICE_STEPS } from '../../libraries/index.ts';
import { GeneratorUnavailable } from '../generator.ts';
import { LibraryRejected } from '../library.ts';
import { boostStyle, enhancePrompt, LibrarySimulator, writeLyrics } from './library-sim.ts';

const sim = new LibrarySimulator({ simSpeed: 1000 });
const signal = (): AbortSignal => AbortSignal.timeout(5_000);
/** A creation request as the service makes it from the library's declaration. */
const request = (model: string, library: string, fields: Record<string, unknown>) => {
  const learns = LIBRARIES.find((l) => l.model === model && l.segment === library)?.learns;
  return {
    model,
    library,
    recordId: 'r1',
    fields,
    ...(learns ? { learningMs: learns.typicalMs } : {}),
  };
};

describe('LibrarySimulator (CONTRACT §10)', () => {
  test('saves records; markers make it unavailable or refuse', async () => {
    const created = await sim.createRecord(
      request('video-elements', 'elements', { name: 'a', image_urls: ['https://x.test/1.png'] }),
      signal(),
    );
    assert.equal(created.data['cover_url'], 'https://x.test/1.png');
    assert.equal(created.settles, undefined);
    await assert.rejects(
      sim.createRecord(request('image', 'styles', { name: '[sim:fail]' }), signal()),
      LibraryRejected,
    );
    await assert.rejects(
      sim.createRecord(request('image', 'styles', { name: '[sim:unavailable]' }), signal()),
      GeneratorUnavailable,
    );
  });

  test('music styles train for 7 minutes / SIM_SPEED; [sim:fail] settles as a failure', async () => {
    const ok = await sim.createRecord(request('music-styles', 'styles', { name: 'a' }), signal());
    assert.deepEqual(ok.settles, { afterMs: (7 * 60_000) / 1000, outcome: { ok: true } });
    const bad = await sim.createRecord(request('music-styles', 'styles', { name: 'a [sim:fail]' }), signal());
    assert.equal(bad.settles?.outcome.ok, false);
  });

  test('learning and checking take the time the request names, not a time per model', async () => {
    const voice = await sim.createRecord(request('music', 'voices', { language: 'en' }), signal());
    assert.deepEqual(voice.settles, { afterMs: 30_000 / 1000, outcome: { ok: true } });
    const named = await sim.createRecord({ ...request('image', 'styles', {}), learningMs: 9_000 }, signal());
    assert.deepEqual(named.settles, { afterMs: 9, outcome: { ok: true } });
    const check = await sim.checkRecording({
      recordId: 'v',
      phrase: 'p',
      name: 'Me',
      recordingUrl: 'https://x.test/r.mp3',
      minSeconds: 5,
      typicalMs: 4_000,
      recordingSeconds: 4,
    });
    assert.equal(check.afterMs, 4);
    assert.deepEqual(check.outcome, { ok: false, reason: 'The recording is shorter than 5 seconds.' });
  });

  test('phrases vary by voice and attempt and avoid earlier ones', async () => {
    const first = await sim.issuePhrase({ recordId: 'v1', attempt: 1, language: 'en', avoid: [] });
    const again = await sim.issuePhrase({ recordId: 'v1', attempt: 1, language: 'en', avoid: [first] });
    assert.notEqual(again, first);
    const ru = await sim.issuePhrase({ recordId: 'v1', attempt: 1, language: 'ru', avoid: [] });
    assert.match(ru, /[а-я]/);
  });

  test('Russian phrases are grammatical: every verb takes the accusative objects', async () => {
    // "танцует с" wants the instrumental case ("с золотым рассветом"), the objects are accusative.
    for (let i = 0; i < 200; i++) {
      const ru = await sim.issuePhrase({ recordId: `v${i}`, attempt: 1, language: 'ru', avoid: [] });
      assert.doesNotMatch(ru, / с /, ru);
    }
  });

  test('the recording check wants 3 seconds and no [sim:fail] in the name', async () => {
    const base = {
      recordId: 'v',
      phrase: 'p',
      recordingUrl: 'https://x.test/r.mp3',
      minSeconds: RECORDING_SECONDS.min,
      typicalMs: VOICE_STEPS.verify.typicalMs,
    };
    assert.equal((await sim.checkRecording({ ...base, name: 'Me', recordingSeconds: 3 })).outcome.ok, true);
    assert.equal(
      (await sim.checkRecording({ ...base, name: 'Me', recordingSeconds: 2.5 })).outcome.ok,
      false,
    );
    assert.equal((await sim.checkRecording({ ...base, name: 'Me [sim:fail]' })).outcome.ok, false);
    // A recording whose length could not be read is not known to last 3 seconds.
    assert.deepEqual((await sim.checkRecording({ ...base, name: 'Me' })).outcome, {
      ok: false,
      reason: 'The length of the recording cannot be read.',
    });
  });

  test('lyrics: 2 or 3 variants with verses and chorus, built from the prompt words', () => {
    const { variants } = writeLyrics('a song about harbour lights and a lonely sailor');
    assert.ok(variants.length >= 2 && variants.length <= 3);
    for (const v of variants) {
      assert.match(v.text, /\[Verse 1\][\s\S]*\[Chorus\]/);
      assert.match(v.text, /harbour|lights|lonely|sailor/);
      assert.doesNotMatch(v.text, /\{[A-Za-z]\}/);
      assert.ok(v.title.length > 0);
    }
    assert.notEqual(variants[0]?.text, variants[1]?.text);
    assert.notDeepEqual(writeLyrics('desert roads and thunder').variants, variants);
  });

  test('lyrics of a song idea written in Russian are Russian, with the tags the provider reads', () => {
    const { variants } = writeLyrics('песня про портовые огни и одинокого моряка');
    for (const v of variants) {
      assert.match(v.text, /\[Verse 1\][\s\S]*\[Chorus\]/);
      assert.match(v.text, /портовые|огни|одинокого|моряка/);
      const sung = v.text.replace(/\[(Verse \d|Chorus|Bridge)\]/g, '');
      assert.doesNotMatch(sung, /[A-Za-z]/, 'no English line');
      assert.doesNotMatch(`${v.title}${v.text}`, /\{[A-Za-z]\}/);
      assert.match(v.title, /\p{Script=Cyrillic}/u);
    }
    // A Russian idea without content words falls back to Russian ones, not to "night".
    for (const v of writeLyrics('про это').variants)
      assert.doesNotMatch(v.text.replace(/\[[^\]]+\]/g, ''), /[A-Za-z]/);
    // An English idea with one Russian word stays English.
    assert.match(writeLyrics('a song about harbour lights, море').variants[0]!.text, /[A-Za-z]{4}/);
  });

  test('helper answers fit the fields they feed and never split a character', () => {
    const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
    const chars = (text: string) => Array.from(text).length;
    // One 3000-letter word: the title and lyrics still fit a song's title (80) and prompt (5000).
    for (const v of writeLyrics(`harbour ${'a'.repeat(3000)}`).variants) {
      assert.ok(chars(v.title) <= 80 && chars(v.text) <= 5000, `${chars(v.title)} ${chars(v.text)}`);
    }
    const style = boostStyle(`a${'😀'.repeat(999)}`).style;
    assert.equal(chars(style), 1000);
    assert.ok(!lone.test(style));
    const prompt = enhancePrompt(`a${'😀'.repeat(9999)}`).prompt;
    assert.equal(chars(prompt), 10_000);
    assert.ok(!lone.test(prompt));
  });

  test('style boost and enhance expand the input', async () => {
    const jazz = boostStyle('slow sad jazz').style;
    assert.match(jazz, /^slow sad jazz: /);
    assert.match(jazz, /upright bass/);
    assert.match(jazz, /\d+ BPM/);
    assert.match(boostStyle('techno').style, /synth/);
    const richer = enhancePrompt('a red fox in the snow at night').prompt;
    assert.ok(richer.startsWith('a red fox in the snow at night, '));
    assert.match(richer, /snow/);
    assert.match(richer, /moonlight/);
    assert.match(richer, /red/);
    // A style in Russian names its genre, mood and vocals in Russian words.
    assert.match(boostStyle('грустный джаз').style, /melancholic.* jazz, .*upright bass/);
    const rock = boostStyle('инструментальный рок').style;
    assert.match(rock, /guitars/);
    assert.match(rock, /no vocals/);
    assert.match(boostStyle('широкий эмбиент').style, / lo-fi, /, 'рок inside a word is no rock');
    // "man" inside a word (romantic, german) asks for no male voice.
    for (const style of ['romantic ballad', 'german techno', 'romantic female pop']) {
      assert.doesNotMatch(boostStyle(style).style, /raspy male vocals/, style);
    }
    assert.match(boostStyle('rock, male vocals').style, /raspy male vocals/);
    assert.match(boostStyle('мужской вокал, рок').style, /raspy male vocals/);
    const out = await sim.runHelper('style-boost', { style: 'rock' }, signal());
    assert.match(out.style, /guitars/);
    await assert.rejects(
      sim.runHelper('enhance', { prompt: '[sim:unavailable]' }, signal()),
      GeneratorUnavailable,
    );
  });
});
