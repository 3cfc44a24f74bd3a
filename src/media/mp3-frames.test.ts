import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeMp3 } from './fixtures.ts';
import { bufferReader } from './image-size.ts';
import { countMp3Seconds, frameOf } from './mp3-frames.ts';
import { probeFile } from './probe.ts';
import { probeWithMusicMetadata } from './probe-thread.ts';

/** Where an MP3 of ffmpeg's splits: its ID3v2 tag, its Xing/Info header frame, its audio frames. */
function parts(file: Buffer): { tag: Buffer; header: Buffer; audio: Buffer } {
  const tagEnd =
    file.subarray(0, 3).toString('latin1') === 'ID3'
      ? 10 + [6, 7, 8, 9].reduce((s, i) => s * 128 + (file[i]! & 0x7f), 0)
      : 0;
  const first = frameOf(file[tagEnd]!, file[tagEnd + 1]!, file[tagEnd + 2]!, file[tagEnd + 3]!);
  assert.ok(first, 'the fixture starts with a frame');
  const headerEnd = tagEnd + first.length;
  return {
    tag: file.subarray(0, tagEnd),
    header: file.subarray(tagEnd, headerEnd),
    audio: file.subarray(headerEnd),
  };
}

describe('MP3 length counted from its frames', () => {
  let dir: string;
  let short: Buffer;
  let long: Buffer;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gta-mp3-'));
    short = await readFile(await makeMp3(dir, 2));
    long = await readFile(await makeMp3(dir, 10));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const count = (bytes: Buffer) => countMp3Seconds(bufferReader(bytes), bytes.length);

  it("an honest file counts its length to the sample, the encoder's padding left out", async () => {
    for (const [file, seconds] of [
      [short, 2],
      [long, 10],
    ] as const) {
      const counted = (await count(file)) ?? 0;
      assert.ok(Math.abs(counted - seconds) < 0.001, `${counted} s for ${seconds} s`);
    }
    // The header reader counts the padding (10.03 s or so); the probe says 10 s, as ffprobe does.
    const path = join(dir, 'honest.mp3');
    await writeFile(path, long);
    const claimed = (await probeWithMusicMetadata({ path, isVideo: false })).durationSeconds ?? 0;
    assert.ok(claimed > 10.01, `${claimed} s`);
    assert.ok(Math.abs(((await probeFile(path, 'mp3')).durationSeconds ?? 0) - 10) < 0.001);
  });

  it('a 15 s file is 15 s long, not the 15.05 s its frames hold: within a 15 s bound', async () => {
    const file = await readFile(await makeMp3(dir, 15));
    const counted = (await count(file)) ?? 0;
    assert.ok(counted <= 15 && counted > 14.999, `${counted} s`);
  });

  it("a 2 s file's header before a 10 s file's frames is 10 s long, whatever the header claims", async () => {
    const forged = Buffer.concat([parts(short).tag, parts(short).header, parts(long).audio]);
    const path = join(dir, 'forged.mp3');
    await writeFile(path, forged);
    const claimed = (await probeWithMusicMetadata({ path, isVideo: false })).durationSeconds ?? 0;
    assert.ok(claimed < 2.2, `the header reader believes the header: ${claimed} s`);
    const probed = (await probeFile(path, 'mp3')).durationSeconds ?? 0;
    assert.ok(Math.abs(probed - 10) < 0.1, `${probed} s`);
  });

  it('junk between frames is skipped as decoders skip it; the frames after it count', async () => {
    const { tag, header, audio } = parts(long);
    const half = parts(long).audio.length / 2;
    // Cut at a frame boundary: walk the frames to the middle.
    let cut = 0;
    while (cut < half) {
      const frame = frameOf(audio[cut]!, audio[cut + 1]!, audio[cut + 2]!, audio[cut + 3]!);
      assert.ok(frame);
      cut += frame.length;
    }
    const junk = Buffer.alloc(333, 0xff);
    const spliced = Buffer.concat([tag, header, audio.subarray(0, cut), junk, audio.subarray(cut)]);
    const counted = (await count(spliced)) ?? 0;
    assert.ok(Math.abs(counted - 10) < 0.1, `${counted} s`);
  });

  it('bytes without two frames in a row have no length', async () => {
    assert.equal(await count(Buffer.alloc(5000, 0xff)), undefined);
    assert.equal(await count(Buffer.concat([Buffer.from('ID3'), Buffer.alloc(2000)])), undefined);
    assert.equal(await count(parts(short).header), undefined);
  });

  it('reads frame headers of every MPEG version and layer', () => {
    // MPEG-1 layer III, 128 kbit/s, 44.1 kHz, no padding: 417 bytes, 1152 samples.
    assert.deepEqual(frameOf(0xff, 0xfb, 0x90, 0x00), {
      length: 417,
      samples: 1152,
      sampleRate: 44_100,
      tagOffset: 36,
    });
    // MPEG-2 layer III, 64 kbit/s, 22.05 kHz, mono: 208 bytes, 576 samples.
    assert.deepEqual(frameOf(0xff, 0xf3, 0x80, 0xc0), {
      length: 208,
      samples: 576,
      sampleRate: 22_050,
      tagOffset: 13,
    });
    // MPEG-1 layer I, 448 kbit/s, 48 kHz: 448 bytes.
    assert.equal(frameOf(0xff, 0xff, 0xe4, 0x00)?.length, 448);
    // Reserved version, reserved layer, free and bad bitrates, reserved rate: no frame.
    for (const b of [
      [0xff, 0xeb, 0x90, 0],
      [0xff, 0xf9, 0x90, 0],
      [0xff, 0xfb, 0x00, 0],
      [0xff, 0xfb, 0xf0, 0],
      [0xff, 0xfb, 0x9c, 0],
      [0xfe, 0xfb, 0x90, 0],
    ] as const) {
      assert.equal(frameOf(b[0], b[1], b[2], b[3]), null, b.join(','));
    }
  });
});
