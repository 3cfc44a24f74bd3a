/**
 * The stored sample of each preset voice (the omni voices' `presets`): a provider that takes a voice as a
 * recording is sent it in place of a person's own (PROVIDERS.md §4: "a preset → its stored sample file").
 * Drawn by the simulator's speech synthesiser from the preset's id, so every process serves the same
 * bytes, once per process, and kept in memory (about 50 KB each).
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeOutput } from '../generators/index.ts';
import { makeTempFolder } from '../lib/index.ts';
import { OMNI_PRESETS } from './others.ts';

/** Length of a preset's sample (seconds). */
const SAMPLE_SECONDS = 6;

const drawn = new Map<string, Promise<Buffer>>();

/** The path (under PUBLIC_BASE_URL) where a preset's sample is served. */
export function presetSamplePath(id: string): string {
  return `/samples/${encodeURIComponent(id)}.mp3`;
}

/** The MP3 sample of a preset voice; null when no preset has that id. */
export function presetSample(id: string): Promise<Buffer> | null {
  if (!OMNI_PRESETS.some((p) => p.id === id)) return null;
  let sample = drawn.get(id);
  if (sample === undefined) {
    sample = draw(id);
    drawn.set(id, sample);
    // A failed drawing is tried again by the next request.
    sample.catch(() => drawn.delete(id));
  }
  return sample;
}

async function draw(id: string): Promise<Buffer> {
  const dir = await makeTempFolder('preset');
  try {
    const path = join(dir, 'sample.mp3');
    await writeOutput(
      {
        kind: 'audio',
        format: 'mp3',
        filename: `${id}.mp3`,
        caption: '',
        seed: `preset-sample:${id}`,
        durationSeconds: SAMPLE_SECONDS,
        speech: true,
      },
      path,
    );
    return await readFile(path);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
