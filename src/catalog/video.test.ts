import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { settingsJsonSchema } from './fields.ts';
import type { GenerationPlan, InputFile, VideoOutput } from './model-spec.ts';
import rates from './prices/video.json' with { type: 'json' };
import {
  bad,
  type Case,
  checkCase,
  inputFile,
  ok,
  type Settings,
  settingsCases,
  unknown,
} from './settings-cases.ts';
import { validateSettings } from './validate.ts';
import { video } from './video.ts';

const IMG = 'https://example.com/cat.png';
const VID = 'https://example.com/cat.mp4';
const MP3 = 'https://example.com/cat.mp3';
const frames = { mode: 'frames', prompt: 'a cat jumps', image_urls: [IMG] };
const reference = { mode: 'reference', prompt: '@Image1 walks', ref_image_urls: [IMG] };
const omni = { mode: 'omni', prompt: '@Image1 sings', ref_image_urls: [IMG] };
const urls = (n: number, url: string): string[] => Array.from({ length: n }, () => url);
const labels = (n: number, label: string): string =>
  Array.from({ length: n }, (_, i) => `@${label}${i + 1}`).join(' ');

const cases: Case[] = [
  ['mode required', { prompt: 'x', image_urls: [IMG] }, bad('mode')],
  ['mode value', { ...frames, mode: 'text' }, bad('mode')],
  ['model 3_0', { ...frames, model: '3_0' }, ok],
  ['model 2_7', { ...frames, model: '2_7' }, bad('model')],
  ['quality 480p', { ...frames, quality: '480p' }, ok],
  ['quality 1080p', { ...frames, quality: '1080p' }, ok],
  ['quality 4k', { ...frames, quality: '4k' }, bad('quality')],
  ...['16:9', '9:16', '1:1', '4:3', '3:4'].flatMap((ratio): Case[] => [
    [`720p ${ratio}`, { ...frames, aspect_ratio: ratio }, ok],
    [`480p ${ratio}`, { ...reference, quality: '480p', aspect_ratio: ratio }, ok],
  ]),
  ...['16:9', '9:16', '1:1'].map(
    (ratio): Case => [`1080p ${ratio}`, { ...omni, quality: '1080p', aspect_ratio: ratio }, ok],
  ),
  ...['4:3', '3:4'].map(
    (ratio): Case => [
      `1080p ${ratio}`,
      { ...frames, quality: '1080p', aspect_ratio: ratio },
      bad('aspect_ratio'),
    ],
  ),
  ['aspect_ratio 21:9', { ...frames, aspect_ratio: '21:9' }, bad('aspect_ratio')],
  ['duration 2s', { ...frames, duration: '2s' }, ok],
  ['duration 30s', { ...frames, duration: '30s' }, ok],
  ['duration 1s', { ...frames, duration: '1s' }, bad('duration')],
  ['duration 31s', { ...frames, duration: '31s' }, bad('duration')],
  ['duration is a string', { ...frames, duration: 5 }, bad('duration')],
  ['prompt 20000', { ...frames, prompt: 'x'.repeat(20000) }, ok],
  ['prompt 20001', { ...frames, prompt: 'x'.repeat(20001) }, bad('prompt')],
  ['prompt empty', { ...frames, prompt: '' }, bad('prompt')],
  ['prompt required', { mode: 'frames', image_urls: [IMG] }, bad('prompt')],
  ['frames: two frames', { ...frames, image_urls: [IMG, IMG] }, ok],
  ['frames: image_urls required', { mode: 'frames', prompt: 'x' }, bad('image_urls')],
  ['frames: at least one frame', { ...frames, image_urls: [] }, bad('image_urls')],
  ['frames: max 2 frames', { ...frames, image_urls: urls(3, IMG) }, bad('image_urls')],
  ['frames: uri form', { ...frames, image_urls: ['cat'] }, bad('image_urls.0')],
  ['frames: multi_shots false', { ...frames, multi_shots: false }, ok],
  ['frames: multi_shots true', { ...frames, multi_shots: true }, bad('multi_shots')],
  ['frames: audio (older versions)', { ...frames, audio: [MP3] }, bad('audio')],
  ['frames: ref_image_urls', { ...frames, ref_image_urls: [IMG] }, unknown('ref_image_urls')],
  ['reference: video only', { mode: 'reference', prompt: '@Video1', ref_video_urls: [VID] }, ok],
  ['reference: nothing attached', { mode: 'reference', prompt: 'x' }, bad('ref_image_urls')],
  ['reference: empty lists', { ...reference, ref_image_urls: [], ref_video_urls: [] }, bad('ref_image_urls')],
  ['reference: 5 pictures', { ...reference, prompt: labels(5, 'Image'), ref_image_urls: urls(5, IMG) }, ok],
  [
    'reference: 6 pictures',
    { ...reference, prompt: labels(6, 'Image'), ref_image_urls: urls(6, IMG) },
    bad('ref_image_urls'),
  ],
  [
    'reference: 6 videos',
    { mode: 'reference', prompt: labels(6, 'Video'), ref_video_urls: urls(6, VID) },
    bad('ref_video_urls'),
  ],
  [
    'reference: 2 pictures + 3 videos',
    {
      mode: 'reference',
      prompt: `${labels(2, 'Image')} ${labels(3, 'Video')}`,
      ref_image_urls: urls(2, IMG),
      ref_video_urls: urls(3, VID),
    },
    ok,
  ],
  [
    'reference: 3 pictures + 3 videos',
    {
      mode: 'reference',
      prompt: `${labels(3, 'Image')} ${labels(3, 'Video')}`,
      ref_image_urls: urls(3, IMG),
      ref_video_urls: urls(3, VID),
    },
    bad('ref_video_urls'),
  ],
  ['reference: first_frame_url', { ...reference, first_frame_url: [IMG] }, ok],
  [
    'reference: first_frame_url makes aspect_ratio of no effect, so no ratio is refused at 1080p',
    { ...reference, first_frame_url: [IMG], quality: '1080p', aspect_ratio: '4:3' },
    ok,
  ],
  [
    'reference: without it 4:3 at 1080p is refused',
    { ...reference, quality: '1080p', aspect_ratio: '4:3' },
    bad('aspect_ratio'),
  ],
  [
    'reference: an empty first_frame_url gives no frame, so 4:3 at 1080p is refused',
    { ...reference, first_frame_url: [], quality: '1080p', aspect_ratio: '4:3' },
    bad('aspect_ratio'),
  ],
  ['reference: first_frame_url max 1', { ...reference, first_frame_url: [IMG, IMG] }, bad('first_frame_url')],
  ['reference: multi_shots true', { ...reference, multi_shots: true }, bad('multi_shots')],
  ['reference: @Image2 missing', { ...reference, ref_image_urls: [IMG, IMG] }, bad('prompt')],
  ['reference: @Video1 missing', { ...reference, ref_video_urls: [VID] }, bad('prompt')],
  ['reference: label capitalisation', { ...reference, prompt: '@image1 walks' }, bad('prompt')],
  ['reference: label without space', { ...reference, prompt: '@Image 1 walks' }, bad('prompt')],
  ['reference: label before punctuation', { ...reference, prompt: 'look at @Image1, walk' }, ok],
  ['reference: audio is not a setting', { ...reference, ref_audio_urls: [MP3] }, unknown('ref_audio_urls')],
  ['reference: @Image2 names no picture', { ...reference, prompt: '@Image1 meets @Image2' }, bad('prompt')],
  ['reference: @Video1 names no video', { ...reference, prompt: '@Image1 enters @Video1' }, bad('prompt')],
  ['reference: @Audio1 names nothing', { ...reference, prompt: '@Image1 sings @Audio1' }, bad('prompt')],
  ['reference: @Image0 names nothing', { ...reference, prompt: '@Image1 and @Image0' }, bad('prompt')],
  ['reference: a label named twice', { ...reference, prompt: '@Image1 sees @Image1' }, ok],
  ['omni: 10 pictures', { ...omni, prompt: labels(10, 'Image'), ref_image_urls: urls(10, IMG) }, ok],
  [
    'omni: 11 pictures',
    { ...omni, prompt: labels(11, 'Image'), ref_image_urls: urls(11, IMG) },
    bad('ref_image_urls'),
  ],
  [
    'omni: @Image10 does not mention @Image1',
    { ...omni, prompt: labels(10, 'Image').replace('@Image1 ', ''), ref_image_urls: urls(10, IMG) },
    bad('prompt'),
  ],
  ['omni: 5 videos', { mode: 'omni', prompt: labels(5, 'Video'), ref_video_urls: urls(5, VID) }, ok],
  [
    'omni: 6 videos',
    { mode: 'omni', prompt: labels(6, 'Video'), ref_video_urls: urls(6, VID) },
    bad('ref_video_urls'),
  ],
  ['omni: 5 sounds', { mode: 'omni', prompt: labels(5, 'Audio'), ref_audio_urls: urls(5, MP3) }, ok],
  [
    'omni: 6 sounds',
    { mode: 'omni', prompt: labels(6, 'Audio'), ref_audio_urls: urls(6, MP3) },
    bad('ref_audio_urls'),
  ],
  ['omni: nothing attached', { mode: 'omni', prompt: 'x' }, bad('ref_image_urls')],
  ['omni: @Audio1 missing', { ...omni, ref_audio_urls: [MP3] }, bad('prompt')],
  ['omni: @Audio1 names no sound', { ...omni, prompt: '@Image1 sings @Audio1' }, bad('prompt')],
  [
    'omni: @Image11 names no picture',
    { ...omni, prompt: `${labels(10, 'Image')} @Image11`, ref_image_urls: urls(10, IMG) },
    bad('prompt'),
  ],
  ['omni: multi_shots is not a setting', { ...omni, multi_shots: false }, unknown('multi_shots')],
  ['omni: first_frame_url is not a setting', { ...omni, first_frame_url: [IMG] }, unknown('first_frame_url')],
];

const suite = settingsCases(video);

suite.describe('video settings', cases, () => {
  it('names the label without an attachment in the message', () => {
    const result = validateSettings(video, { ...reference, prompt: '@Image1 enters @Video1' });
    assert.ok(
      !result.ok && result.violations.some((v) => v.en.includes('@Video1') && v.ru.includes('@Video1')),
    );
  });

  it('refuses any number of labels without attachments in one rule naming the first three', () => {
    const prompt = `@Image1 ${labels(50, 'Video')}`;
    const result = validateSettings(video, { ...reference, prompt });
    assert.ok(!result.ok);
    assert.equal(result.violations.length, 1);
    assert.match(result.violations[0]?.en ?? '', /names @Video1, @Video2, @Video3, …, but/);
  });

  it('names the missing label in the message', () => {
    const result = validateSettings(video, { ...reference, ref_video_urls: [VID] });
    assert.ok(
      !result.ok && result.violations.some((v) => v.en.includes('@Video1') && v.ru.includes('@Video1')),
    );
  });

  suite.itFillsInDefaults(frames, {
    ...frames,
    model: '3_0',
    quality: '720p',
    aspect_ratio: '16:9',
    duration: '5s',
    multi_shots: false,
  });
  suite.itPublishesJsonSchemas();

  it('publishes what 3_0 refuses as not valid: frames audio, multi_shots true', () => {
    const properties = (mode: string): Record<string, Record<string, unknown>> => {
      const found = video.modes.find((m) => m.name === mode);
      assert.ok(found);
      return (settingsJsonSchema(found.schema) as { properties: Record<string, Record<string, unknown>> })
        .properties;
    };
    // A body built from GET /v1/models must not be refused: audio is never valid, multi_shots only false.
    assert.deepEqual(properties('frames')['audio'], { not: {} });
    for (const mode of ['frames', 'reference']) {
      assert.equal(properties(mode)['multi_shots']?.['const'], false, mode);
      assert.equal(properties(mode)['multi_shots']?.['default'], false, mode);
    }
    // Validation still knows both, so they are refused with a clear invalid_settings, not unknown_setting.
    checkCase(video, ['frames audio', { ...frames, audio: [] }, bad('audio')]);
    checkCase(video, ['reference multi_shots', { ...reference, multi_shots: true }, bad('multi_shots')]);
  });

  it('declares the file rules of the reference', () => {
    const rules = Object.fromEntries(video.modes.map((m) => [m.name, m.inputRules ?? {}]));
    assert.deepEqual(rules.frames?.image_urls?.formats, ['jpeg', 'png', 'webp']);
    assert.equal(rules.reference?.ref_image_urls?.maxBytes, 10 * 1024 * 1024);
    assert.deepEqual(rules.reference?.ref_video_urls, {
      formats: ['mp4', 'mov'],
      maxBytes: 100 * 1024 * 1024,
      minSeconds: 1,
      maxSeconds: 5,
    });
    assert.deepEqual(rules.omni?.ref_video_urls, {
      formats: ['mp4', 'mov'],
      maxBytes: 100 * 1024 * 1024,
      minSeconds: 1,
      maxSeconds: 15,
      maxTotalSeconds: 15,
    });
    assert.deepEqual(rules.omni?.ref_audio_urls, {
      formats: ['mp3', 'wav'],
      maxBytes: 10 * 1024 * 1024,
      minSeconds: 1,
      maxSeconds: 15,
      maxTotalSeconds: 15,
    });
  });
});

const file = (field: string, durationSeconds?: number, size?: [number, number]): InputFile => ({
  ...inputFile(field, {
    url: 'https://example.com/f',
    format: field === 'ref_audio_urls' ? 'mp3' : field === 'ref_video_urls' ? 'mp4' : 'png',
    sizeBytes: 1000,
    durationSeconds,
  }),
  ...(size === undefined ? {} : { width: size[0], height: size[1] }),
});

function run(
  settings: Settings,
  files: InputFile[] = [],
): { price: number; plan: GenerationPlan; out: VideoOutput } {
  const result = suite.accept(settings);
  const plan = result.mode.plan(result.settings, { files });
  const [out] = plan.outputs;
  assert.ok(out?.kind === 'video' && plan.outputs.length === 1);
  return { price: result.mode.price(result.settings, { files }, rates), plan, out };
}

describe('video price', () => {
  const min = { quality: '480p', duration: '2s' };
  it('reproduces the reference minimums: frames 16, reference 16, omni 24 with a 1 s file', () => {
    assert.equal(run({ ...frames, ...min }).price, 1600);
    assert.equal(run({ ...reference, ...min }).price, 1600);
    const withVideo = { mode: 'omni', prompt: '@Video1', ref_video_urls: [VID], ...min };
    assert.equal(run(withVideo, [file('ref_video_urls', 1)]).price, 2400);
  });

  it('charges omni at least 1 input second', () => {
    assert.equal(run({ ...omni, ...min }).price, 2400);
  });

  it('grows per second of output', () => {
    assert.equal(run({ ...frames, quality: '480p', duration: '3s' }).price, 2400);
    assert.equal(run({ ...frames, quality: '480p', duration: '30s' }).price, 24000);
  });

  it('costs more at higher quality', () => {
    const at = (quality: string): number => run({ ...frames, quality }).price;
    assert.ok(at('480p') < at('720p') && at('720p') < at('1080p'));
  });

  it('adds reference input video seconds, each file rounded up', () => {
    const settings = { mode: 'reference', prompt: '@Video1 @Video2', ref_video_urls: [VID, VID], ...min };
    const files = [file('ref_video_urls', 1.1), { ...file('ref_video_urls', 2), position: 1 }];
    assert.equal(run(settings, files).price, (2 + 2 + 2) * 800);
  });

  it('adds omni video and audio seconds, each rounded up; pictures add none', () => {
    const settings = {
      ...omni,
      prompt: '@Image1 @Video1 @Audio1',
      ref_video_urls: [VID],
      ref_audio_urls: [MP3],
      ...min,
    };
    const files = [file('ref_image_urls'), file('ref_video_urls', 1.5), file('ref_audio_urls', 2.01)];
    assert.equal(run(settings, files).price, (2 + 2 + 3) * 800);
  });

  it('does not charge frames for files', () => {
    assert.equal(run({ ...frames, ...min }, [file('image_urls')]).price, 1600);
  });
});

describe('video plan', () => {
  const sizes: [string, string, number, number][] = [
    ['720p', '16:9', 1280, 720],
    ['720p', '9:16', 720, 1280],
    ['720p', '1:1', 720, 720],
    ['720p', '4:3', 960, 720],
    ['720p', '3:4', 720, 960],
    ['480p', '16:9', 854, 480],
    ['480p', '4:3', 640, 480],
    ['1080p', '16:9', 1920, 1080],
    ['1080p', '9:16', 1080, 1920],
  ];
  for (const [quality, aspect_ratio, width, height] of sizes) {
    it(`${quality} ${aspect_ratio} is ${width}×${height}`, () => {
      const { out } = run({ ...frames, quality, aspect_ratio });
      assert.deepEqual([out.width, out.height], [width, height]);
    });
  }

  it('makes one mp4 of the chosen duration', () => {
    const { plan, out } = run({ ...omni, duration: '12s' });
    assert.deepEqual(
      [out.kind, out.format, out.filename, out.durationSeconds],
      ['video', 'mp4', 'video.mp4', 12],
    );
    assert.equal(plan.caption, 'video 3_0 omni, 720p 16:9, 12s');
    assert.deepEqual(plan.texts, []);
  });

  it('follows the first frame proportions in reference mode', () => {
    const settings = { ...reference, first_frame_url: [IMG], aspect_ratio: '16:9' };
    const { out } = run(settings, [file('first_frame_url', undefined, [1000, 1500])]);
    assert.deepEqual([out.width, out.height], [720, 1080]);
    const unprobed = run(settings, [file('first_frame_url')]).out;
    assert.deepEqual([unprobed.width, unprobed.height], [1280, 720]);
  });

  it('takes 5 to 10 minutes, longer for longer videos', () => {
    const work = (duration: string): number => run({ ...frames, duration }).plan.workSeconds;
    assert.equal(work('2s'), 300);
    assert.equal(work('30s'), 600);
    assert.ok(work('5s') < work('10s'));
  });
});
