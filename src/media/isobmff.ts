/**
 * Minimal ISO base media (MP4, MOV, M4A) reader: finds the `moov` box wherever it sits (seeking over
 * `mdat` by box sizes), then reads the movie duration from `mvhd` and the first video track's size
 * from its `tkhd` (a track whose `mdia/hdlr` handler is `vide`). Used when music-metadata leaves a
 * gap (video-only MP4 has no format duration; MOV tracks carry no video size there).
 */
import type { ByteReader } from './image-size.ts';

export interface MovieInfo {
  /** Movie duration from `mvhd` (seconds); absent when zero (fragmented files). */
  durationSeconds?: number;
  /** Presentation size of the first video track from `tkhd` (pixels). */
  width?: number;
  height?: number;
  /**
   * Length of the first video track from its `mdia/mdhd` (seconds): the video's own, where the movie's
   * also counts a sound track's encoder delay (an AAC track of a "5 s" file of ffmpeg runs 5.023 s).
   */
  videoSeconds?: number;
}

/** Largest `moov` box read into memory (bytes); real ones are a few hundred kilobytes at most. */
const MAX_MOOV_BYTES = 32 * 1024 * 1024;
/** Most top-level boxes walked while looking for `moov`. */
const MAX_TOP_BOXES = 10_000;
/**
 * Most boxes walked inside one `moov`, all levels together; real ones hold a few dozen. Without it a
 * 32 MB `moov` of 8-byte boxes blocked the event loop 2.6–3.7 s.
 */
export const MAX_MOOV_BOXES = 10_000;

interface Box {
  type: string;
  /** Offset of the box's content (after the header). */
  start: number;
  /** Offset just past the box. */
  end: number;
}

function fourcc(bytes: Uint8Array, offset: number): string {
  return String.fromCharCode(...bytes.subarray(offset, offset + 4));
}

function dataView(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Box header at `offset` of `bytes` (whole box must lie before `limit`), or null. */
function boxAt(bytes: Uint8Array, offset: number, limit: number): Box | null {
  if (offset + 8 > limit) return null;
  const data = dataView(bytes);
  let size = data.getUint32(offset);
  let header = 8;
  if (size === 1) {
    if (offset + 16 > limit) return null;
    size = Number(data.getBigUint64(offset + 8));
    header = 16;
  } else if (size === 0) {
    size = limit - offset;
  }
  if (size < header || offset + size > limit) return null;
  return { type: fourcc(bytes, offset + 4), start: offset + header, end: offset + size };
}

/** Boxes a walk may still visit (`MAX_MOOV_BOXES` at its start). */
interface Budget {
  boxes: number;
}

/** Child boxes of the range [start, end) of `bytes`, while the budget lasts. */
function* children(bytes: Uint8Array, start: number, end: number, budget: Budget): Generator<Box> {
  for (let offset = start; budget.boxes > 0; ) {
    const box = boxAt(bytes, offset, end);
    if (!box) return;
    budget.boxes -= 1;
    yield box;
    offset = box.end;
  }
}

function child(bytes: Uint8Array, parent: Box, type: string, budget: Budget): Box | undefined {
  for (const box of children(bytes, parent.start, parent.end, budget)) if (box.type === type) return box;
  return undefined;
}

/** Locates the top-level `moov` box and reads it, or null. `fileSize` bounds the walk (bytes). */
async function readMoov(read: ByteReader, fileSize: number): Promise<Uint8Array | null> {
  let offset = 0;
  for (let count = 0; count < MAX_TOP_BOXES && offset + 8 <= fileSize; count++) {
    const header = await read(offset, 16);
    const data = dataView(header);
    if (header.length < 8) return null;
    let size = data.getUint32(0);
    let headerSize = 8;
    if (size === 1) {
      if (header.length < 16) return null;
      size = Number(data.getBigUint64(8));
      headerSize = 16;
    } else if (size === 0) {
      size = fileSize - offset;
    }
    if (size < headerSize) return null;
    if (fourcc(header, 4) === 'moov') {
      if (size > MAX_MOOV_BYTES) return null;
      const moov = await read(offset, size);
      return moov.length === size ? moov : null;
    }
    offset += size;
  }
  return null;
}

/** Duration of an `mvhd` or `mdhd` box (the two lay out timescale and duration alike), in seconds. */
function mvhdDuration(bytes: Uint8Array, box: Box): number | undefined {
  const data = dataView(bytes);
  const version = bytes[box.start];
  const need = version === 1 ? 32 : 20;
  if (box.end - box.start < need) return undefined;
  const timescale = data.getUint32(box.start + (version === 1 ? 20 : 12));
  const duration = version === 1 ? Number(data.getBigUint64(box.start + 24)) : data.getUint32(box.start + 16);
  if (timescale === 0 || duration === 0 || duration === 0xffffffff) return undefined;
  return duration / timescale;
}

function tkhdSize(bytes: Uint8Array, box: Box): { width: number; height: number } | undefined {
  const offset = box.start + (bytes[box.start] === 1 ? 88 : 76);
  if (offset + 8 > box.end) return undefined;
  const data = dataView(bytes);
  // 16.16 fixed point
  const width = Math.round(data.getUint32(offset) / 65536);
  const height = Math.round(data.getUint32(offset + 4) / 65536);
  return width > 0 && height > 0 ? { width, height } : undefined;
}

function handlerType(bytes: Uint8Array, trak: Box, budget: Budget): string | undefined {
  const mdia = child(bytes, trak, 'mdia', budget);
  const hdlr = mdia && child(bytes, mdia, 'hdlr', budget);
  return hdlr && hdlr.end - hdlr.start >= 12 ? fourcc(bytes, hdlr.start + 8) : undefined;
}

/** Movie duration and first video track's size and length of an ISO base media file, from its `moov` box. */
export async function readMovieInfo(read: ByteReader, fileSize: number): Promise<MovieInfo> {
  const moov = await readMoov(read, fileSize);
  if (!moov) return {};
  const root = boxAt(moov, 0, moov.length);
  if (!root) return {};
  const info: MovieInfo = {};
  const budget: Budget = { boxes: MAX_MOOV_BOXES };
  for (const box of children(moov, root.start, root.end, budget)) {
    if (box.type === 'mvhd') {
      const duration = mvhdDuration(moov, box);
      if (duration !== undefined) info.durationSeconds = duration;
    } else if (box.type === 'trak' && info.width === undefined && handlerType(moov, box, budget) === 'vide') {
      const tkhd = child(moov, box, 'tkhd', budget);
      const size = tkhd && tkhdSize(moov, tkhd);
      if (size) Object.assign(info, size);
      const mdia = child(moov, box, 'mdia', budget);
      const mdhd = mdia && child(moov, mdia, 'mdhd', budget);
      const seconds = mdhd && mvhdDuration(moov, mdhd);
      if (seconds) info.videoSeconds = seconds;
    }
  }
  return info;
}
