/**
 * The length of an MP3 counted from its audio frames, not from what its headers say. A Xing, Info or
 * VBRI header (and LAME's music length) states a frame count the sender chose: the header frame of a
 * 90 s file before the frames of an 8-minute one reads as 90 s to a header reader, while every decoder
 * plays 8 minutes. Prices and length rules must not trust that claim (`probe.ts` takes the count here
 * when it is longer).
 *
 * The walk: past ID3v2 tags, frame after frame by each header's own length; where bytes are no frame
 * (junk, a tag), on to the next place where two frames follow each other, as decoders resynchronise.
 * The Xing/Info/VBRI header frame carries no audio and is not counted.
 */
import type { ByteReader } from './image-size.ts';

/** Bytes read at a time: a walk over a window of junk holds the event loop for a few ms at most. */
const WINDOW = 256 * 1024;

/** Kilobits a second by bitrate index: MPEG-1 layers I, II, III; MPEG-2/2.5 layer I; layers II and III. */
const BITRATES = {
  v1l1: [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  v1l2: [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  v1l3: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  v2l1: [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  v2l23: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
} as const;

const SAMPLE_RATES = [44_100, 48_000, 32_000] as const;

interface Frame {
  /** Bytes of the whole frame, header included. */
  length: number;
  samples: number;
  sampleRate: number;
  /** Where a Xing or Info tag would start (after the side information). */
  tagOffset: number;
}

/** The frame whose 4-byte header is `b0`…`b3`; null when they are no valid MPEG audio header. */
export function frameOf(b0: number, b1: number, b2: number, b3: number): Frame | null {
  if (b0 !== 0xff || (b1 & 0xe0) !== 0xe0) return null;
  const version = (b1 >> 3) & 3; // 0: MPEG-2.5, 2: MPEG-2, 3: MPEG-1; 1 is reserved
  const layer = (b1 >> 1) & 3; // 1: III, 2: II, 3: I; 0 is reserved
  const bitrateIndex = b2 >> 4;
  const rateIndex = (b2 >> 2) & 3;
  if (version === 1 || layer === 0 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3)
    return null;
  const mpeg1 = version === 3;
  const table =
    layer === 3
      ? mpeg1
        ? BITRATES.v1l1
        : BITRATES.v2l1
      : mpeg1
        ? layer === 2
          ? BITRATES.v1l2
          : BITRATES.v1l3
        : BITRATES.v2l23;
  const bitrate = table[bitrateIndex]! * 1000;
  const sampleRate = SAMPLE_RATES[rateIndex]! / (mpeg1 ? 1 : version === 2 ? 2 : 4);
  const padding = (b2 >> 1) & 1;
  const mono = b3 >> 6 === 3;
  if (layer === 3) {
    return {
      length: (Math.floor((12 * bitrate) / sampleRate) + padding) * 4,
      samples: 384,
      sampleRate,
      tagOffset: 0,
    };
  }
  const samples = layer === 1 && !mpeg1 ? 576 : 1152;
  const length = Math.floor(((samples / 8) * bitrate) / sampleRate) + padding;
  const sideInfo = mpeg1 ? (mono ? 17 : 32) : mono ? 9 : 17;
  return { length, samples, sampleRate, tagOffset: 4 + sideInfo };
}

/** More than the longest frame (MPEG-2.5 layer I at 256 kbit/s: 1,540 bytes) with the next one's header. */
const LOOKAHEAD = 4096;

/**
 * A window over the file read `WINDOW` bytes at a time. Reads inside it are synchronous, so a walk over
 * junk costs no promise a byte (which would hold the event loop); `at` is -1 outside it.
 */
class Bytes {
  #start = 0;
  #buffer: Uint8Array = new Uint8Array(0);
  readonly #read: ByteReader;
  readonly size: number;
  constructor(read: ByteReader, size: number) {
    this.#read = read;
    this.size = size;
  }

  /** Whether [offset, offset + LOOKAHEAD) (or the file's rest) is in the window. */
  has(offset: number): boolean {
    const end = Math.min(offset + LOOKAHEAD, this.size);
    return offset >= this.#start && end <= this.#start + this.#buffer.length;
  }

  /** Moves the window to start at `offset`. */
  async load(offset: number): Promise<void> {
    this.#start = offset;
    this.#buffer = await this.#read(offset, Math.min(WINDOW, this.size - offset));
  }

  at(offset: number): number {
    const i = offset - this.#start;
    return i >= 0 && i < this.#buffer.length ? this.#buffer[i]! : -1;
  }

  frame(offset: number): Frame | null {
    return frameOf(this.at(offset), this.at(offset + 1), this.at(offset + 2), this.at(offset + 3));
  }

  text(offset: number, length: number): string {
    let out = '';
    for (let i = 0; i < length; i += 1) out += String.fromCharCode(Math.max(0, this.at(offset + i)));
    return out;
  }

  /** Whether a frame at `offset` is followed by another, or ends the file: a real frame, not stray bytes. */
  confirmed(offset: number, frame: Frame): boolean {
    const next = offset + frame.length;
    return next >= this.size || this.frame(next) !== null;
  }
}

/** Where the audio starts: past every ID3v2 tag at the file's start. */
async function audioStart(bytes: Bytes): Promise<number> {
  let offset = 0;
  while (offset + 10 <= bytes.size) {
    await bytes.load(offset);
    if (bytes.text(offset, 3) !== 'ID3') break;
    const syncsafe = [6, 7, 8, 9].reduce((sum, i) => sum * 128 + (bytes.at(offset + i) & 0x7f), 0);
    const footer = (bytes.at(offset + 5) & 0x10) !== 0 ? 10 : 0;
    offset += 10 + syncsafe + footer;
  }
  return offset;
}

/** Largest encoder delay or padding LAME's tag can state (12 bits each), in samples. */
const MAX_TRIM_SAMPLES = 4095;

/**
 * Samples the encoder added before and after the audio, as the LAME tag after a Xing/Info header says
 * (LAME and ffmpeg write it: a "15 s" file of ffmpeg holds 15.05 s of frames); 0 without the tag. The
 * tag's fields: flags, then the frame count, byte count, table of contents and quality that the flags
 * announce, the 9-character encoder name, and 12 bytes later the delay and padding, 12 bits each.
 * Bounded by the format, so a sender can shave at most 8,190 samples (0.19 s at 44.1 kHz) off a file.
 */
function encoderTrim(bytes: Bytes, tag: number): number {
  const flags = bytes.at(tag + 7);
  if (flags < 0) return 0;
  let at = tag + 8;
  if (flags & 1) at += 4;
  if (flags & 2) at += 4;
  if (flags & 4) at += 100;
  if (flags & 8) at += 4;
  if (!/^[\x20-\x7e]{4}/.test(bytes.text(at, 4))) return 0;
  const [b0, b1, b2] = [bytes.at(at + 21), bytes.at(at + 22), bytes.at(at + 23)];
  if (b0 < 0 || b1 < 0 || b2 < 0) return 0;
  const delay = (b0 << 4) | (b1 >> 4);
  const padding = ((b1 & 0x0f) << 8) | b2;
  return Math.min(delay, MAX_TRIM_SAMPLES) + Math.min(padding, MAX_TRIM_SAMPLES);
}

/**
 * Seconds of audio in the MP3 read by `read` (`size` bytes), counted frame by frame, less the encoder's
 * delay and padding its LAME tag states (as decoders that play it gaplessly, and ffprobe, count it);
 * undefined when no frame is found.
 */
export async function countMp3Seconds(read: ByteReader, size: number): Promise<number | undefined> {
  const bytes = new Bytes(read, size);
  let offset = await audioStart(bytes);
  let samples = 0;
  let sampleRate = 0;
  let trim = 0;
  let frames = 0;
  while (offset + 4 <= size) {
    if (!bytes.has(offset)) await bytes.load(offset);
    const frame = bytes.frame(offset);
    if (frame === null || !bytes.confirmed(offset, frame)) {
      offset += 1;
      continue;
    }
    const tag = offset + frame.tagOffset;
    const xing = frames === 0 && ['Xing', 'Info'].includes(bytes.text(tag, 4));
    if (xing) trim = encoderTrim(bytes, tag);
    const header = xing || (frames === 0 && bytes.text(offset + 36, 4) === 'VBRI');
    // Counted in samples of the first audio frame's rate: a stream does not change rate mid-way, and a
    // frame that claims another is counted at its own length all the same.
    if (!header) {
      sampleRate ||= frame.sampleRate;
      samples += (frame.samples * sampleRate) / frame.sampleRate;
    }
    frames += 1;
    offset += frame.length;
  }
  if (frames === 0 || samples === 0) return undefined;
  return (samples > trim ? samples - trim : samples) / sampleRate;
}
