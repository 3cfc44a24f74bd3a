/**
 * Example runs: each mode carries one (minimal valid settings, defaults elsewhere, and the probed
 * input files), which docs/models.md prices and plans and the catalog tests check.
 */
import type { InputFile, MediaFormat } from './model-spec.ts';

/** An example run of a mode: settings as a caller sends them and the files its URLs name, probed. */
export interface ModeExample {
  readonly settings: Readonly<Record<string, unknown>>;
  readonly files: readonly InputFile[];
}

/** A file of an example: its format and, for audio and video, its length (seconds). */
export type ExampleFile = readonly [format: MediaFormat, durationSeconds?: number];

/** Side of the example pictures (pixels). */
const PICTURE_SIZE = 1024;
const PICTURES: readonly MediaFormat[] = ['jpeg', 'png', 'webp'];

function exampleUrl(field: string, format: MediaFormat): string {
  return `https://example.com/${field}.${format}`;
}

function exampleFile(field: string, [format, durationSeconds]: ExampleFile): InputFile {
  return {
    field,
    position: 0,
    url: exampleUrl(field, format),
    format,
    sizeBytes: 1_000_000,
    ...(durationSeconds === undefined ? {} : { durationSeconds }),
    ...(PICTURES.includes(format) ? { width: PICTURE_SIZE, height: PICTURE_SIZE } : {}),
  };
}

/**
 * An example run: `settings` plus, for each field of `files`, a one-URL list setting and the probed
 * file it names.
 */
export function exampleRun(
  settings: Readonly<Record<string, unknown>>,
  files: Readonly<Record<string, ExampleFile>> = {},
): ModeExample {
  const entries = Object.entries(files);
  return {
    settings: {
      ...settings,
      ...Object.fromEntries(entries.map(([field, [format]]) => [field, [exampleUrl(field, format)]])),
    },
    files: entries.map(([field, file]) => exampleFile(field, file)),
  };
}
