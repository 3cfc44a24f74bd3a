/**
 * Field shapes shared by the libraries' creation bodies (CONTRACT §7): a `*_url` field takes one URL as
 * a string or a one-item list, a `*_urls` field a list; every URL is http(s) (files are passed as direct
 * links and go to the generator unchanged, reference "Other libraries").
 */
import { z } from 'zod';
import type { LinkedFiles } from './types.ts';

/** Longest URL we accept (decision: common browser and proxy limit). */
export const MAX_URL_LENGTH = 2048;

export const httpUrl = z.url({ protocol: /^https?$/ }).max(MAX_URL_LENGTH);

/** What a link is to a schema's reader; the check itself is `httpUrl`'s, after the list is unwrapped. */
const linkShape = z.string().meta({ format: 'uri', maxLength: MAX_URL_LENGTH });

/**
 * One URL, as a string or a one-item list of strings (CONTRACT §7); normalised to the string. Both shapes
 * are in the input's schema, so the OpenAPI document and the dashboard's form show the list too; a longer
 * list reaches `httpUrl` as a list and is refused as one ("expected string, received array").
 */
export const urlField = z
  .union([linkShape, z.array(linkShape).meta({ minItems: 1, maxItems: 1 })])
  .transform((v) => (Array.isArray(v) && v.length === 1 ? v[0] : v))
  .pipe(httpUrl)
  .describe('one direct http(s) link, as a string or a one-item list');

export function urlList(min: number, max: number): z.ZodArray<typeof httpUrl> {
  return z.array(httpUrl).min(min).max(max).describe(`${min} to ${max} direct http(s) links`);
}

/** Nothing a reader would see: whitespace and invisible format characters (zero-width spaces, joiners,
 * bidi marks, the BOM), which `trim()` keeps. */
const NOTHING_VISIBLE = /^[\p{White_Space}\p{Cf}]*$/u;

/**
 * A record's name, or another text it must have (a persona's description): trimmed, then `min`–`max`
 * characters, at least one of them visible: a name made only of zero-width spaces would show as a blank
 * row in every list and picker, and a required text so made would be missing all the same.
 */
export function visibleText(min: number, max: number): z.ZodString {
  return z
    .string()
    .trim()
    .min(min)
    .max(max)
    .refine((name) => name.length === 0 || !NOTHING_VISIBLE.test(name), {
      message: 'Must contain a visible character.',
      params: { ru: 'Нужен хотя бы один видимый символ.' },
    });
}

/** One megabyte as the reference counts file sizes (MiB). */
export const MB = 1024 * 1024;

/** Files the reference accepts for pictures, audio and video (CONTRACT §6); sizes in bytes. */
export const IMAGE_FILES = {
  formats: ['jpeg', 'png', 'webp'],
  maxBytes: 10 * MB,
} as const satisfies LinkedFiles;
export const AUDIO_FILES = {
  formats: ['mp3', 'wav', 'ogg', 'm4a', 'flac', 'aac'],
  maxBytes: 20 * MB,
} as const satisfies LinkedFiles;
export const VIDEO_FILES = { formats: ['mp4', 'mov'], maxBytes: 100 * MB } as const satisfies LinkedFiles;
