/**
 * Probing of an accepted file (after `sniffFormat`): length of audio and video (seconds) and size of
 * pictures and video frames (pixels), the facts pricing and per-field rules need.
 *
 * Order of sources, each filling only what the previous left out:
 * 1. pictures: our own header parsers (`image-size.ts`); nothing else.
 * 2. audio and video: music-metadata (`duration: true`, so MP3/ADTS without headers are counted
 *    frame by frame). For video the length is the longest of the container and track durations.
 * 3. MP4/MOV/M4A: the `moov` box (`mvhd` duration, video `tkhd` size) read by `isobmff.ts`.
 * 4. The bundled ffmpeg's `-i` report (`Duration:` and the first `Video:` stream's size), last,
 *    because it runs a large decoder on untrusted input.
 * A fact no source can read is left out; the caller decides what a missing length means.
 */
import { execFile } from 'node:child_process';
import { open } from 'node:fs/promises';
import ffmpeg from '@ffmpeg-installer/ffmpeg';
import { parseFile } from 'music-metadata';
import type { MediaFormat } from '../catalog/model-spec.ts';
import { type ByteReader, IMAGE_HEAD_BYTES, jpegSize, pngSize, webpSize } from './image-size.ts';
import { readMovieInfo } from './isobmff.ts';
import { kindOf, SNIFF_BYTES, type SniffResult, sniffFormat } from './sniff.ts';

export interface ProbeResult {
  /** Length of audio and video (seconds). */
  durationSeconds?: number;
  /** Picture or video frame size (pixels). */
  width?: number;
  height?: number;
}

/** Longest time the ffmpeg fallback may run (milliseconds). */
const FFMPEG_TIMEOUT_MS = 15_000;

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

function positive(value: number | undefined): number | undefined {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : undefined;
}

async function fromMusicMetadata(path: string, isVideo: boolean): Promise<ProbeResult> {
  try {
    const { format } = await parseFile(path, { duration: true, skipCovers: true });
    const result: ProbeResult = {};
    const trackDurations = format.trackInfo.map((track) => positive(track.duration) ?? 0);
    const duration = isVideo
      ? positive(Math.max(format.duration ?? 0, ...trackDurations))
      : (positive(format.duration) ?? positive(Math.max(0, ...trackDurations)));
    if (duration !== undefined) result.durationSeconds = duration;
    const video = format.trackInfo.find((track) => track.video?.pixelWidth && track.video.pixelHeight)?.video;
    if (isVideo && video?.pixelWidth && video.pixelHeight) {
      result.width = video.pixelWidth;
      result.height = video.pixelHeight;
    }
    return result;
  } catch {
    return {};
  }
}

/** Parses ffmpeg's `-i` report: `Duration: hh:mm:ss.xx` and the first `Video:` stream's `WxH`. */
export function parseFfmpegReport(stderr: string): ProbeResult {
  const result: ProbeResult = {};
  const duration = /Duration:\s*(\d+):(\d{2}):(\d{2}(?:\.\d+)?)/.exec(stderr);
  if (duration) {
    const seconds = Number(duration[1]) * 3600 + Number(duration[2]) * 60 + Number(duration[3]);
    if (seconds > 0) result.durationSeconds = seconds;
  }
  const videoLine = /Stream #[^\n]*?Video:([^\n]*)/.exec(stderr)?.[1];
  // A size is a standalone `WxH` token; codec tags like `0x31637661` must not match.
  const size = videoLine && /(?:^|[\s,])([1-9]\d{0,4})x([1-9]\d{0,4})(?=[\s,[]|$)/.exec(videoLine);
  if (size) {
    result.width = Number(size[1]);
    result.height = Number(size[2]);
  }
  return result;
}

/** The demuxer for each sniffed format, so ffmpeg never guesses on its own from untrusted content. */
const DEMUXERS: Partial<Record<MediaFormat, string>> = {
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
 * Runs the bundled ffmpeg with `-i path` only (no output) and parses its report.
 * Security: the demuxer is the one of the sniffed format and only local files may be opened, so a file
 * that is really a playlist cannot make ffmpeg fetch anything.
 */
export function probeWithFfmpeg(path: string, format: MediaFormat): Promise<ProbeResult> {
  const demuxer = DEMUXERS[format];
  return new Promise((resolve) => {
    execFile(
      ffmpeg.path,
      [
        '-hide_banner',
        '-nostdin',
        '-protocol_whitelist',
        'file',
        ...(demuxer ? ['-f', demuxer] : []),
        '-i',
        path,
      ],
      { timeout: FFMPEG_TIMEOUT_MS, maxBuffer: 1024 * 1024 },
      // ffmpeg exits with an error when no output is given; the report is on stderr either way.
      (_error, _stdout, stderr) => resolve(parseFfmpegReport(String(stderr))),
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

/**
 * Length (seconds) of audio and video and size (pixels) of pictures and video frames of the file at
 * `path`, whose content `sniffFormat` recognised as `format`. Facts that cannot be read are absent.
 */
export async function probeFile(path: string, format: MediaFormat): Promise<ProbeResult> {
  if (format === 'jpeg' || format === 'png' || format === 'webp') return probePicture(path, format);
  const isVideo = kindOf(format) === 'video';
  const result = await fromMusicMetadata(path, isVideo);
  if (missing(result, isVideo) && (format === 'mp4' || format === 'mov' || format === 'm4a')) {
    fill(result, await withReader(path, readMovieInfo).catch(() => ({})), isVideo);
  }
  if (missing(result, isVideo)) fill(result, await probeWithFfmpeg(path, format), isVideo);
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
  const sniffed = await sniffFormat(head);
  if (!sniffed) return null;
  const probed = await probeFile(path, sniffed.format).catch((): ProbeResult => ({}));
  return { ...sniffed, ...probed };
}
