/**
 * Picture dimensions read from the header bytes (pixels), without decoding: PNG `IHDR`, JPEG `SOFn`
 * and WebP `VP8 ` / `VP8L` / `VP8X`. Sizes are the stored ones; EXIF orientation is not applied.
 * Every parser returns null for malformed or truncated input rather than guessing.
 */

export interface PictureSize {
  width: number;
  height: number;
}

/** Reads `length` bytes at `offset` (fewer at the end of the file). */
export type ByteReader = (offset: number, length: number) => Promise<Uint8Array>;

/** Bytes of the file's start enough for `pngSize` and `webpSize`. */
export const IMAGE_HEAD_BYTES = 32;

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function ascii(bytes: Uint8Array, offset: number, text: string): boolean {
  if (offset + text.length > bytes.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[offset + i] !== text.charCodeAt(i)) return false;
  return true;
}

function valid(width: number, height: number): PictureSize | null {
  return width > 0 && height > 0 ? { width, height } : null;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** PNG: the `IHDR` chunk must come first, right after the 8-byte signature (big-endian u32 fields). */
export function pngSize(head: Uint8Array): PictureSize | null {
  if (head.length < 24 || PNG_SIGNATURE.some((byte, i) => head[i] !== byte) || !ascii(head, 12, 'IHDR')) {
    return null;
  }
  const data = view(head);
  return valid(data.getUint32(16), data.getUint32(20));
}

/** WebP: `RIFF....WEBP` then a `VP8 ` (lossy), `VP8L` (lossless) or `VP8X` (extended) chunk. */
export function webpSize(head: Uint8Array): PictureSize | null {
  if (head.length < 30 || !ascii(head, 0, 'RIFF') || !ascii(head, 8, 'WEBP')) return null;
  const data = view(head);
  if (ascii(head, 12, 'VP8 ')) {
    // Key frame: 3-byte frame tag, start code 9d 01 2a, then 14-bit width and height (2 scale bits).
    if (head[23] !== 0x9d || head[24] !== 0x01 || head[25] !== 0x2a) return null;
    return valid(data.getUint16(26, true) & 0x3fff, data.getUint16(28, true) & 0x3fff);
  }
  if (ascii(head, 12, 'VP8L')) {
    // Signature byte 0x2f, then 14 bits width-1 and 14 bits height-1, little-endian bit order.
    if (head[20] !== 0x2f) return null;
    const bits = data.getUint32(21, true);
    return valid((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (ascii(head, 12, 'VP8X')) {
    // Flags (1 byte) + 3 reserved, then 24-bit canvas width-1 and height-1, little-endian.
    const u24 = (offset: number): number =>
      head[offset]! | (head[offset + 1]! << 8) | (head[offset + 2]! << 16);
    return valid(u24(24) + 1, u24(27) + 1);
  }
  return null;
}

/** Start-of-frame markers that carry the frame size (all SOFn except DHT c4, JPG c8, DAC cc). */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

/** Most segments walked before giving up (a real file has a few dozen). */
const MAX_JPEG_SEGMENTS = 1000;

/**
 * JPEG: walks the marker segments from SOI, seeking over each segment by its length (so big EXIF or
 * ICC segments are skipped, not read), until a SOFn gives the frame height and width.
 */
export async function jpegSize(read: ByteReader): Promise<PictureSize | null> {
  const start = await read(0, 2);
  if (start[0] !== 0xff || start[1] !== 0xd8) return null;
  let offset = 2;
  for (let segments = 0; segments < MAX_JPEG_SEGMENTS; segments++) {
    const header = await read(offset, 12);
    let i = 0;
    if (header[i] !== 0xff) return null;
    while (header[i] === 0xff && i < header.length - 1) i++; // fill bytes before the marker code
    const marker = header[i];
    if (marker === undefined || marker === 0xff) return null;
    offset += i + 1;
    // Standalone markers without a length: TEM, RSTn; SOI again is tolerated.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) continue;
    if (marker === 0xd9 || marker === 0xda) return null; // end of image or scan data before any SOFn
    const segment = await read(offset, 7);
    if (segment.length < 2) return null;
    const length = (segment[0]! << 8) | segment[1]!;
    if (length < 2) return null;
    if (isStartOfFrame(marker)) {
      if (segment.length < 7) return null;
      return valid((segment[5]! << 8) | segment[6]!, (segment[3]! << 8) | segment[4]!);
    }
    offset += length;
  }
  return null;
}

/** A ByteReader over bytes in memory. */
export function bufferReader(bytes: Uint8Array): ByteReader {
  return (offset, length) => Promise.resolve(bytes.subarray(offset, offset + length));
}
