import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { makeWebp } from './fixtures.ts';
import { bufferReader, jpegSize, pngSize, webpSize } from './image-size.ts';

const bytes = (...parts: Array<number[] | string>): Uint8Array =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === 'string' ? [...p].map((c) => c.charCodeAt(0)) : p)));
const u16be = (n: number): number[] => [(n >> 8) & 0xff, n & 0xff];
const u32be = (n: number): number[] => [...u16be(n >>> 16), ...u16be(n & 0xffff)];
const u32le = (n: number): number[] => [n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >>> 24) & 0xff];

function png(width: number, height: number): Uint8Array {
  return bytes(
    [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    u32be(13),
    'IHDR',
    u32be(width),
    u32be(height),
    [8, 6, 0, 0, 0],
  );
}

/** JPEG: SOI, the given segments (marker, payload), then SOS and EOI. */
function jpeg(...segments: Array<[number, number[]]>): Uint8Array {
  const body = segments.flatMap(([marker, payload]) => [
    0xff,
    marker,
    ...u16be(payload.length + 2),
    ...payload,
  ]);
  return bytes([0xff, 0xd8], body, [0xff, 0xda, 0, 2, 0xff, 0xd9]);
}
const sof = (height: number, width: number): number[] => [
  8,
  ...u16be(height),
  ...u16be(width),
  3,
  1,
  0x22,
  0,
];

describe('pngSize', () => {
  it('reads IHDR', () => assert.deepEqual(pngSize(png(4000, 3)), { width: 4000, height: 3 }));
  it('refuses a bad signature, a missing IHDR, zero sizes and short input', () => {
    const bad = png(10, 10);
    bad[1] = 0;
    assert.equal(pngSize(bad), null);
    const noIhdr = png(10, 10);
    noIhdr[12] = 0x78;
    assert.equal(pngSize(noIhdr), null);
    assert.equal(pngSize(png(0, 10)), null);
    assert.equal(pngSize(png(10, 10).subarray(0, 20)), null);
  });
});

describe('jpegSize', () => {
  const size = (data: Uint8Array): Promise<unknown> => jpegSize(bufferReader(data));
  it('baseline SOF0 after APP0', async () => {
    assert.deepEqual(
      await size(jpeg([0xe0, [...'JFIF'].map((c) => c.charCodeAt(0))], [0xc0, sof(480, 640)])),
      {
        width: 640,
        height: 480,
      },
    );
  });
  it('progressive SOF2 after a large EXIF segment, DQT and DHT', async () => {
    const exif = new Array<number>(60_000).fill(0x11);
    const data = jpeg(
      [0xe1, exif],
      [0xdb, new Array(65).fill(1)],
      [0xc4, new Array(30).fill(2)],
      [0xc2, sof(1080, 1920)],
    );
    assert.deepEqual(await size(data), { width: 1920, height: 1080 });
  });
  it('skips fill bytes before a marker and does not take DHT (c4) or DAC (cc) for a frame', async () => {
    const data = jpeg([0xc4, [0, 0, 0, 0, 0, 0, 0]], [0xcc, [0, 0, 0, 0, 0, 0, 0]]);
    assert.equal(await size(data), null);
    const filled = bytes([0xff, 0xd8, 0xff, 0xff, 0xff, 0xc1], u16be(17), sof(7, 9), new Array(8).fill(0));
    assert.deepEqual(await size(filled), { width: 9, height: 7 });
  });
  it('refuses non-JPEG, truncated input and scan data before any frame header', async () => {
    assert.equal(await size(png(1, 1)), null);
    assert.equal(await size(jpeg([0xc0, sof(480, 640)]).subarray(0, 8)), null);
    assert.equal(await size(jpeg([0xe0, [1, 2, 3]])), null);
    assert.equal(await size(bytes([0xff, 0xd8, 0x00, 0x00])), null);
    assert.equal(await size(jpeg([0xc0, sof(0, 640)])), null);
  });
});

describe('webpSize', () => {
  const riff = (chunk: string, payload: number[]): Uint8Array =>
    bytes(
      'RIFF',
      u32le(4 + 8 + payload.length),
      'WEBP',
      chunk,
      u32le(payload.length),
      payload,
      new Array(8).fill(0),
    );
  it('VP8 (lossy key frame)', () => {
    const payload = [0x9d, 0x01, 0x2a].map((x) => x);
    const data = riff('VP8 ', [0, 0, 0, ...payload, 0x20, 0x03 | 0x40, 0x58, 0x02]); // 800 (scale bits set), 600
    assert.deepEqual(webpSize(data), { width: 800, height: 600 });
  });
  it('VP8L (lossless)', () => {
    const bits = (1023 - 1) | ((767 - 1) << 14);
    assert.deepEqual(webpSize(riff('VP8L', [0x2f, ...u32le(bits)])), { width: 1023, height: 767 });
  });
  it('VP8X (extended canvas, 24-bit sizes)', () => {
    const w = 16383 + 100 - 1;
    const h = 3 - 1;
    const data = riff('VP8X', [0x10, 0, 0, 0, w & 0xff, (w >> 8) & 0xff, w >> 16, h & 0xff, 0, 0]);
    assert.deepEqual(webpSize(data), { width: 16483, height: 3 });
  });
  it('refuses other RIFF files, bad start codes and short input', () => {
    assert.equal(webpSize(bytes('RIFF', u32le(100), 'WAVEfmt ', new Array(20).fill(0))), null);
    assert.equal(webpSize(riff('VP8 ', [0, 0, 0, 1, 2, 3, 1, 0, 1, 0])), null);
    assert.equal(webpSize(riff('VP8L', [0x2e, 0, 0, 0, 0])), null);
    assert.equal(webpSize(bytes('RIFF', u32le(4), 'WEBP')), null);
  });
  it('the fixtures produce each of the three layouts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'media-webp-'));
    try {
      for (const [variant, chunk] of [
        ['lossy', 'VP8 '],
        ['lossless', 'VP8L'],
        ['alpha', 'VP8X'],
      ] as const) {
        const data = await readFile(await makeWebp(dir, 21, 13, variant));
        assert.equal(data.subarray(12, 16).toString('latin1'), chunk);
        assert.deepEqual(webpSize(data), { width: 21, height: 13 });
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
