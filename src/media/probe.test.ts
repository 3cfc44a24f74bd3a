import assert from 'node:assert/strict';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MediaFormat } from '../catalog/model-spec.ts';
import * as fixtures from './fixtures.ts';
import { bufferReader } from './image-size.ts';
import { readMovieInfo } from './isobmff.ts';
import { parseFfmpegReport, probeFile, probeWithFfmpeg } from './probe.ts';
import { SNIFF_BYTES, sniffFormat } from './sniff.ts';

interface Case {
  name: string;
  make: (dir: string) => Promise<string>;
  format: MediaFormat;
  seconds?: number;
  width?: number;
  height?: number;
}

const CASES: Case[] = [
  { name: 'wav', make: (d) => fixtures.makeWav(d, 2.5), format: 'wav', seconds: 2.5 },
  { name: 'mp3', make: (d) => fixtures.makeMp3(d, 2.5), format: 'mp3', seconds: 2.5 },
  { name: 'ogg', make: (d) => fixtures.makeOgg(d, 1.7), format: 'ogg', seconds: 1.7 },
  { name: 'flac', make: (d) => fixtures.makeFlac(d, 3.2), format: 'flac', seconds: 3.2 },
  { name: 'm4a', make: (d) => fixtures.makeM4a(d, 2.5), format: 'm4a', seconds: 2.5 },
  { name: 'aac (ADTS)', make: (d) => fixtures.makeAac(d, 2.5), format: 'aac', seconds: 2.5 },
  {
    name: 'mp4',
    make: (d) => fixtures.makeMp4(d, 2, 320, 240),
    format: 'mp4',
    seconds: 2,
    width: 320,
    height: 240,
  },
  {
    name: 'mp4, moov at the end',
    make: (d) => fixtures.makeMp4(d, 1.5, 176, 144, true),
    format: 'mp4',
    seconds: 1.5,
    width: 176,
    height: 144,
  },
  {
    name: 'mp4 with sound',
    make: (d) => fixtures.makeMp4WithAudio(d, 2, 160, 120),
    format: 'mp4',
    seconds: 2,
    width: 160,
    height: 120,
  },
  {
    name: 'mov',
    make: (d) => fixtures.makeMov(d, 1.5, 128, 96),
    format: 'mov',
    seconds: 1.5,
    width: 128,
    height: 96,
  },
  { name: 'png', make: (d) => fixtures.makePng(d, 33, 17), format: 'png', width: 33, height: 17 },
  { name: 'jpeg', make: (d) => fixtures.makeJpeg(d, 65, 47), format: 'jpeg', width: 65, height: 47 },
  { name: 'webp lossy', make: (d) => fixtures.makeWebp(d, 49, 29), format: 'webp', width: 49, height: 29 },
  {
    name: 'webp lossless',
    make: (d) => fixtures.makeWebp(d, 51, 31, 'lossless'),
    format: 'webp',
    width: 51,
    height: 31,
  },
  {
    name: 'webp extended',
    make: (d) => fixtures.makeWebp(d, 53, 33, 'alpha'),
    format: 'webp',
    width: 53,
    height: 33,
  },
];

async function head(path: string): Promise<Uint8Array> {
  return (await readFile(path)).subarray(0, SNIFF_BYTES);
}

describe('sniff and probe real files', () => {
  let dir = '';
  const paths = new Map<string, string>();
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'media-probe-'));
    await Promise.all(CASES.map(async (c) => paths.set(c.name, await c.make(dir))));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  for (const c of CASES) {
    it(c.name, async () => {
      const path = paths.get(c.name)!;
      const sniffed = await sniffFormat(await head(path));
      assert.equal(sniffed?.format, c.format);
      const probed = await probeFile(path, c.format);
      if (c.seconds === undefined) assert.equal(probed.durationSeconds, undefined);
      else
        assert.ok(Math.abs((probed.durationSeconds ?? -1) - c.seconds) <= 0.15, `${probed.durationSeconds}`);
      assert.equal(probed.width, c.width);
      assert.equal(probed.height, c.height);
    });
  }

  it('reads the moov box of MOV and MP4 (moov first or last) by itself', async () => {
    for (const name of ['mov', 'mp4, moov at the end', 'mp4']) {
      const c = CASES.find((x) => x.name === name)!;
      const bytes = await readFile(paths.get(name)!);
      const info = await readMovieInfo(bufferReader(bytes), bytes.length);
      assert.ok(Math.abs((info.durationSeconds ?? -1) - c.seconds!) <= 0.15, name);
      assert.deepEqual([info.width, info.height], [c.width, c.height], name);
    }
  });

  it('the ffmpeg fallback reads length and frame size', async () => {
    const probed = await probeWithFfmpeg(paths.get('mov')!, 'mov');
    assert.ok(Math.abs((probed.durationSeconds ?? -1) - 1.5) <= 0.15);
    assert.deepEqual([probed.width, probed.height], [128, 96]);
  });

  it('a truncated video still probes or leaves facts out, never throws', async () => {
    const bytes = await readFile(paths.get('mp4, moov at the end')!);
    const cut = join(dir, 'cut.mp4');
    const handle = await open(cut, 'w');
    await handle.write(bytes.subarray(0, Math.floor(bytes.length / 2)));
    await handle.close();
    const probed = await probeFile(cut, 'mp4');
    assert.equal(typeof probed, 'object');
  });

  it('garbage named as an image has no size', async () => {
    const junk = join(dir, 'junk');
    const handle = await open(junk, 'w');
    await handle.write('not a picture at all, just words');
    await handle.close();
    assert.deepEqual(await probeFile(junk, 'jpeg'), {});
    assert.deepEqual(await probeFile(junk, 'png'), {});
    assert.deepEqual(await probeFile(junk, 'webp'), {});
  });
});

describe('parseFfmpegReport', () => {
  it('reads Duration and the video size, not the codec tag', () => {
    const report = [
      "Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'x.mp4':",
      '  Duration: 01:02:03.45, start: 0.000000, bitrate: 241 kb/s',
      '    Stream #0:0(und): Audio: aac (LC) (mp4a / 0x6134706D), 44100 Hz, mono, fltp, 75 kb/s (default)',
      '    Stream #0:1(und): Video: h264 (High) (avc1 / 0x31637661), yuv420p(tv, bt709), 1920x1080 [SAR 1:1 DAR 16:9], 30 fps',
    ].join('\n');
    const parsed = parseFfmpegReport(report);
    assert.ok(Math.abs((parsed.durationSeconds ?? 0) - 3723.45) < 1e-9);
    assert.deepEqual([parsed.width, parsed.height], [1920, 1080]);
  });

  it('leaves out what is not there', () => {
    assert.deepEqual(
      parseFfmpegReport('  Duration: N/A, bitrate: N/A\n    Stream #0:0: Video: h264 (avc1 / 0x31637661)'),
      {},
    );
    assert.deepEqual(parseFfmpegReport(''), {});
  });
});
