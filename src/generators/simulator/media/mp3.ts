/**
 * MP3 renderer: seeded music (or a voice-like sound) synthesised and encoded with lamejs chunk by chunk,
 * mono 22.05 kHz at 64 kbps, straight into the file; the event loop gets a turn between chunks.
 */
import { open } from 'node:fs/promises';
import { Mp3Encoder } from '@breezystack/lamejs';
import type { AudioOutput } from '../../../catalog/index.ts';
import { musicSource, type SampleSource } from './synth-music.ts';
import { speechSource } from './synth-speech.ts';

/** Output sample rate (Hz). */
export const MP3_SAMPLE_RATE = 22_050;
const BITRATE_KBPS = 64;
const SAMPLES_PER_FRAME = 576; // MPEG-2 layer III at 22.05 kHz.
// LAME's encoder delay (576 + 529 samples) and the frames it adds on flush, taken off the input so the
// decoded stream (counted in whole frames, no LAME tag) matches the requested length.
const ENCODER_OVERHEAD = 1105;
const CHUNK = SAMPLES_PER_FRAME * 64;

/** Number of PCM samples fed to the encoder for a duration. */
export function pcmSamples(durationSeconds: number): number {
  return Math.max(SAMPLES_PER_FRAME, Math.round(durationSeconds * MP3_SAMPLE_RATE) - ENCODER_OVERHEAD);
}

function source(plan: AudioOutput, total: number): SampleSource {
  return plan.speech ? speechSource(plan, MP3_SAMPLE_RATE, total) : musicSource(plan, MP3_SAMPLE_RATE, total);
}

/** Writes the MP3 of an audio plan to `path`; stops (and throws) when `signal` aborts. */
export async function renderMp3(plan: AudioOutput, path: string, signal?: AbortSignal): Promise<void> {
  const total = pcmSamples(plan.durationSeconds);
  const synth = source(plan, total);
  const encoder = new Mp3Encoder(1, MP3_SAMPLE_RATE, BITRATE_KBPS);
  // Short fades avoid clicks; a loop has none, its tails wrap around instead.
  const fade = plan.loop && !plan.speech ? 0 : Math.round(0.02 * MP3_SAMPLE_RATE);
  const file = await open(path, 'w');
  try {
    const floats = new Float32Array(CHUNK);
    const pcm = new Int16Array(CHUNK);
    for (let start = 0; start < total; start += CHUNK) {
      signal?.throwIfAborted();
      const length = Math.min(CHUNK, total - start);
      const block = floats.subarray(0, length);
      block.fill(0);
      synth.render(start, block);
      for (let i = 0; i < length; i++) {
        const s = start + i;
        let v = block[i]!;
        if (fade > 0) v *= Math.min(1, s / fade, (total - 1 - s) / fade);
        // Soft clip keeps peaks within range without a second pass.
        pcm[i] = Math.round((v / (1 + Math.abs(v))) * 32_000);
      }
      const encoded = encoder.encodeBuffer(pcm.subarray(0, length));
      if (encoded.length > 0) await file.write(encoded);
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
    const tail = encoder.flush();
    if (tail.length > 0) await file.write(tail);
  } finally {
    await file.close();
  }
}
