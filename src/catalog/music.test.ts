import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AudioOutput, InputFile, ModeInputs, ModeSpec } from './model-spec.ts';
import { music } from './music.ts';
import { MUSIC_MODELS } from './music-common.ts';
import rates from './prices/music.json' with { type: 'json' };
import { bad, type Case, inputFile, ok, type Settings, settingsCases, unknown } from './settings-cases.ts';

const URL = 'https://example.com/own-track.mp3';
const URL2 = 'https://example.com/own-track-2.mp3';
const NO_INPUTS: ModeInputs = { files: [] };

// One accepted settings object per mode (simple and advanced where the mode has both).
const G = { mode: 'generate', songDescription: 'a calm song about the northern sea' };
const GA = { mode: 'generate', customMode: true, title: 'Sea', style: 'folk', prompt: 'Waves are calling' };
const S = { mode: 'sounds', soundDescription: 'rain on a tin roof' };
const AV = {
  mode: 'add_vocals',
  audio: [URL],
  title: 'Night',
  style: 'soul',
  prompt: 'Hold on',
  negativeTags: 'metal',
};
const AI = {
  mode: 'add_instrumental',
  audio: [URL],
  title: 'Night',
  tags: 'jazz, piano',
  negativeTags: 'rock',
};
const C = { mode: 'cover_upload', audio: [URL], songDescription: 'a jazz cover' };
const CA = {
  mode: 'cover_upload',
  audio: [URL],
  customMode: true,
  title: 'Cover',
  style: 'jazz',
  prompt: 'La',
};
const E = { mode: 'extend', audio: [URL], continueAt: 30, prompt: 'And then the chorus' };
const R = {
  mode: 'replace_upload',
  audio: [URL],
  infillStartS: 10,
  infillEndS: 25,
  prompt: 'New line',
  fullLyrics: 'Old line\nNew line',
  tags: 'pop',
  title: 'Fixed',
};
const M = { mode: 'mashup', audio: [URL], audio2: [URL2], songDescription: 'both tracks as one dance song' };
const MA = { mode: 'mashup', audio: [URL], audio2: [URL2], customMode: true, title: 'Mix', style: 'house' };
const EVERY_MODE = { G, GA, S, AV, AI, C, CA, E, R, M, MA };

const chars = (n: number): string => 'x'.repeat(n);

/**
 * Accepted and refused values of one field on one base (name says where); a refusal names `refused`,
 * the field itself unless given (`audio.0` for a broken item of a list).
 */
function field(
  base: Settings,
  label: string,
  name: string,
  good: unknown[],
  wrong: unknown[],
  refused = name,
): Case[] {
  return [
    ...good.map((v): Case => [`${label} ${name}=${String(v).slice(0, 12)}`, { ...base, [name]: v }, ok]),
    ...wrong.map(
      (v): Case => [
        `${label} ${name}=${String(v).slice(0, 12)} refused`,
        { ...base, [name]: v },
        bad(refused),
      ],
    ),
  ];
}

const WEIGHT_GOOD = [0, 1, 0.5, 0.57, 0.29, 0.07];
// Within zod's multipleOf tolerance of 0, but hundreds of decimals: not "at most two decimals".
const WEIGHT_BAD = [-0.01, 1.01, 0.123, '0.5', 1e-300, 5e-324, 5e-18];
const AUDIO_BAD = [[], [URL, URL2], URL];
const AUDIO_ITEM_BAD = [['not a url'], ['ftp://example.com/a.mp3']];

const cases: Case[] = [
  ['mode required', { songDescription: 'x' }, bad('mode')],
  ['mode unknown', { ...G, mode: 'remix' }, bad('mode')],
  ...Object.entries(EVERY_MODE).flatMap(([label, base]) =>
    field(base, label, 'model', [...MUSIC_MODELS], ['V5', 'v6']),
  ),

  // Unknown settings: a field listed only for another mode.
  ['generate refuses audio', { ...G, audio: [URL] }, unknown('audio')],
  ['generate refuses soundDescription', { ...GA, soundDescription: 'x' }, unknown('soundDescription')],
  ['generate refuses negativeTags', { ...GA, negativeTags: 'x' }, unknown('negativeTags')],
  ['sounds refuses styleWeight', { ...S, styleWeight: 0.5 }, unknown('styleWeight')],
  ['sounds refuses persona', { ...S, persona: 'p1' }, unknown('persona')],
  ['sounds refuses title', { ...S, title: 'x' }, unknown('title')],
  ['add_vocals refuses tags', { ...AV, tags: 'x' }, unknown('tags')],
  ['add_vocals refuses persona', { ...AV, persona: 'p1' }, unknown('persona')],
  ['add_instrumental refuses style', { ...AI, style: 'x' }, unknown('style')],
  ['add_instrumental refuses prompt', { ...AI, prompt: 'x' }, unknown('prompt')],
  ['cover_upload refuses vocalGender', { ...CA, vocalGender: 'm' }, unknown('vocalGender')],
  ['cover_upload refuses audio2', { ...CA, audio2: [URL2] }, unknown('audio2')],
  ['extend refuses customMode', { ...E, customMode: true }, unknown('customMode')],
  ['extend refuses songDescription', { ...E, songDescription: 'x' }, unknown('songDescription')],
  ['extend refuses duration', { ...E, duration: 30 }, unknown('duration')],
  ['replace_upload refuses styleWeight', { ...R, styleWeight: 0.5 }, unknown('styleWeight')],
  ['replace_upload refuses instrumental', { ...R, instrumental: true }, unknown('instrumental')],
  ['mashup refuses persona', { ...MA, persona: 'p1' }, unknown('persona')],
  ['mashup refuses vocalGender', { ...MA, vocalGender: 'f' }, unknown('vocalGender')],
  ['mashup refuses negativeTags', { ...MA, negativeTags: 'x' }, unknown('negativeTags')],

  // Weights: 0 to 1, at most two decimals.
  ...(['styleWeight', 'weirdnessConstraint', 'audioWeight'] as const).flatMap((w) =>
    Object.entries({ GA, AV, AI, CA, E, MA }).flatMap(([label, base]) =>
      field(base, label, w, WEIGHT_GOOD, WEIGHT_BAD),
    ),
  ),
  ...Object.entries({ G, C, M }).flatMap(([label, base]) => field(base, label, 'audioWeight', [0.3], [2])),

  // Simple and advanced mode (generate, cover_upload, mashup).
  ...Object.entries({ G, C, M }).flatMap(([label, base]): Case[] => [
    ...field(base, label, 'songDescription', ['x', chars(3000)], ['', chars(3001), 5]),
    [
      `${label} simple needs songDescription`,
      { ...base, songDescription: undefined },
      bad('songDescription'),
    ],
    ...field(base, label, 'customMode', [false], ['yes']),
    ...field(base, label, 'instrumental', [true, false], ['no']),
    ...['title', 'style', 'prompt', 'duration', 'styleWeight', 'weirdnessConstraint'].map(
      (f): Case => [
        `${label} simple refuses ${f}`,
        { ...base, [f]: f === 'duration' ? 30 : f.endsWith('t') ? 0.5 : 'x' },
        bad(f),
      ],
    ),
  ]),
  ['generate simple refuses vocalGender', { ...G, vocalGender: 'm' }, bad('vocalGender')],
  ['cover simple refuses negativeTags', { ...C, negativeTags: 'x' }, bad('negativeTags')],
  ...Object.entries({ GA, CA, MA }).flatMap(([label, base]): Case[] => [
    ...field(base, label, 'title', [chars(80)], ['', chars(81)]),
    ...field(base, label, 'style', [chars(1000)], ['', chars(1001)]),
    ...field(base, label, 'prompt', [chars(5000)], ['', chars(5001)]),
    ...field(base, label, 'duration', [10, 360], [9, 361, 20.5, '30']),
    ...field(base, label, 'customMode', [true], ['true']),
    [`${label} advanced needs title`, { ...base, title: undefined }, bad('title')],
    [`${label} advanced needs style`, { ...base, style: undefined }, bad('style')],
    [`${label} advanced refuses songDescription`, { ...base, songDescription: 'x' }, bad('songDescription')],
    [`${label} instrumental without prompt`, { ...base, prompt: undefined, instrumental: true }, ok],
  ]),
  ['generate advanced needs prompt', { ...GA, prompt: undefined }, bad('prompt')],
  ['cover advanced needs prompt', { ...CA, prompt: undefined }, bad('prompt')],
  ['mashup advanced lyrics optional', { ...MA, prompt: undefined }, ok],
  ...field(GA, 'GA', 'vocalGender', ['m', 'f'], ['', 'x']),
  ...field(CA, 'CA', 'negativeTags', ['', chars(500)], [chars(501)]),

  // Persona or voice (generate, cover_upload, extend).
  ...Object.entries({ G, GA, C, CA, E }).flatMap(([label, base]): Case[] => [
    ...field(base, label, 'persona', ['p1'], ['', 1]),
    ...field(base, label, 'voice', ['v1'], ['']),
    [`${label} persona and voice together`, { ...base, persona: 'p1', voice: 'v1' }, bad('voice')],
  ]),

  // sounds
  ['sounds needs soundDescription', { mode: 'sounds' }, bad('soundDescription')],
  ...field(S, 'S', 'soundDescription', ['x', chars(500)], ['', chars(501)]),
  ...field(S, 'S', 'soundLoop', [true, false], ['yes']),
  ...field(S, 'S', 'soundTempo', [1, 120, 300], [0, 301, 120.5]),
  ...field(S, 'S', 'soundKey', ['', 'C', 'C#', 'A#m', 'Bm'], ['H', 'c', 'Cb', 'any']),

  // URL fields: required lists of one uri.
  ...Object.entries({ AV, AI, C, CA, E, R, M }).flatMap(([label, base]): Case[] => [
    ...field(base, label, 'audio', [[URL]], AUDIO_BAD),
    ...field(base, label, 'audio', [], AUDIO_ITEM_BAD, 'audio.0'),
    [`${label} needs audio`, { ...base, audio: undefined }, bad('audio')],
  ]),
  ...field(M, 'M', 'audio2', [[URL2]], AUDIO_BAD),
  ...field(M, 'M', 'audio2', [], AUDIO_ITEM_BAD, 'audio2.0'),
  ['mashup needs audio2', { ...M, audio2: undefined }, bad('audio2')],

  // add_vocals
  ...(['title', 'style', 'prompt', 'negativeTags'] as const).map(
    (f): Case => [`add_vocals needs ${f}`, { ...AV, [f]: undefined }, bad(f)],
  ),
  ...field(AV, 'AV', 'title', ['x', chars(80)], ['', chars(81)]),
  ...field(AV, 'AV', 'style', [chars(1000)], ['', chars(1001)]),
  ...field(AV, 'AV', 'prompt', [chars(5000)], ['', chars(5001)]),
  ...field(AV, 'AV', 'negativeTags', [chars(500)], ['', chars(501)]),
  ...field(AV, 'AV', 'vocalGender', ['', 'm', 'f'], ['x']),

  // add_instrumental
  ...(['title', 'tags', 'negativeTags'] as const).map(
    (f): Case => [`add_instrumental needs ${f}`, { ...AI, [f]: undefined }, bad(f)],
  ),
  ...field(AI, 'AI', 'title', [chars(80)], ['', chars(81)]),
  ...field(AI, 'AI', 'tags', [chars(500)], ['', chars(501)]),
  ...field(AI, 'AI', 'negativeTags', [chars(500)], ['', chars(501)]),
  ...field(AI, 'AI', 'vocalGender', ['', 'm', 'f'], ['x']),

  // extend
  ['extend needs continueAt', { ...E, continueAt: undefined }, bad('continueAt')],
  ...field(E, 'E', 'continueAt', [1, 45.5, 480], [0.5, 481, '30']),
  ...field(E, 'E', 'title', ['x', chars(100)], ['', chars(101)]),
  ...field(E, 'E', 'style', [chars(1000)], [chars(1001)]),
  ...field(E, 'E', 'prompt', [chars(5000)], ['', chars(5001)]),
  ...field(E, 'E', 'negativeTags', ['', chars(500)], [chars(501)]),
  ...field(E, 'E', 'vocalGender', ['', 'm', 'f'], ['x']),
  ['extend needs prompt', { ...E, prompt: undefined }, bad('prompt')],
  ['extend instrumental without prompt', { ...E, prompt: undefined, instrumental: true }, ok],
  ['extend refuses defaultParamFlag', { ...E, defaultParamFlag: true }, bad('defaultParamFlag')],

  // replace_upload
  ...(['infillStartS', 'infillEndS', 'prompt', 'fullLyrics', 'tags', 'title'] as const).map(
    (f): Case => [`replace_upload needs ${f}`, { ...R, [f]: undefined }, bad(f)],
  ),
  ...field(R, 'R', 'infillStartS', [0, 10.25, 15], [-1, 10.255, '10', 1e-300]),
  ...field(R, 'R', 'infillEndS', [20, 25.333], [-1, '25']),
  ['replace_upload end before start', { ...R, infillStartS: 30, infillEndS: 20 }, bad('infillEndS')],
  ['replace_upload end equals start', { ...R, infillStartS: 30, infillEndS: 30 }, bad('infillEndS')],
  ['replace_upload section 9.99 s', { ...R, infillStartS: 10, infillEndS: 19.99 }, bad('infillEndS')],
  ['replace_upload section 10 s', { ...R, infillStartS: 10, infillEndS: 20 }, ok],
  // 16.08 - 6.08 is 9.999999999999998 in floating point.
  ['replace_upload section 10 s from 6.08 s', { ...R, infillStartS: 6.08, infillEndS: 16.08 }, ok],
  ...field(R, 'R', 'prompt', [chars(5000)], ['', chars(5001)]),
  ...field(R, 'R', 'fullLyrics', [chars(5000)], ['', chars(5001)]),
  ...field(R, 'R', 'tags', [chars(500)], ['', chars(501)]),
  ...field(R, 'R', 'title', [chars(80)], ['', chars(81)]),
  ...field(R, 'R', 'negativeTags', ['', chars(500)], [chars(501)]),
];

const suite = settingsCases(music);
const { accept } = suite;

suite.describe('music settings', cases);

describe('music defaults', () => {
  const table: [string, Settings, Settings, string[]][] = [
    [
      'generate simple',
      G,
      { model: 'V6', customMode: false, instrumental: false, audioWeight: 0.65 },
      ['duration', 'styleWeight', 'weirdnessConstraint', 'vocalGender'],
    ],
    [
      'generate advanced',
      GA,
      {
        model: 'V6',
        instrumental: false,
        vocalGender: 'm',
        duration: 20,
        styleWeight: 0.65,
        weirdnessConstraint: 0.65,
        audioWeight: 0.65,
      },
      [],
    ],
    ['sounds', S, { model: 'V6', soundLoop: false, soundKey: '' }, ['soundTempo']],
    [
      'add_vocals',
      AV,
      { vocalGender: '', styleWeight: 0.65, weirdnessConstraint: 0.65, audioWeight: 0.65 },
      [],
    ],
    [
      'add_instrumental',
      AI,
      { vocalGender: '', styleWeight: 0.65, weirdnessConstraint: 0.65, audioWeight: 0.65 },
      [],
    ],
    [
      'cover simple',
      C,
      { customMode: false, instrumental: false, audioWeight: 0.65 },
      ['duration', 'negativeTags'],
    ],
    ['cover advanced', CA, { duration: 20, styleWeight: 0.65, weirdnessConstraint: 0.65 }, ['negativeTags']],
    [
      'extend',
      E,
      { model: 'V6', instrumental: false, vocalGender: '', styleWeight: 0.65, audioWeight: 0.65 },
      ['defaultParamFlag'],
    ],
    ['replace_upload', R, { model: 'V6' }, ['negativeTags']],
    [
      'mashup simple',
      M,
      { customMode: false, instrumental: false, audioWeight: 0.65 },
      ['duration', 'styleWeight'],
    ],
    [
      'mashup advanced',
      MA,
      { duration: 20, styleWeight: 0.65, weirdnessConstraint: 0.65, audioWeight: 0.65 },
      [],
    ],
  ];
  for (const [name, settings, filled, unset] of table) {
    it(name, () => {
      const accepted = accept(settings).settings;
      for (const [k, v] of Object.entries(filled)) assert.deepEqual(accepted[k], v, k);
      for (const k of unset) assert.equal(k in accepted, false, `${k} stays unset`);
    });
  }
});

const file = (fieldName: string, durationSeconds?: number): InputFile =>
  inputFile(fieldName, {
    url: fieldName === 'audio2' ? URL2 : URL,
    format: 'mp3',
    sizeBytes: 1_000_000,
    durationSeconds,
  });
const inputs = (...files: InputFile[]): ModeInputs => ({ files });

function priceOf(settings: Settings, given: ModeInputs = NO_INPUTS): number {
  const { mode, settings: s } = accept(settings);
  return mode.price(s, given, rates);
}

describe('music prices', () => {
  const minimums: [string, Settings, ModeInputs, number][] = [
    ['generate', G, NO_INPUTS, 1200],
    ['generate advanced', GA, NO_INPUTS, 1200],
    ['sounds', S, NO_INPUTS, 300],
    ['add_vocals', AV, inputs(file('audio', 90)), 1200],
    ['add_instrumental', AI, inputs(file('audio', 90)), 1200],
    ['cover_upload', C, inputs(file('audio', 90)), 1200],
    ['extend with a 90 s file', E, inputs(file('audio', 90)), 1200],
    ['replace_upload with a 60 s file', R, inputs(file('audio', 60)), 500],
    ['mashup', M, inputs(file('audio', 45), file('audio2', 45)), 1200],
    ['mashup, lengths unknown', MA, inputs(file('audio'), file('audio2')), 1200],
  ];
  for (const model of MUSIC_MODELS) {
    for (const [name, settings, given, amount] of minimums) {
      it(`${model} ${name} = ${amount}`, () => assert.equal(priceOf({ ...settings, model }, given), amount));
    }
  }
  const longer: [string, Settings, ModeInputs, number][] = [
    ['extend 90.4 s (encoder padding)', E, inputs(file('audio', 90.4)), 1200],
    ['extend 91 s', E, inputs(file('audio', 91)), 1500],
    ['extend 120 s', E, inputs(file('audio', 120)), 1500],
    ['extend 121 s', E, inputs(file('audio', 121)), 1800],
    ['cover 480 s', CA, inputs(file('audio', 480)), 1200 + 13 * 300],
    ['add_vocals 200 s', AV, inputs(file('audio', 200)), 1200 + 4 * 300],
    ['replace_upload 61 s', R, inputs(file('audio', 61)), 800],
    ['replace_upload 240 s', R, inputs(file('audio', 240)), 500 + 6 * 300],
    ['mashup 60 s + 60 s', M, inputs(file('audio', 60), file('audio2', 60)), 1500],
  ];
  for (const [name, settings, given, amount] of longer) {
    it(`${name} costs more: ${amount}`, () => {
      assert.equal(priceOf(settings, given), amount);
      assert.ok(amount > priceOf(settings, NO_INPUTS) || name.includes('padding'));
    });
  }
});

describe('music inputs', () => {
  const modeOf = (name: string): ModeSpec => music.modes.find((m) => m.name === name) ?? assert.fail(name);
  it('audio rules: formats, 20 MB; cover and extend tracks at most 8 minutes', () => {
    for (const name of [
      'add_vocals',
      'add_instrumental',
      'cover_upload',
      'extend',
      'replace_upload',
      'mashup',
    ]) {
      const rule = modeOf(name).inputRules?.['audio'];
      assert.deepEqual(rule?.formats, ['mp3', 'wav', 'ogg', 'm4a', 'flac', 'aac'], name);
      assert.equal(rule?.maxBytes, 20 * 1024 * 1024, name);
      assert.equal(rule?.maxSeconds, name === 'cover_upload' || name === 'extend' ? 480 : undefined, name);
    }
    assert.deepEqual(modeOf('mashup').inputRules?.['audio2'], modeOf('mashup').inputRules?.['audio']);
  });
  const check: [string, Settings, ModeInputs, string | null][] = [
    ['extend continueAt before the end', E, inputs(file('audio', 30.5)), null],
    ['extend continueAt at the end', E, inputs(file('audio', 30)), 'continueAt'],
    ['extend continueAt after the end', { ...E, continueAt: 200 }, inputs(file('audio', 120)), 'continueAt'],
    ['extend length unknown', E, inputs(file('audio')), null],
    ['replace section within half the track', R, inputs(file('audio', 30)), null],
    ['replace section over half the track', R, inputs(file('audio', 29)), 'infillEndS'],
    [
      'replace end beyond the track',
      { ...R, infillStartS: 50, infillEndS: 70 },
      inputs(file('audio', 60)),
      'infillEndS',
    ],
    ['replace end at the end', { ...R, infillStartS: 50, infillEndS: 60 }, inputs(file('audio', 60)), null],
    // 16.01 - 6.01 is 10.000000000000002 in floating point.
    [
      'replace section of exactly half the track',
      { ...R, infillStartS: 6.01, infillEndS: 16.01 },
      inputs(file('audio', 20)),
      null,
    ],
    ['replace length unknown', R, inputs(file('audio')), null],
  ];
  for (const [name, settings, given, violated] of check) {
    it(name, () => {
      const { mode, settings: s } = accept(settings);
      const found = mode.checkInputs?.(s, given) ?? [];
      assert.deepEqual(
        found.map((v) => v.field),
        violated === null ? [] : [violated],
      );
      for (const v of found) assert.ok(v.en.includes(violated ?? '') && v.ru !== '');
    });
  }
  it('messages show seconds with at most two decimals, in Russian with a decimal comma', () => {
    const probed = inputs(file('audio', 40.04081632653062));
    const cases: [Settings, string[]][] = [
      [{ ...E, continueAt: 45 }, ['(40.04 ']],
      [{ ...R, infillStartS: 10.2, infillEndS: 41 }, ['(40.04 ']],
      [{ ...R, infillStartS: 5.2, infillEndS: 30.1 }, ['= 24.9 ', '(20.02 ']],
    ];
    for (const [settings, shown] of cases) {
      const { mode, settings: s } = accept(settings);
      const [found] = mode.checkInputs?.(s, probed) ?? [];
      const en = found?.en ?? '';
      const ru = found?.ru ?? '';
      for (const seconds of shown) {
        assert.ok(en.includes(seconds), en);
        assert.ok(ru.includes(seconds.replace('.', ',')), ru);
      }
      assert.doesNotMatch(en, /\d\.\d{3}/);
      assert.doesNotMatch(ru, /\d[.,]\d{3}/);
    }
  });
});

function planOf(settings: Settings, given: ModeInputs = NO_INPUTS) {
  const { mode, settings: s } = accept(settings);
  return mode.plan(s, given);
}

describe('music plan', () => {
  const durations: [string, Settings, ModeInputs, number][] = [
    ['generate advanced duration', { ...GA, duration: 95 }, NO_INPUTS, 95],
    ['generate advanced default 20 s', GA, NO_INPUTS, 20],
    ['generate simple typical 120 s', G, NO_INPUTS, 120],
    ['sounds 10 s', S, NO_INPUTS, 10],
    ['add_vocals follows the track', AV, inputs(file('audio', 150.4)), 150],
    ['cover simple follows the track', C, inputs(file('audio', 200)), 200],
    ['cover advanced uses duration', { ...CA, duration: 60 }, inputs(file('audio', 200)), 60],
    ['extend keeps continueAt plus 120 s', E, inputs(file('audio', 100)), 150],
    ['replace_upload keeps the track', R, inputs(file('audio', 180)), 180],
    ['replace_upload without length', R, NO_INPUTS, 30],
    ['mashup simple follows the base track', M, inputs(file('audio', 70), file('audio2', 90)), 70],
    // No least source length in the reference: a 0.2 s track makes a song of the shortest length, not of 0 s.
    ['add_vocals of a 0.2 s track: the shortest song', AV, inputs(file('audio', 0.2)), 10],
    ['add_instrumental of a 0.2 s track: the shortest song', AI, inputs(file('audio', 0.2)), 10],
    ['cover simple of a 0.2 s track: the shortest song', C, inputs(file('audio', 0.2)), 10],
    ['mashup of a 0.2 s base: the shortest song', M, inputs(file('audio', 0.2), file('audio2', 90)), 10],
  ];
  for (const [name, settings, given, seconds] of durations) {
    it(`${name}: two mp3 of ${seconds} s`, () => {
      const plan = planOf(settings, given);
      assert.equal(plan.outputs.length, 2);
      const [a, b] = plan.outputs as AudioOutput[];
      for (const out of [a, b]) {
        assert.equal(out?.kind, 'audio');
        assert.equal(out?.format, 'mp3');
        assert.equal(out?.durationSeconds, seconds);
        assert.match(out?.filename ?? '', /-v[12]\.mp3$/);
      }
      assert.notEqual(a?.seed, b?.seed);
    });
  }
  it('texts: title and lyrics of each song', () => {
    assert.deepEqual(planOf(GA).texts, ['Sea', 'Waves are calling', 'Sea', 'Waves are calling']);
    assert.deepEqual(planOf(R).texts, ['Fixed', R.fullLyrics, 'Fixed', R.fullLyrics]);
    assert.deepEqual(planOf(AV).texts, ['Night', 'Hold on', 'Night', 'Hold on']);
  });
  it('texts: an instrumental has its title only, sounds none', () => {
    assert.deepEqual(planOf({ ...GA, instrumental: true }).texts, ['Sea', 'Sea']);
    assert.deepEqual(planOf(AI).texts, ['Night', 'Night']);
    assert.deepEqual(planOf(MA).texts, ['Mix', 'Mix']);
    assert.deepEqual(planOf(S).texts, []);
  });
  it('simple mode makes up a title and lyrics from songDescription', () => {
    const [title, lyrics, ...rest] = planOf(G).texts;
    assert.equal(title, 'A calm song about the northern');
    assert.ok(lyrics?.includes(G.songDescription));
    assert.deepEqual(rest, [title, lyrics]);
  });
  it('sounds honour loop, tempo and key', () => {
    const [out] = planOf({ ...S, soundLoop: true, soundTempo: 96, soundKey: 'F#m' }).outputs as AudioOutput[];
    assert.equal(out?.loop, true);
    assert.equal(out?.tempoBpm, 96);
    assert.equal(out?.musicalKey, 'F#m');
    const [plain] = planOf(S).outputs as AudioOutput[];
    assert.equal(plain?.tempoBpm, undefined);
    assert.equal(plain?.musicalKey, undefined);
    assert.equal(plain?.loop, false);
  });
  it('caption names model, mode and version; work time', () => {
    const plan = planOf({ ...GA, model: 'V6_WILD' });
    assert.match(plan.caption, /music.*generate.*V6_WILD/);
    // And the settings that shape the song, as the reference's caption names "model and its settings".
    assert.match(planOf({ ...GA, instrumental: true }).caption, /advanced · instrumental · \d+ s$/);
    assert.match(planOf(S).caption, /^music · sounds · model V6 · \d+ s$/);
    assert.ok(plan.workSeconds >= 300 && plan.workSeconds <= 600);
    assert.equal(planOf(S).workSeconds, 60);
  });
  it('different settings give different seeds', () => {
    assert.notEqual(planOf(GA).outputs[0]?.seed, planOf({ ...GA, style: 'rock' }).outputs[0]?.seed);
  });
});

describe('music references and schemas', () => {
  suite.itPublishesJsonSchemas(8);
  it('persona and voice are library references of music', () => {
    const refs = (settings: Settings) => {
      const { mode, settings: s } = accept(settings);
      return mode.references?.(s) ?? [];
    };
    assert.deepEqual(refs({ ...G, persona: 'p1' }), [
      { library: 'personas', model: 'music', id: 'p1', field: 'persona' },
    ]);
    assert.deepEqual(refs({ ...CA, voice: 'v1' }), [
      { library: 'voices', model: 'music', id: 'v1', field: 'voice' },
    ]);
    assert.deepEqual(refs({ ...E, persona: 'p2' }), [
      { library: 'personas', model: 'music', id: 'p2', field: 'persona' },
    ]);
    assert.deepEqual(refs(GA), []);
  });
});
