import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { InputFile } from './model-spec.ts';
import { inputFile } from './settings-cases.ts';
import {
  aspectFrameSize,
  attachmentLabels,
  frameSize,
  inputSeconds,
  outputAndInputSeconds,
  secondsOf,
  videoWorkSeconds,
} from './video-common.ts';

describe('video-common', () => {
  it('sizes frames by quality and proportions, both sides even', () => {
    assert.deepEqual(aspectFrameSize('720p', '16:9'), { width: 1280, height: 720 });
    assert.deepEqual(aspectFrameSize('480p', '9:16'), { width: 480, height: 854 });
    assert.deepEqual(aspectFrameSize('1080p', '1:1'), { width: 1080, height: 1080 });
    assert.deepEqual(frameSize('720p', 1001, 1333), { width: 720, height: 958 });
  });

  it('keeps a frame between 9:16 and 16:9 whatever the proportions of a first frame', () => {
    assert.deepEqual(frameSize('480p', 4000, 16), { width: 854, height: 480 });
    assert.deepEqual(frameSize('1080p', 16, 4000), { width: 1080, height: 1920 });
    assert.deepEqual(frameSize('720p', 2000, 1000), { width: 1280, height: 720 });
  });

  it('labels attachments by their position in their own list', () => {
    const labels = attachmentLabels([
      { label: 'Image', field: 'ref_image_urls', urls: ['a', 'b'] },
      { label: 'Video', field: 'ref_video_urls', urls: undefined },
      { label: 'Audio', field: 'ref_audio_urls', urls: ['c'] },
    ]);
    assert.deepEqual(labels, [
      { label: '@Image1', field: 'ref_image_urls.0' },
      { label: '@Image2', field: 'ref_image_urls.1' },
      { label: '@Audio1', field: 'ref_audio_urls.0' },
    ]);
  });

  it('rounds each input file up to a whole second, only for the given fields', () => {
    const file = (field: string, durationSeconds?: number): InputFile =>
      inputFile(field, { url: 'https://example.com/f', format: 'mp4', sizeBytes: 1, durationSeconds });
    const files = [file('a', 1), file('a', 1.01), file('b', 2.5), file('c', 9), file('a')];
    assert.equal(inputSeconds(files, ['a']), 3);
    assert.equal(inputSeconds(files, ['a', 'b']), 6);
    assert.equal(inputSeconds(files, []), 0);
  });

  it('reads durations and grows work time from 5 to 10 minutes', () => {
    assert.equal(secondsOf('12s'), 12);
    assert.equal(videoWorkSeconds(2), 300);
    assert.equal(videoWorkSeconds(30), 600);
    assert.equal(videoWorkSeconds(60), 600);
  });
  it('counts output plus input seconds with the words that describe them', () => {
    const files: InputFile[] = [
      inputFile('v', { url: 'https://example.com/v.mp4', format: 'mp4', sizeBytes: 1, durationSeconds: 2.2 }),
    ];
    const one = outputAndInputSeconds(['v']);
    assert.equal(one.count({ duration: '5s' }, { files }), 8);
    assert.equal(one.text, '(output seconds + seconds of each v file, each rounded up to a whole second)');
    const two = outputAndInputSeconds(['v', 'a'], 1);
    assert.equal(two.count({ duration: '5s' }, { files: [] }), 6);
    assert.match(two.text, /the v and a files, .*, at least 1 input second\)$/);
  });
});
