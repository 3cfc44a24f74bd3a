/**
 * Media renderers of the built-in simulator: real, valid files of the kind a plan promises (GLB, FBX,
 * PNG, SVG, MP3, MP4), drawn deterministically from the plan's seed.
 */
import { randomUUID } from 'node:crypto';
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { OutputPlan } from '../../../catalog/index.ts';
import { renderFbx } from './fbx.ts';
import { renderGlb } from './glb.ts';
import { renderMp3 } from './mp3.ts';
import { renderMp4 } from './mp4.ts';
import { renderMeshPreviewPng, renderPng } from './png.ts';
import { renderSvg } from './svg.ts';

/** A file written by a renderer. */
export interface RenderedFile {
  path: string;
  contentType: string;
  sizeBytes: number;
}

/** Where to write and when to stop. */
export interface RenderOptions {
  /** Existing directory the file is written into (under a unique name). */
  dir: string;
  signal?: AbortSignal;
}

/** Content type per output format. */
export const CONTENT_TYPES: Readonly<Record<OutputPlan['format'], string>> = {
  glb: 'model/gltf-binary',
  fbx: 'application/octet-stream',
  png: 'image/png',
  svg: 'image/svg+xml',
  mp3: 'audio/mpeg',
  mp4: 'video/mp4',
};

/**
 * Gives `write` a fresh path in `options.dir` and describes the file it leaves there; a failed or
 * stopped write leaves nothing behind and throws the signal's reason when the signal stopped it.
 */
export async function produce(
  format: OutputPlan['format'],
  options: RenderOptions,
  write: (path: string) => Promise<void>,
): Promise<RenderedFile> {
  options.signal?.throwIfAborted();
  const path = join(options.dir, `${randomUUID()}.${format}`);
  try {
    await write(path);
    options.signal?.throwIfAborted();
  } catch (error) {
    await rm(path, { force: true });
    options.signal?.throwIfAborted();
    throw error;
  }
  const { size } = await stat(path);
  return { path, contentType: CONTENT_TYPES[format], sizeBytes: size };
}

/** Writes the file of one planned output to `path`, on the calling thread. */
export function writeOutput(plan: OutputPlan, path: string, signal?: AbortSignal): Promise<void> {
  switch (plan.format) {
    case 'glb':
      return renderGlb(plan, path);
    case 'fbx':
      return renderFbx(plan, path);
    case 'png':
      return plan.subject === 'mesh'
        ? renderMeshPreviewPng(plan.seed, plan.width, plan.height, path)
        : renderPng(plan, path);
    case 'svg':
      return renderSvg(plan, path);
    case 'mp3':
      return renderMp3(plan, path, signal);
    case 'mp4':
      return renderMp4(plan, path, signal);
  }
}

/** Renders one planned output into `options.dir`, on the calling thread, and describes the file. */
export function renderOutput(plan: OutputPlan, options: RenderOptions): Promise<RenderedFile> {
  return produce(plan.format, options, (path) => writeOutput(plan, path, options.signal));
}
