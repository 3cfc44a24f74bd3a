import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { box } from './fixtures.ts';
import { bufferReader } from './image-size.ts';
import { MAX_MOOV_BOXES, readMovieInfo } from './isobmff.ts';

const u32 = (value: number): Buffer =>
  Buffer.from([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255]);
const ftyp = box('ftyp', Buffer.from('isom'), u32(512), Buffer.from('isommp41'));

/** `mvhd` of version 0 (32-bit times) or 1 (64-bit), `seconds` long at 600 units a second. */
function mvhd(version: 0 | 1, seconds: number): Buffer {
  const duration = seconds * 600;
  const times =
    version === 0
      ? [u32(0), u32(0), u32(600), u32(duration)]
      : [Buffer.alloc(16), u32(600), u32(0), u32(duration)];
  return box('mvhd', Buffer.from([version, 0, 0, 0]), ...times, Buffer.alloc(80));
}

/** A video `trak` whose `tkhd` (version 0) says `width`×`height`. */
function videoTrak(width: number, height: number): Buffer {
  const tkhd = box('tkhd', Buffer.alloc(4 + 72), u32(width << 16), u32(height << 16));
  const hdlr = box('hdlr', Buffer.alloc(8), Buffer.from('vide'), Buffer.alloc(13));
  return box('trak', tkhd, box('mdia', hdlr));
}

/** `count` empty `free` boxes, 8 bytes each. */
function frees(count: number): Buffer {
  return Buffer.alloc(count * 8).fill(box('free'));
}

async function info(file: Buffer): Promise<unknown> {
  return readMovieInfo(bufferReader(file), file.length);
}

describe('readMovieInfo', () => {
  it('reads mvhd of version 0 and 1, and the video tkhd', async () => {
    const v0 = Buffer.concat([ftyp, box('moov', mvhd(0, 3), videoTrak(640, 360))]);
    assert.deepEqual(await info(v0), { durationSeconds: 3, width: 640, height: 360 });
    const v1 = Buffer.concat([ftyp, box('moov', mvhd(1, 7), videoTrak(32, 24))]);
    assert.deepEqual(await info(v1), { durationSeconds: 7, width: 32, height: 24 });
  });

  it('finds moov at the end, behind an mdat with a 64-bit size', async () => {
    const media = Buffer.alloc(4096);
    const mdat = Buffer.concat([u32(1), Buffer.from('mdat'), u32(0), u32(16 + media.length), media]);
    const file = Buffer.concat([ftyp, mdat, box('moov', mvhd(0, 2))]);
    assert.deepEqual(await info(file), { durationSeconds: 2 });
  });

  it('walks a bounded number of boxes inside moov', async () => {
    const within = Buffer.concat([ftyp, box('moov', frees(MAX_MOOV_BOXES - 1), mvhd(0, 4))]);
    assert.deepEqual(await info(within), { durationSeconds: 4 });
    // Four million boxes: the walk stops at the bound and never reaches the mvhd behind them.
    const beyond = Buffer.concat([ftyp, box('moov', frees(4_000_000), mvhd(0, 4))]);
    assert.deepEqual(await info(beyond), {});
    // The bound counts the boxes of every level: a trak stuffed with boxes uses it up too.
    const stuffed = box('trak', frees(MAX_MOOV_BOXES), videoTrak(64, 48).subarray(8));
    const deep = Buffer.concat([ftyp, box('moov', stuffed, mvhd(0, 4))]);
    assert.deepEqual(await info(deep), {});
  });
});
