/**
 * Probing of an accepted file (after `sniffFormat`): length of audio and video (seconds) and size of
 * pictures and video frames (pixels), the facts pricing and per-field rules need.
 *
 * Order of sources, each filling only what the previous left out:
 * 1. pictures: our own header parsers (`image-size.ts`); nothing else.
 * 2. MP3: its frames counted (`mp3-frames.ts`), less the encoder's padding its LAME tag states; the
 *    headers' claim is never asked for. FLAC: its last whole frame (`flac-frames.ts`), never STREAMINFO's
 *    total.
 *    Other audio and video: music-metadata (`duration: true`, so ADTS without headers is counted frame
 *    by frame), in a worker thread with a time limit (`probe-pool.ts`). For video the length is the
 *    longest of the container and track durations.
 * 3. MP4/MOV/M4A: the `moov` box (`mvhd` duration, video `tkhd` size) read by `isobmff.ts`, and the
 *    length of the video track (of the sound track for a file without one), never less than its samples
 *    play, whatever the headers claim. A fragmented movie's length is ffprobe's: its `moov` does not
 *    count the fragments.
 * 4. The bundled ffprobe's JSON report (the container's duration and the first video stream's size),
 *    last, because it runs a large demuxer on untrusted input.
 * A fact no source can read is left out; the caller decides what a missing length means.
 */
import { execFile } from 'node:child_process';
import { open } from 'node:fs/promises';
import ffprobe from '@ffprobe-installer/ffprobe';
import type { MediaFormat } from '../catalog/index.ts';
import { countFlacSeconds } from './flac-frames.ts';
import { type ByteReader, IMAGE_HEAD_BYTES, jpegSize, pngSize, webpSize } from './image-size.ts';
import { type MovieInfo, readMovieInfo } from './isobmff.ts';
import { countMp3Seconds } from './mp3-frames.ts';
import { ProbePool } from './probe-pool.ts';
import { contentTypeOf, kindOf, SNIFF_BYTES, type SniffResult, sniffFormat } from './sniff.ts';

export interface ProbeResult {
  /** Length of audio and video (seconds). */
  durationSeconds?: number;
  /** Picture or video frame size (pixels). */
  width?: number;
  height?: number;
}

/** Longest time the ffprobe fallback may run (milliseconds). */
const FFPROBE_TIMEOUT_MS = 15_000;

/** Runs `body` with a ByteReader over the file at `path`, closing the file afterwards. */
async function withReader<T>(path: string, body: (read: ByteReader, size: number) => Promise<T>): Promise<T> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const read: ByteReader = async (offset, length) => {
      const buffer = new Uint8Array(Math.max(0, Math.min(length, size - offset)));
      if (buffer.length === 0) return buffer;
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
      return buffer.subarray(0, bytesRead);
    };
    return await body(read, size);
  } finally {
    await handle.close();
  }
}

async function probePicture(path: string, format: 'jpeg' | 'png' | 'webp'): Promise<ProbeResult> {
  const size = await withReader(path, async (read) => {
    if (format === 'jpeg') return jpegSize(read);
    const head = await read(0, IMAGE_HEAD_BYTES);
    return format === 'png' ? pngSize(head) : webpSize(head);
  });
  return size ?? {};
}

let shared: ProbePool | undefined;

/** The process's one probe pool, made on first use (it starts no thread before a probe). */
function sharedPool(): ProbePool {
  shared ??= new ProbePool();
  return shared;
}

function positive(value: number | undefined): number | undefined {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : undefined;
}

/** The part of ffprobe's JSON report that is read (`-show_entries`, below). */
interface FfprobeReport {
  format?: { duration?: string };
  streams?: ReadonlyArray<{ codec_type?: string; width?: number; height?: number }>;
}

/** Reads ffprobe's JSON report: the container's duration and the first video stream's size. */
export function parseFfprobeReport(json: string): ProbeResult {
  let report: FfprobeReport;
  try {
    report = (JSON.parse(json) ?? {}) as FfprobeReport;
  } catch {
    return {};
  }
  const result: ProbeResult = {};
  const seconds = positive(Number(report.format?.duration));
  if (seconds !== undefined) result.durationSeconds = seconds;
  const video = report.streams?.find((stream) => stream.codec_type === 'video');
  const width = positive(video?.width);
  const height = positive(video?.height);
  if (width !== undefined && height !== undefined) {
    result.width = width;
    result.height = height;
  }
  return result;
}

/** The demuxer for each sniffed format, so ffprobe never guesses on its own from untrusted content. */
const DEMUXERS: Record<Exclude<MediaFormat, 'jpeg' | 'png' | 'webp'>, string> = {
  mp3: 'mp3',
  wav: 'wav',
  ogg: 'ogg',
  flac: 'flac',
  aac: 'aac',
  m4a: 'mov',
  mp4: 'mov',
  mov: 'mov',
};

/**
 * Runs the bundled ffprobe on the file at `path` and reads its JSON report.
 * Security: the demuxer is the one of the sniffed format and the file protocol is the only one allowed,
 * so a file that is really a playlist cannot make ffprobe fetch anything.
 */
export function probeWithFfprobe(path: string, format: keyof typeof DEMUXERS): Promise<ProbeResult> {
  return new Promise((resolve) => {
    execFile(
      ffprobe.path,
      [
        '-v',
        'error',
        '-protocol_whitelist',
        'file',
        '-f',
        DEMUXERS[format],
        '-of',
        'json',
        '-show_entries',
        'format=duration:stream=codec_type,width,height',
        `file:${path}`,
      ],
      { timeout: FFPROBE_TIMEOUT_MS, maxBuffer: 1024 * 1024 },
      // A file ffprobe cannot read still prints what it found; an empty or cut report reads as nothing.
      (_error, stdout) => resolve(parseFfprobeReport(String(stdout))),
    );
  });
}

function missing(result: ProbeResult, isVideo: boolean): boolean {
  return result.durationSeconds === undefined || (isVideo && result.width === undefined);
}

function fill(result: ProbeResult, more: ProbeResult, isVideo: boolean): void {
  if (result.durationSeconds === undefined && more.durationSeconds !== undefined) {
    result.durationSeconds = more.durationSeconds;
  }
  if (isVideo && result.width === undefined && more.width !== undefined && more.height !== undefined) {
    result.width = more.width;
    result.height = more.height;
  }
}

/** The `moov` of an MP4, MOV or M4A file as `readMovieInfo` reads it; nothing when it cannot be read. */
function readMovieOf(path: string): Promise<MovieInfo> {
  return withReader(path, readMovieInfo).catch((): MovieInfo => ({}));
}

/**
 * Length (seconds) of audio and video and size (pixels) of pictures and video frames of the file at
 * `path`, whose content `sniffFormat` recognised as `format`. Facts that cannot be read are absent.
 * `pool` runs music-metadata (default: the process's shared pool); `movie`, the `moov` of an MP4, MOV or
 * M4A already read (`inspectFile`), so it is not read twice.
 */
export async function probeFile(
  path: string,
  format: MediaFormat,
  pool: ProbePool = sharedPool(),
  movie?: MovieInfo,
): Promise<ProbeResult> {
  if (format === 'jpeg' || format === 'png' || format === 'webp') return probePicture(path, format);
  const isVideo = kindOf(format) === 'video';
  // An MP3's header may claim fewer frames than it has, and header readers count the encoder's delay and
  // padding as audio (a "15 s" file of ffmpeg reads 15.05 s, past a 15 s bound): its frames are counted,
  // less the padding its LAME tag states, and that count is the file's length. music-metadata reads only
  // an MP3 with no frame found.
  if (format === 'mp3') {
    const counted = await withReader(path, countMp3Seconds).catch(() => undefined);
    if (counted !== undefined) return { durationSeconds: counted };
  }
  // A FLAC's STREAMINFO may claim less than its frames hold, as an MP3's header may: its last frame says
  // how long it is (`flac-frames.ts`). One with no whole frame near its end has no length to trust.
  if (format === 'flac') {
    const counted = await withReader(path, countFlacSeconds).catch(() => undefined);
    return counted === undefined ? {} : { durationSeconds: counted };
  }
  const result = await pool.probe(path, isVideo);
  if (format === 'mp4' || format === 'mov' || format === 'm4a') {
    // A video's length is its video track's, a sound file's its sound track's: the container's also counts
    // the AAC encoder's delay, so a "5 s" clip of ffmpeg with AAC sound read 5.023 s, past a 5 s bound, and
    // an 8-minute M4A 480.023 s. A track's length is what its samples play, cut by its edit list, whatever
    // its headers say (`isobmff.ts`, `trackSeconds`).
    movie ??= await readMovieOf(path);
    // music-metadata reads the same `moov`, so it too counts only a fragmented movie's first fragment:
    // ffprobe, which walks the fragments, gives the length.
    if (movie.fragmented) delete result.durationSeconds;
    const track = isVideo && movie.videoSeconds !== undefined ? movie.videoSeconds : movie.soundSeconds;
    // A track too long to measure has no length to trust: none is given, rather than the headers' claim.
    if (track === null) {
      const sized: ProbeResult = {};
      if (isVideo)
        fill(sized, { width: result.width ?? movie.width, height: result.height ?? movie.height }, true);
      return sized;
    }
    if (isVideo && movie.videoSeconds !== undefined) result.durationSeconds = track;
    else if (!isVideo && track !== undefined) result.durationSeconds = track;
    // A video whose video track has no length: never shorter than its sound.
    else if (track !== undefined) result.durationSeconds = Math.max(result.durationSeconds ?? 0, track);
    fill(result, movie, isVideo);
  }
  if (missing(result, isVideo)) fill(result, await probeWithFfprobe(path, format), isVideo);
  return result;
}

/**
 * Recognises a stored file by its first bytes and, when it is a medium we accept, probes it: the one
 * step behind uploads and URL inputs. Null when the content is no accepted format.
 */
export async function inspectFile(
  path: string,
  sizeBytes: number,
): Promise<(SniffResult & ProbeResult) | null> {
  const head = Buffer.alloc(Math.min(SNIFF_BYTES, sizeBytes));
  const handle = await open(path, 'r');
  try {
    await handle.read(head, 0, head.length, 0);
  } finally {
    await handle.close();
  }
  let sniffed = await sniffFormat(head);
  if (!sniffed) return null;
  let movie: MovieInfo | undefined;
  if (sniffed.format === 'mp4' || sniffed.format === 'mov') {
    // Sound without a picture is no video, whatever its brand says (an AAC track that ffmpeg wrote with
    // `isom`): it is the sound file an M4A is, refused where a video is wanted and taken where an M4A is.
    movie = await readMovieOf(path);
    if (movie.soundOnly) sniffed = { format: 'm4a', contentType: contentTypeOf('m4a') };
  }
  const probed = await probeFile(path, sniffed.format, undefined, movie).catch((): ProbeResult => ({}));
  return { ...sniffed, ...probed };
}
