import assert from 'node:assert/strict';
import { mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MediaFormat } from '../catalog/model-spec.ts';
import * as fixtures from './fixtures.ts';
import { bufferReader } from './image-size.ts';
import { readMovieInfo } from './isobmff.ts';
import { inspectFile, parseFfprobeReport, probeFile, probeWithFfprobe } from './probe.ts';
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

  it("a video's length is its video track's, not its sound track's encoder delay added", async () => {
    // ffmpeg's AAC track of a 5 s clip runs 5.023 s, and the container's length with it.
    const path = await fixtures.makeMp4WithAudio(dir, 5, 64, 48);
    const probed = await probeFile(path, 'mp4');
    assert.ok(Math.abs((probed.durationSeconds ?? -1) - 5) < 0.001, `${probed.durationSeconds}`);
    const bytes = await readFile(path);
    const info = await readMovieInfo(bufferReader(bytes), bytes.length);
    assert.ok((info.durationSeconds ?? 0) > 5.01, 'the movie counts the sound track');
    assert.ok(Math.abs((info.videoSeconds ?? -1) - 5) < 0.001);
  });

  it('an MP4 with sound and no picture is inspected as the M4A it is; one with a picture stays MP4', async () => {
    const soundOnly = await fixtures.makeSoundOnlyMp4(dir, 3);
    assert.equal((await sniffFormat(await head(soundOnly)))?.format, 'mp4', 'its brand alone says mp4');
    const inspected = await inspectFile(soundOnly, (await stat(soundOnly)).size);
    assert.equal(inspected?.format, 'm4a');
    assert.equal(inspected?.contentType, 'audio/mp4');
    assert.ok(Math.abs((inspected?.durationSeconds ?? -1) - 3) < 0.05, `${inspected?.durationSeconds}`);
    assert.equal(inspected?.width, undefined);
    const withPicture = await fixtures.makeMp4WithAudio(dir, 2, 64, 48);
    const video = await inspectFile(withPicture, (await stat(withPicture)).size);
    assert.deepEqual([video?.format, video?.width, video?.height], ['mp4', 64, 48]);
  });

  it("an M4A's length is what its edit list presents, not its encoder delay added", async () => {
    // ffmpeg's AAC track of a 480 s file runs 480.023 s (mdhd, mvhd); its edit list presents 480 s, as
    // players show it, so a cover or extend track of exactly 8 minutes is within its bound.
    const path = await fixtures.makeM4a(dir, 480);
    const probed = await probeFile(path, 'm4a');
    assert.ok(Math.abs((probed.durationSeconds ?? -1) - 480) < 0.001, `${probed.durationSeconds}`);
  });

  it('a length its headers understate is read from what the samples play (MP4 video, M4A sound)', async () => {
    // mvhd, tkhd and mdhd of every track say a third of the length; ffmpeg still decodes it all.
    const understate = (bytes: Buffer): Buffer => {
      const out = Buffer.from(bytes);
      // Offset of the 32-bit duration after each box's type (version 0 boxes, as ffmpeg writes them).
      const fields: Record<string, number> = { mvhd: 20, mdhd: 20, tkhd: 24 };
      for (const [type, offset] of Object.entries(fields)) {
        for (let at = out.indexOf(type); at >= 0; at = out.indexOf(type, at + 4)) {
          if (out[at + 4] !== 0) continue;
          const field = at + offset;
          out.writeUInt32BE(Math.floor(out.readUInt32BE(field) / 3), field);
        }
      }
      return out;
    };
    const cases = [
      { make: () => fixtures.makeMp4WithAudio(dir, 6, 64, 48), format: 'mp4' as const },
      { make: () => fixtures.makeM4a(dir, 6), format: 'm4a' as const },
    ];
    for (const c of cases) {
      const honest = await c.make();
      const edited = `${honest}.edited`;
      await writeFile(edited, understate(await readFile(honest)));
      const before = (await probeFile(honest, c.format)).durationSeconds ?? -1;
      const after = (await probeFile(edited, c.format)).durationSeconds ?? -1;
      assert.ok(Math.abs(before - 6) < 0.05, `${c.format} honest: ${before}`);
      // The sound's own length (its edit list), where the honest file's header counts the encoder's delay.
      assert.ok(Math.abs(after - before) < 0.05, `${c.format}: edited ${after}, honest ${before}`);
    }
  });

  it("a fragmented MP4's length counts every fragment, not only the moov's first one", async () => {
    // Its moov describes the first second; a 9 s clip read 1 s and passed a 5 s bound, priced as 1 s.
    const path = await fixtures.makeFragmentedMp4(dir, 9, 64, 48);
    const bytes = await readFile(path);
    const info = await readMovieInfo(bufferReader(bytes), bytes.length);
    assert.equal(info.fragmented, true);
    assert.deepEqual([info.durationSeconds, info.videoSeconds], [undefined, undefined]);
    const probed = await probeFile(path, 'mp4');
    assert.ok(Math.abs((probed.durationSeconds ?? -1) - 9) < 0.001, `${probed.durationSeconds}`);
    assert.deepEqual([probed.width, probed.height], [64, 48]);
  });

  it('the ffprobe fallback reads length and frame size', async () => {
    const probed = await probeWithFfprobe(paths.get('mov')!, 'mov');
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

describe('parseFfprobeReport', () => {
  it('reads the duration and the video size', () => {
    const report = JSON.stringify({
      programs: [],
      streams: [{ codec_type: 'audio' }, { codec_type: 'video', width: 1920, height: 1080 }],
      format: { duration: '3723.450000' },
    });
    const parsed = parseFfprobeReport(report);
    assert.ok(Math.abs((parsed.durationSeconds ?? 0) - 3723.45) < 1e-9);
    assert.deepEqual([parsed.width, parsed.height], [1920, 1080]);
  });

  it('leaves out what is not there', () => {
    assert.deepEqual(
      parseFfprobeReport(JSON.stringify({ streams: [{ codec_type: 'video' }], format: {} })),
      {},
    );
    assert.deepEqual(
      parseFfprobeReport(JSON.stringify({ streams: [{ codec_type: 'video', width: 0, height: 0 }] })),
      {},
    );
    assert.deepEqual(parseFfprobeReport(JSON.stringify({ format: { duration: 'N/A' } })), {});
    assert.deepEqual(parseFfprobeReport(''), {});
    assert.deepEqual(parseFfprobeReport('null'), {});
    assert.deepEqual(parseFfprobeReport('{"streams": ['), {});
  });
});

describe('probeWithFfprobe', () => {
  it('opens nothing but the local file, even when the file is a playlist', async () => {
    let requests = 0;
    const server = createServer((_request, response) => {
      requests += 1;
      response.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const dir = await mkdtemp(join(tmpdir(), 'media-playlist-'));
    try {
      const playlist = join(dir, 'list.m3u8');
      const lines = ['#EXTM3U', '#EXT-X-TARGETDURATION:10', '#EXTINF:10,', `http://127.0.0.1:${port}/a.mp3`];
      await writeFile(playlist, `${lines.join('\n')}\n`);
      for (const format of ['mp3', 'aac', 'mp4'] as const) {
        assert.deepEqual(await probeWithFfprobe(playlist, format), {}, format);
      }
      assert.equal(requests, 0);
    } finally {
      server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
