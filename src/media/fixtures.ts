/**
 * Test fixtures: REAL small media files written into a directory, so sniffing and probing are tested
 * against what encoders actually produce. WAV and PNG are written in-process; everything else comes
 * from the bundled static ffmpeg (its build has libx264, libmp3lame, libvorbis, flac, aac, libwebp).
 * Every helper returns the path of the new file.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ffmpeg from '@ffmpeg-installer/ffmpeg';
import { PNG } from 'pngjs';

const FFMPEG: string = ffmpeg.path;

function fixturePath(dir: string, ext: string): string {
  return join(dir, `${randomUUID()}.${ext}`);
}

/** Runs the bundled ffmpeg quietly, overwriting `out`; rejects with its stderr on failure. */
function runFfmpeg(args: readonly string[], out: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      FFMPEG,
      ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', ...args, out],
      { timeout: 20_000 },
      (error, _stdout, stderr) => {
        if (error) reject(new Error(`ffmpeg failed: ${stderr || error.message}`));
        else resolve(out);
      },
    );
  });
}

/** A 440 Hz sine of `seconds` (lavfi input arguments). */
function sine(seconds: number, sampleRate = 44_100): string[] {
  return ['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=${sampleRate}:duration=${seconds}`];
}

/** A moving test pattern of `seconds`, `width`×`height` pixels, 10 frames per second. */
function testVideo(seconds: number, width: number, height: number): string[] {
  return ['-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}:rate=10`, '-t', String(seconds)];
}

/** One still frame of the test pattern, `width`×`height` pixels. */
function testPicture(width: number, height: number): string[] {
  return ['-f', 'lavfi', '-i', `testsrc=size=${width}x${height}:rate=1`, '-frames:v', '1'];
}

/** The 44-byte header of a 16-bit PCM WAV whose samples take `dataBytes`. */
export function wavHeader(dataBytes: number, { channels = 1, rate = 8000 } = {}): Buffer<ArrayBuffer> {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/** A 16-bit PCM WAV of `dataBytes` bytes of silence, written without ffmpeg. */
export function silentWav(
  dataBytes: number,
  format: { channels?: number; rate?: number } = {},
): Buffer<ArrayBuffer> {
  return Buffer.concat([wavHeader(dataBytes, format), Buffer.alloc(dataBytes)]);
}

/** 16-bit mono PCM WAV of `seconds` (8 kHz sine), written without ffmpeg. */
export async function makeWav(dir: string, seconds: number): Promise<string> {
  const rate = 8000;
  const samples = Math.round(seconds * rate);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++)
    data.writeInt16LE(Math.round(8000 * Math.sin((i * 2 * Math.PI * 440) / rate)), i * 2);
  const path = fixturePath(dir, 'wav');
  await writeFile(path, Buffer.concat([wavHeader(data.length, { rate }), data]));
  return path;
}

/** MP3 (LAME, 64 kbit/s) of `seconds`. */
export function makeMp3(dir: string, seconds: number): Promise<string> {
  return runFfmpeg([...sine(seconds), '-c:a', 'libmp3lame', '-b:a', '64k'], fixturePath(dir, 'mp3'));
}

/** Ogg Vorbis of `seconds`. */
export function makeOgg(dir: string, seconds: number): Promise<string> {
  return runFfmpeg([...sine(seconds), '-c:a', 'libvorbis', '-q:a', '2'], fixturePath(dir, 'ogg'));
}

/** FLAC of `seconds`. */
export function makeFlac(dir: string, seconds: number): Promise<string> {
  return runFfmpeg([...sine(seconds, 8000), '-c:a', 'flac'], fixturePath(dir, 'flac'));
}

/** AAC in an MPEG-4 audio file (`ftyp` brand `M4A `) of `seconds`. */
export function makeM4a(dir: string, seconds: number): Promise<string> {
  return runFfmpeg([...sine(seconds), '-c:a', 'aac', '-b:a', '64k', '-f', 'ipod'], fixturePath(dir, 'm4a'));
}

/** AAC alone in an MP4 of ffmpeg's generic brand (`isom`, no `M4A `): sound with no picture. */
export function makeSoundOnlyMp4(dir: string, seconds: number): Promise<string> {
  return runFfmpeg([...sine(seconds), '-c:a', 'aac', '-b:a', '64k', '-f', 'mp4'], fixturePath(dir, 'mp4'));
}

/** Raw AAC in ADTS frames of `seconds`. */
export function makeAac(dir: string, seconds: number): Promise<string> {
  return runFfmpeg([...sine(seconds), '-c:a', 'aac', '-b:a', '64k', '-f', 'adts'], fixturePath(dir, 'aac'));
}

/** The H.264 encoding of the fixtures' video-only MP4s. */
const H264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];

/** H.264 MP4 (video only, faststart unless `moovAtEnd`) of `seconds`, `width`×`height` pixels. */
export function makeMp4(
  dir: string,
  seconds: number,
  width: number,
  height: number,
  moovAtEnd = false,
): Promise<string> {
  const faststart = moovAtEnd ? [] : ['-movflags', '+faststart'];
  return runFfmpeg([...testVideo(seconds, width, height), ...H264, ...faststart], fixturePath(dir, 'mp4'));
}

/**
 * Fragmented H.264 MP4 (`-movflags frag_keyframe`, a key frame every 10 frames) of `seconds`: its `moov`
 * holds the first fragment's samples, `moof` boxes after it hold the rest.
 */
export function makeFragmentedMp4(
  dir: string,
  seconds: number,
  width: number,
  height: number,
): Promise<string> {
  return runFfmpeg(
    [...testVideo(seconds, width, height), ...H264, '-g', '10', '-movflags', 'frag_keyframe'],
    fixturePath(dir, 'mp4'),
  );
}

/** H.264 MP4 with an AAC sound track, `seconds` long. */
export function makeMp4WithAudio(
  dir: string,
  seconds: number,
  width: number,
  height: number,
): Promise<string> {
  return runFfmpeg(
    [
      ...testVideo(seconds, width, height),
      ...sine(seconds),
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-t',
      String(seconds),
    ],
    fixturePath(dir, 'mp4'),
  );
}

/** QuickTime MOV (H.264) of `seconds`, `width`×`height` pixels. */
export function makeMov(dir: string, seconds: number, width: number, height: number): Promise<string> {
  return runFfmpeg(
    [
      ...testVideo(seconds, width, height),
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      '-f',
      'mov',
    ],
    fixturePath(dir, 'mov'),
  );
}

/** RGBA PNG of `width`×`height` pixels (pngjs). */
export async function makePng(dir: string, width: number, height: number): Promise<string> {
  const png = new PNG({ width, height });
  for (let i = 0; i < png.data.length; i += 4) {
    png.data[i] = (i / 4) % 256;
    png.data[i + 1] = 128;
    png.data[i + 2] = 64;
    png.data[i + 3] = 255;
  }
  const path = fixturePath(dir, 'png');
  await writeFile(path, PNG.sync.write(png));
  return path;
}

/** Baseline JPEG of `width`×`height` pixels. */
export function makeJpeg(dir: string, width: number, height: number): Promise<string> {
  return runFfmpeg([...testPicture(width, height), '-q:v', '5'], fixturePath(dir, 'jpg'));
}

/**
 * WebP of `width`×`height` pixels: `lossy` (VP8 chunk), `lossless` (VP8L) or `alpha` (VP8X extended
 * header with an alpha channel).
 */
export function makeWebp(
  dir: string,
  width: number,
  height: number,
  variant: 'lossy' | 'lossless' | 'alpha' = 'lossy',
): Promise<string> {
  const codec =
    variant === 'lossless'
      ? ['-c:v', 'libwebp', '-lossless', '1']
      : variant === 'alpha'
        ? ['-vf', 'format=rgba,colorchannelmixer=aa=0.5', '-c:v', 'libwebp']
        : ['-c:v', 'libwebp'];
  return runFfmpeg([...testPicture(width, height), ...codec], fixturePath(dir, 'webp'));
}

function u32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value >>> 0);
  return bytes;
}

/** An ISO base media box: 32-bit size, type, content. */
export function box(type: string, ...content: Uint8Array[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([u32(8 + body.length), Buffer.from(type, 'latin1'), body]);
}

/** A full box (version, zero flags). */
function fullBox(type: string, version: number, ...content: Uint8Array[]): Buffer {
  return box(type, Buffer.from([version, 0, 0, 0]), ...content);
}

/**
 * A hostile MP4, written without ffmpeg: one 320×240 video track of 10 s whose sample tables (`stts`
 * and `stsz`) hold `entries` entries each, 12 bytes an entry, over a 16-byte `mdat`. music-metadata
 * decodes such tables in one synchronous pass (8 million entries, 96 MB: seconds of CPU). Its samples
 * last 10 s together, as its headers say: `entries` samples of one unit each, `entries / 10` units a
 * second in the track.
 */
export async function makeMp4WithSampleTables(dir: string, entries: number): Promise<string> {
  const matrix = Buffer.concat([0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000].map(u32));
  const [timescale, duration, width, height] = [1000, 10_000, 320, 240] as const;
  const trackTimescale = entries / 10;
  const rateAndVolume = [...[0, 0, timescale, duration, 0x10000].map(u32), Buffer.from([1, 0, 0, 0])];
  const mvhd = fullBox('mvhd', 0, ...rateAndVolume, Buffer.alloc(8), matrix, Buffer.alloc(24), u32(2));
  const tkhdFields = [...[0, 0, 1, 0, duration].map(u32), Buffer.alloc(16), matrix];
  const tkhd = fullBox('tkhd', 0, ...tkhdFields, u32(width << 16), u32(height << 16));
  const mdhd = fullBox(
    'mdhd',
    0,
    ...[0, 0, trackTimescale, entries].map(u32),
    Buffer.from([0x55, 0xc4, 0, 0]),
  );
  const hdlr = fullBox('hdlr', 0, u32(0), Buffer.from('vide'), Buffer.alloc(12), Buffer.from('video\0'));
  const avc1 = box(
    'avc1',
    Buffer.from([0, 0, 0, 0, 0, 0, 0, 1]),
    Buffer.alloc(16),
    Buffer.from([width >> 8, width & 255, height >> 8, height & 255]),
    ...[0x480000, 0x480000, 0].map(u32),
    Buffer.from([0, 1]),
    Buffer.alloc(32),
    Buffer.from([0, 24, 0xff, 0xff]),
  );
  const one = u32(1);
  const moov = (mdatStart: number): Buffer => {
    const stbl = box(
      'stbl',
      fullBox('stsd', 0, one, avc1),
      fullBox('stts', 0, u32(entries), Buffer.alloc(entries * 8).fill(Buffer.concat([one, one]))),
      fullBox('stsc', 0, one, one, u32(entries), one),
      fullBox('stsz', 0, u32(0), u32(entries), Buffer.alloc(entries * 4).fill(one)),
      fullBox('stco', 0, one, u32(mdatStart)),
    );
    const minf = box('minf', fullBox('vmhd', 0, Buffer.alloc(8)), stbl);
    return box('moov', mvhd, box('trak', tkhd, box('mdia', mdhd, hdlr, minf)));
  };
  const ftyp = box('ftyp', Buffer.from('isom'), u32(512), Buffer.from('isomiso2avc1mp41'));
  const path = fixturePath(dir, 'mp4');
  const mdatStart = ftyp.length + moov(0).length + 8;
  await writeFile(path, Buffer.concat([ftyp, moov(mdatStart), box('mdat', Buffer.alloc(16))]));
  return path;
}
