/**
 * MP3 renderer: seeded music (or a voice-like sound) synthesised chunk by chunk and encoded by the bundled
 * ffmpeg's libmp3lame, mono 22.05 kHz at 64 kbps, fed through a pipe straight into the file. LAME in
 * JavaScript (lamejs) took 2.6 s of CPU for 120 s of sound, on the run's clock: a burst of long songs at a
 * high SIM_SPEED passed their runs' deadlines while waiting for it. ffmpeg takes a seventh of that, in a
 * process of its own. Its LAME tag states the encoder's delay and padding, so decoders and our probe
 * (`mp3-frames.ts`) read the exact length asked for.
 */
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import type { AudioOutput } from '../../../catalog/index.ts';
import { runFfmpeg } from './mp4.ts';
import { musicSource, type SampleSource } from './synth-music.ts';
import { speechSource } from './synth-speech.ts';

/** Output sample rate (Hz). */
export const MP3_SAMPLE_RATE = 22_050;
const BITRATE_KBPS = 64;
const CHUNK = 576 * 64;

/** ffmpeg's arguments: raw 16-bit mono samples in, an MP3 without tags but its LAME header out. */
function ffmpegArgs(path: string): string[] {
  return [
    ...['-hide_banner', '-loglevel', 'error', '-nostdin'],
    ...['-f', 's16le', '-ar', String(MP3_SAMPLE_RATE), '-ac', '1', '-i', 'pipe:0'],
    ...['-c:a', 'libmp3lame', '-b:a', `${BITRATE_KBPS}k`, '-compression_level', '7'],
    ...['-map_metadata', '-1', '-id3v2_version', '0', '-fflags', '+bitexact', '-flags:a', '+bitexact'],
    ...['-f', 'mp3', '-y', path],
  ];
}

function source(plan: AudioOutput, total: number): SampleSource {
  return plan.speech ? speechSource(plan, MP3_SAMPLE_RATE, total) : musicSource(plan, MP3_SAMPLE_RATE, total);
}

/** Writes the MP3 of an audio plan to `path`; stops (and throws) when `signal` aborts, leaving no file. */
export async function renderMp3(plan: AudioOutput, path: string, signal?: AbortSignal): Promise<void> {
  const total = Math.max(1, Math.round(plan.durationSeconds * MP3_SAMPLE_RATE));
  const synth = source(plan, total);
  // Short fades avoid clicks; a loop has none, its tails wrap around instead.
  const fade = plan.loop && !plan.speech ? 0 : Math.round(0.02 * MP3_SAMPLE_RATE);
  const feed = async (stdin: Writable): Promise<void> => {
    const floats = new Float32Array(CHUNK);
    for (let start = 0; start < total; start += CHUNK) {
      signal?.throwIfAborted();
      const length = Math.min(CHUNK, total - start);
      const block = floats.subarray(0, length);
      block.fill(0);
      synth.render(start, block);
      // A fresh array per chunk: the pipe keeps the written bytes until ffmpeg reads them.
      const pcm = new Int16Array(length);
      for (let i = 0; i < length; i++) {
        const s = start + i;
        let v = block[i]!;
        if (fade > 0) v *= Math.min(1, s / fade, (total - 1 - s) / fade);
        // Soft clip keeps peaks within range without a second pass.
        pcm[i] = Math.round((v / (1 + Math.abs(v))) * 32_000);
      }
      if (!stdin.write(new Uint8Array(pcm.buffer))) await once(stdin, 'drain', { signal });
    }
  };
  try {
    await runFfmpeg(ffmpegArgs(path), signal, feed);
  } catch (error) {
    await rm(path, { force: true });
    throw error;
  }
}
