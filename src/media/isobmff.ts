/**
 * Minimal ISO base media (MP4, MOV, M4A) reader: finds the `moov` box wherever it sits (seeking over
 * `mdat` by box sizes), then reads the movie duration from `mvhd`, the first video track's size from its
 * `tkhd` (a track whose `mdia/hdlr` handler is `vide`) and the lengths of the first video and sound
 * tracks. Used when music-metadata leaves a gap (video-only MP4 has no format duration; MOV tracks carry
 * no video size there), and for the tracks' lengths, which header fields alone may understate.
 */
import type { ByteReader } from './image-size.ts';

export interface MovieInfo {
  /** Movie duration from `mvhd` (seconds); absent when zero (fragmented files). */
  durationSeconds?: number;
  /** Presentation size of the first video track from `tkhd` (pixels). */
  width?: number;
  height?: number;
  /**
   * Length of the first video track (seconds): the video's own, where the movie's also counts a sound
   * track's encoder delay (an AAC track of a "5 s" file of ffmpeg runs 5.023 s). See `trackSeconds`;
   * null when its sample table is too long to measure, so its length cannot be trusted.
   */
  videoSeconds?: number | null;
  /** Length of the first sound track (seconds), as `videoSeconds`. */
  soundSeconds?: number | null;
  /**
   * The `moov` has an `mvex`: the movie goes on in fragments (`moof`) after it, which its durations and
   * sample tables do not count, so none of the lengths above is given.
   */
  fragmented?: true;
  /** The movie has a sound track and no video track: a sound file in an MP4 or MOV container. */
  soundOnly?: true;
}

/**
 * Most entries of a `stts` or `elst` box read (about 5 ms on the event loop): real ones hold a handful, one
 * per change of frame rate, and at most one per sample (a variable frame rate: 1,000,000 is 9 hours at
 * 30 frames a second).
 */
const MAX_TABLE_ENTRIES = 1_000_000;

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

/** Timescale of an `mvhd` or `mdhd` box (units a second), or undefined. */
function timescaleOf(bytes: Uint8Array, box: Box): number | undefined {
  const version = bytes[box.start];
  const offset = box.start + (version === 1 ? 20 : 12);
  if (offset + 4 > box.end) return undefined;
  return dataView(bytes).getUint32(offset) || undefined;
}

/** The box at `path` below `parent`, one child type per level. */
function descendant(
  bytes: Uint8Array,
  parent: Box,
  path: readonly string[],
  budget: Budget,
): Box | undefined {
  let box: Box | undefined = parent;
  for (const type of path) box = box && child(bytes, box, type, budget);
  return box;
}

/**
 * Units of time the samples of a track's `stts` last together (sample count × delta, summed); null when
 * the table is longer than `MAX_TABLE_ENTRIES` (a file that long cannot be measured, and the entries past
 * the bound could hold every sample), undefined when there is none.
 */
function sampleTableDuration(bytes: Uint8Array, stts: Box): number | null | undefined {
  if (stts.end - stts.start < 8) return undefined;
  const data = dataView(bytes);
  const entries = Math.min(data.getUint32(stts.start + 4), Math.floor((stts.end - stts.start - 8) / 8));
  if (entries > MAX_TABLE_ENTRIES) return null;
  let total = 0;
  for (let i = 0; i < entries; i++) {
    const at = stts.start + 8 + i * 8;
    total += data.getUint32(at) * data.getUint32(at + 4);
  }
  return total;
}

/** Seconds an `elst` presents of its track (its edits that show media, summed), or undefined. */
function editListSeconds(bytes: Uint8Array, elst: Box, movieTimescale: number): number | undefined {
  const data = dataView(bytes);
  const version = bytes[elst.start];
  const entrySize = version === 1 ? 20 : 12;
  if (elst.end - elst.start < 8) return undefined;
  const entries = Math.min(
    data.getUint32(elst.start + 4),
    Math.floor((elst.end - elst.start - 8) / entrySize),
    MAX_TABLE_ENTRIES,
  );
  let total = 0;
  let shown = false;
  for (let i = 0; i < entries; i++) {
    const at = elst.start + 8 + i * entrySize;
    const segment = version === 1 ? Number(data.getBigUint64(at)) : data.getUint32(at);
    const mediaTime = version === 1 ? Number(data.getBigInt64(at + 8)) : data.getInt32(at + 4);
    // An empty edit (media time -1) delays the track and shows none of its samples.
    if (mediaTime === -1) continue;
    total += segment;
    shown = true;
  }
  return shown ? total / movieTimescale : undefined;
}

/**
 * Length of a track (seconds). `mdhd`'s duration is a header field the sender writes, which players do
 * not go by: they play the samples of the sample table (`stts`), cut by the edit list (`elst`) when there
 * is one. So a track with an edit list is as long as the samples it presents: ffmpeg's AAC track of an
 * 8-minute M4A, whose samples and `mdhd` also count the encoder's delay (480.023 s), reads 480 s, as
 * players show it. Without one the length is the longer of `mdhd`'s claim and what the samples play: a
 * file whose headers understate its length (a 9 s clip whose `mdhd`, `tkhd` and `mvhd` say 3 s, which
 * ffmpeg decodes whole) is not priced or bounded as a short one, and honest files read as they always
 * did. Null when the sample table is too long to measure: such a track has no length we can trust.
 */
function trackSeconds(
  bytes: Uint8Array,
  trak: Box,
  movieTimescale: number | undefined,
  budget: Budget,
): number | null | undefined {
  const mdhd = descendant(bytes, trak, ['mdia', 'mdhd'], budget);
  const claimed = mdhd && mvhdDuration(bytes, mdhd);
  const timescale = mdhd && timescaleOf(bytes, mdhd);
  const stts = descendant(bytes, trak, ['mdia', 'minf', 'stbl', 'stts'], budget);
  const units = stts && sampleTableDuration(bytes, stts);
  if (units === null) return null;
  const played = timescale && units ? units / timescale : undefined;
  const elst = movieTimescale && descendant(bytes, trak, ['edts', 'elst'], budget);
  const edited = elst && movieTimescale ? editListSeconds(bytes, elst, movieTimescale) : undefined;
  if (played !== undefined && edited !== undefined && edited > 0) return Math.min(played, edited);
  const seconds = Math.max(claimed ?? 0, played ?? 0);
  return seconds > 0 ? seconds : undefined;
}

/**
 * Movie duration, the first video track's size and the lengths of the first video and sound tracks of an
 * ISO base media file, from its `moov` box.
 */
export async function readMovieInfo(read: ByteReader, fileSize: number): Promise<MovieInfo> {
  const moov = await readMoov(read, fileSize);
  if (!moov) return {};
  const root = boxAt(moov, 0, moov.length);
  if (!root) return {};
  const info: MovieInfo = {};
  const budget: Budget = { boxes: MAX_MOOV_BOXES };
  let movieTimescale: number | undefined;
  // The tracks' lengths need the movie's timescale (their edit lists count in it), which `mvhd` may give
  // after them: they are read once the walk is done.
  let video: Box | undefined;
  let sound: Box | undefined;
  for (const box of children(moov, root.start, root.end, budget)) {
    if (box.type === 'mvex') info.fragmented = true;
    else if (box.type === 'mvhd') {
      const duration = mvhdDuration(moov, box);
      if (duration !== undefined) info.durationSeconds = duration;
      movieTimescale = timescaleOf(moov, box);
    } else if (box.type === 'trak' && (video === undefined || sound === undefined)) {
      const handler = handlerType(moov, box, budget);
      if (handler === 'vide' && video === undefined) {
        video = box;
        const tkhd = child(moov, box, 'tkhd', budget);
        const size = tkhd && tkhdSize(moov, tkhd);
        if (size) Object.assign(info, size);
      } else if (handler === 'soun' && sound === undefined) sound = box;
    }
  }
  if (sound !== undefined && video === undefined) info.soundOnly = true;
  // A fragmented movie's `moov` describes at most its first fragment: a 9 s clip of ffmpeg's
  // `frag_keyframe` read 1 s. Its length is left to a reader that walks the fragments.
  if (info.fragmented) {
    delete info.durationSeconds;
    return info;
  }
  const videoSeconds = video && trackSeconds(moov, video, movieTimescale, budget);
  if (videoSeconds !== undefined) info.videoSeconds = videoSeconds;
  const soundSeconds = sound && trackSeconds(moov, sound, movieTimescale, budget);
  if (soundSeconds !== undefined) info.soundSeconds = soundSeconds;
  return info;
}
