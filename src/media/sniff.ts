/**
 * Content sniffing (CONTRACT §6: accepted types are recognised by content, never by name or by the
 * declared Content-Type). Detection is `file-type`'s; this module only maps its answer onto our
 * `MediaFormat`s and refuses everything else.
 *
 * ISO base media files (MP4 family) are told apart by the `ftyp` box alone, so the answer never
 * depends on where the `moov` box sits:
 * - major brand `M4A ` / `M4B ` / `F4A ` / `F4B ` (iTunes, ffmpeg's `ipod` muxer, Apple Voice Memos) → `m4a`;
 * - major brand `qt  ` (and the older `moov`/`mdat`/`wide`/`free`-first QuickTime layouts) → `mov`;
 * - any other brand (`isom`, `mp41`, `mp42`, `M4V `, `dash`, ...) → `mp4`, except that a file whose
 *   compatible brands name `M4A ` and no video brand is `m4a`.
 * An audio-only MP4 written with a generic brand (`isom`) is therefore `mp4` here; `inspectFile` (probe.ts),
 * which reads its `moov`, then takes a movie with a sound track and no video track for the `m4a` it is.
 */
import { fileTypeFromBuffer } from 'file-type';
import type { MediaFormat } from '../catalog/index.ts';

/** Bytes of the file's start that `sniffFormat` needs: file-type's detection window (4100 bytes). */
export const SNIFF_BYTES = 4100;

export type MediaKind = 'image' | 'audio' | 'video';

/** A recognised format and the Content-Type the service stores and serves for it. */
export interface SniffResult {
  format: MediaFormat;
  contentType: string;
}

const CONTENT_TYPES: Readonly<Record<MediaFormat, string>> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  m4a: 'audio/mp4',
  flac: 'audio/flac',
  aac: 'audio/aac',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
};

const KINDS: Readonly<Record<MediaFormat, MediaKind>> = {
  jpeg: 'image',
  png: 'image',
  webp: 'image',
  mp3: 'audio',
  wav: 'audio',
  ogg: 'audio',
  m4a: 'audio',
  flac: 'audio',
  aac: 'audio',
  mp4: 'video',
  mov: 'video',
};

/** file-type extensions that map onto one of our formats; everything else is refused. */
const BY_EXT: Readonly<Record<string, MediaFormat>> = {
  jpg: 'jpeg',
  png: 'png',
  apng: 'png', // animated PNG is a valid PNG (first frame), same parser
  webp: 'webp',
  mp3: 'mp3',
  wav: 'wav',
  ogg: 'ogg', // Vorbis
  oga: 'ogg', // FLAC in Ogg
  opus: 'ogg', // Opus in Ogg
  spx: 'ogg', // Speex in Ogg
  m4a: 'm4a',
  m4b: 'm4a',
  f4a: 'm4a',
  f4b: 'm4a',
  flac: 'flac',
  aac: 'aac', // ADTS
  mp4: 'mp4',
  m4v: 'mp4',
  f4v: 'mp4',
  mov: 'mov',
};

/** All formats, for callers that validate lists of accepted formats. */
export const MEDIA_FORMATS: readonly MediaFormat[] = Object.keys(KINDS) as MediaFormat[];

/** Whether a file is a picture, a sound or a video. */
export function kindOf(format: MediaFormat): MediaKind {
  return KINDS[format];
}

/** The Content-Type for a format (the one `sniffFormat` reports). */
export function contentTypeOf(format: MediaFormat): string {
  return CONTENT_TYPES[format];
}

/** Compatible brands of a leading `ftyp` box (4-character codes), empty when there is none. */
export function ftypBrands(head: Uint8Array): string[] {
  if (head.length < 16 || latin1(head, 4, 4) !== 'ftyp') return [];
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const size = Math.min(view.getUint32(0), head.length);
  const brands: string[] = [];
  for (let offset = 16; offset + 4 <= size; offset += 4) brands.push(latin1(head, offset, 4));
  return brands;
}

const VIDEO_BRANDS = new Set(['avc1', 'M4V ', 'M4VH', 'M4VP', 'qt  ', 'hvc1', 'hev1', 'av01', 'mp42']);

function latin1(bytes: Uint8Array, offset: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(offset, offset + length));
}

/**
 * Recognises an accepted media format from the first bytes of a file (give at least `SNIFF_BYTES`
 * bytes, or the whole file when shorter). Returns null for anything not accepted.
 */
export async function sniffFormat(head: Uint8Array): Promise<SniffResult | null> {
  if (head.length === 0) return null;
  const detected = await fileTypeFromBuffer(head.subarray(0, SNIFF_BYTES));
  if (!detected) return null;
  let format = BY_EXT[detected.ext];
  if (!format) return null;
  if (format === 'mp4') {
    const brands = ftypBrands(head);
    if (brands.includes('M4A ') && !brands.some((brand) => VIDEO_BRANDS.has(brand))) format = 'm4a';
  }
  return { format, contentType: CONTENT_TYPES[format] };
}
