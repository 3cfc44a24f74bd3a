/**
 * The length of a FLAC read from its last audio frame, not from what STREAMINFO says. STREAMINFO's total
 * samples is a number the sender chose: a 200 s file whose STREAMINFO says 10 s reads as 10 s to a header
 * reader (music-metadata, ffprobe), while every decoder plays all its frames. Prices and length rules must
 * not trust that claim, as for MP3 (`mp3-frames.ts`).
 *
 * Every frame header names the position of its first sample (a frame number in a fixed-blocksize stream, a
 * sample number otherwise) and its block size, and every frame ends with a CRC-16 of all its bytes. The last
 * whole frame is found from the end: a header whose CRC-8 holds and whose bytes up to the end of the file
 * (or a trailing tag, or the next frame, when the file is cut short) carry a matching CRC-16. Its first
 * sample plus its block size is the length in samples. A file with no such frame near its end has no
 * length we can read.
 */
import type { ByteReader } from './image-size.ts';

/** Bytes searched from the end: more than the largest frame (65,535 samples of 8 channels of 32 bits). */
const TAIL_BYTES = 2 * 1024 * 1024 + 64 * 1024;
/** Headers tried from the end before giving up: a file cannot make the search cost more than this. */
const MAX_CANDIDATES = 8;

interface StreamInfo {
  /** Where the first frame starts (after the metadata blocks). */
  audioStart: number;
  sampleRate: number;
  maxBlockSize: number;
  /** Largest frame in bytes; 0 when the encoder did not say. */
  maxFrameSize: number;
}

interface FrameHeader {
  /** Bytes of the header, its CRC-8 included. */
  length: number;
  /** Position of the frame's first sample in the stream. */
  firstSample: number;
  blockSize: number;
}

function crcTable(poly: number, width: number): Uint16Array {
  const top = 1 << (width - 1);
  const mask = (1 << width) - 1;
  const table = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte += 1) {
    let crc = byte << (width - 8);
    for (let bit = 0; bit < 8; bit += 1) crc = crc & top ? ((crc << 1) ^ poly) & mask : (crc << 1) & mask;
    table[byte] = crc;
  }
  return table;
}

const CRC8 = crcTable(0x07, 8);
const CRC16 = crcTable(0x8005, 16);

function isSync(bytes: Uint8Array, at: number): boolean {
  return bytes[at] === 0xff && ((bytes[at + 1] ?? 0) & 0xfe) === 0xf8;
}

/** The STREAMINFO block and where the audio starts (past an ID3v2 tag some taggers put first). */
async function streamInfo(read: ByteReader, size: number): Promise<StreamInfo | undefined> {
  let offset = 0;
  const id3 = await read(0, 10);
  if (id3.length === 10 && String.fromCharCode(id3[0]!, id3[1]!, id3[2]!) === 'ID3') {
    const syncsafe = [6, 7, 8, 9].reduce((sum, i) => sum * 128 + (id3[i]! & 0x7f), 0);
    offset = 10 + syncsafe + ((id3[5]! & 0x10) !== 0 ? 10 : 0);
  }
  const head = await read(offset, 4 + 4 + 34);
  if (head.length < 42 || String.fromCharCode(...head.subarray(0, 4)) !== 'fLaC' || (head[4]! & 0x7f) !== 0)
    return undefined;
  const info = head.subarray(8);
  const sampleRate = (info[10]! << 12) | (info[11]! << 4) | (info[12]! >> 4);
  const maxBlockSize = (info[2]! << 8) | info[3]!;
  const maxFrameSize = (info[7]! << 16) | (info[8]! << 8) | info[9]!;
  // Past the metadata blocks, each a 4-byte header (last-block flag, type, 24-bit length) and its body.
  let at = offset + 4;
  for (;;) {
    const block = await read(at, 4);
    if (block.length < 4) return undefined;
    at += 4 + ((block[1]! << 16) | (block[2]! << 8) | block[3]!);
    if (block[0]! & 0x80) break;
  }
  if (sampleRate === 0 || at >= size) return undefined;
  return { audioStart: at, sampleRate, maxBlockSize, maxFrameSize };
}

/** The frame header at `at`, or null when the bytes are none (reserved values, a wrong CRC-8). */
function frameHeaderAt(bytes: Uint8Array, at: number, info: StreamInfo): FrameHeader | null {
  if (!isSync(bytes, at) || at + 6 > bytes.length) return null;
  const variable = (bytes[at + 1]! & 1) === 1;
  const sizeCode = bytes[at + 2]! >> 4;
  const rateCode = bytes[at + 2]! & 0x0f;
  const b3 = bytes[at + 3]!;
  if (sizeCode === 0 || rateCode === 15 || b3 >> 4 > 10 || ((b3 >> 1) & 7) === 3 || (b3 & 1) !== 0)
    return null;
  // The coded number: UTF-8's scheme stretched to 7 bytes (36 bits).
  let i = at + 4;
  const first = bytes[i]!;
  const extra =
    first < 0x80
      ? 0
      : first < 0xc0
        ? -1
        : first < 0xe0
          ? 1
          : first < 0xf0
            ? 2
            : first < 0xf8
              ? 3
              : first < 0xfc
                ? 4
                : first < 0xfe
                  ? 5
                  : first === 0xfe
                    ? 6
                    : -1;
  if (extra < 0) return null;
  let number = extra === 0 ? first : first & (0x3f >> extra);
  for (let k = 1; k <= extra; k += 1) {
    const byte = bytes[i + k];
    if (byte === undefined || (byte & 0xc0) !== 0x80) return null;
    number = number * 64 + (byte & 0x3f);
  }
  i += 1 + extra;
  let blockSize: number;
  if (sizeCode === 6) blockSize = (bytes[i++] ?? -1) + 1;
  else if (sizeCode === 7) {
    blockSize = (((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)) + 1;
    i += 2;
  } else blockSize = sizeCode === 1 ? 192 : sizeCode <= 5 ? 576 << (sizeCode - 2) : 256 << (sizeCode - 8);
  if (rateCode === 12) i += 1;
  else if (rateCode === 13 || rateCode === 14) i += 2;
  if (i >= bytes.length || blockSize <= 0) return null;
  let crc = 0;
  for (let k = at; k < i; k += 1) crc = CRC8[crc ^ bytes[k]!]!;
  if (crc !== bytes[i]) return null;
  const firstSample = variable ? number : number * info.maxBlockSize;
  return { length: i + 1 - at, firstSample, blockSize };
}

/** Whether a frame may end at `at`: the end of the file, the next frame (of a file cut short), a tag. */
function frameMayEnd(bytes: Uint8Array, at: number): boolean {
  if (at === bytes.length || isSync(bytes, at)) return true;
  const text = String.fromCharCode(...bytes.subarray(at, at + 8));
  return text.startsWith('TAG') || text.startsWith('ID3') || text === 'APETAGEX';
}

/** Whether the bytes from `at` to some place a frame may end carry a CRC-16 of zero: a whole frame. */
function wholeFrame(bytes: Uint8Array, at: number, header: FrameHeader, longest: number): boolean {
  const end = Math.min(bytes.length, at + longest);
  let crc = 0;
  for (let k = at; k < end; k += 1) {
    crc = ((crc << 8) & 0xffff) ^ CRC16[(crc >> 8) ^ bytes[k]!]!;
    if (crc === 0 && k + 1 > at + header.length && frameMayEnd(bytes, k + 1)) return true;
  }
  return false;
}

/**
 * Seconds of audio in the FLAC read by `read` (`size` bytes), from its last whole frame; undefined when it
 * has no STREAMINFO or no whole frame near its end.
 */
export async function countFlacSeconds(read: ByteReader, size: number): Promise<number | undefined> {
  const info = await streamInfo(read, size);
  if (!info) return undefined;
  const start = Math.max(info.audioStart, size - TAIL_BYTES);
  const tail = await read(start, size - start);
  // A frame is never longer than STREAMINFO says (with room for its header), nor than the tail.
  const longest = info.maxFrameSize > 0 ? info.maxFrameSize + 16 : tail.length;
  let tried = 0;
  for (let at = tail.length - 2; at >= 0 && tried < MAX_CANDIDATES; at -= 1) {
    if (!isSync(tail, at)) continue;
    const header = frameHeaderAt(tail, at, info);
    if (!header) continue;
    tried += 1;
    if (wholeFrame(tail, at, header, longest))
      return (header.firstSample + header.blockSize) / info.sampleRate;
  }
  return undefined;
}
