/**
 * Settings fields and input helpers that models of different families share: URL lists, bounded
 * texts, audio inputs, library ids. A family's own pieces stay in its `*-common.ts`.
 */
import { z } from 'zod';
import type { InputRule, ModeInputs } from './model-spec.ts';

export const MB = 1024 * 1024;

/** A string of `min` to `max` characters. */
export function text(min: number, max: number): z.ZodString {
  return z.string().min(min).max(max);
}

/**
 * A URL list setting (reference: "URL fields are lists of strings in uri form"). Only http(s) is
 * accepted; the host is not restricted here because the service's own upload links may sit on a
 * loopback address, and downloads are guarded against private addresses when probed (CONTRACT §6).
 */
export function urlList(max: number): z.ZodArray<z.ZodURL> {
  return z.array(z.url({ protocol: /^https?$/ })).max(max);
}

/** Reference: "All url fields (audio, audio2) are lists of uri with at most 1 item"; all are required. */
export const audioUrl = z
  .array(z.url({ protocol: /^https?$/ }))
  .min(1)
  .max(1);

/** Reference: audio inputs are mp3, wav, ogg, m4a, flac or aac, up to 20 MB (taken as MiB). */
export const AUDIO_INPUT: InputRule = {
  formats: ['mp3', 'wav', 'ogg', 'm4a', 'flac', 'aac'],
  maxBytes: 20 * MB,
};

/** Id of a library item (persona, voice, style); existence is checked by the core (CONTRACT §7). */
export const libraryId = z.string().min(1);

/** Length of the first file named by `field`, when it was probed (seconds). */
export function fileSeconds(inputs: ModeInputs, field: string): number | undefined {
  return inputs.files.find((f) => f.field === field)?.durationSeconds;
}
