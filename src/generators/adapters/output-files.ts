/**
 * Downloaded provider outputs as task artifacts: each file's kind comes from its sniffed type, its name
 * and caption from the mode's plan (the next planned output of the same kind), so a provider that returns
 * a preview picture beside a mesh still gives `model.glb` and `preview.png` as the simulator would.
 */
import { rm } from 'node:fs/promises';
import type { GenerationPlan } from '../../catalog/index.ts';
import {
  type GeneratedFile,
  GenerationError,
  type GenerationOutputs,
  type GenerationRequest,
  GeneratorTransientError,
} from '../generator.ts';
import { kindOfOutput } from './output-type.ts';
import type { DownloadedOutput } from './types.ts';

function withExtension(filename: string, format: string): string {
  const dot = filename.lastIndexOf('.');
  const stem = dot > 0 ? filename.slice(0, dot) : filename;
  return `${stem}.${format}`;
}

/**
 * Names the downloaded files after the plan. A file no artifact kind fits, or outputs that lack a kind the
 * plan requires (a 3D run's mesh, in its planned format: only its preview is `optional`), end the run as
 * `generation_failed` (retrying would fetch the same files).
 */
export function filesForPlan(downloads: readonly DownloadedOutput[], plan: GenerationPlan): GeneratedFile[] {
  const unused = [...plan.outputs];
  const files = downloads.map((download, index): GeneratedFile => {
    const kind = kindOfOutput(download.format);
    if (kind === null)
      throw new GenerationError(
        'generation_failed',
        `output ${index + 1} is not a file type the service stores`,
      );
    // A mesh stands for the planned one only in its format: the reference's glb, or fbx when quad is true.
    const at = unused.findIndex(
      (output) => output.kind === kind && (kind !== 'document' || output.format === download.format),
    );
    const planned = at >= 0 ? unused.splice(at, 1)[0] : undefined;
    return {
      path: download.path,
      kind,
      filename: planned
        ? withExtension(planned.filename, download.format)
        : `output-${index + 1}.${download.format}`,
      contentType: download.contentType,
      sizeBytes: download.sizeBytes,
      caption: planned?.caption ?? '',
    };
  });
  // Each required kind must have filled a planned file at least once (a provider may return fewer of a kind
  // than planned: PROVIDERS.md fails a run for no file at all, not for one picture of `n`).
  const named = (output: GenerationPlan['outputs'][number]): string =>
    output.kind === 'document' ? `document ${output.format}` : output.kind;
  const filled = new Set(plan.outputs.filter((output) => !unused.includes(output)).map(named));
  const missing = [...new Set(plan.outputs.filter((output) => !output.optional).map(named))].filter(
    (kind) => !filled.has(kind),
  );
  if (missing.length > 0) {
    const got = downloads.map((download) => download.format).join(', ') || 'none';
    throw new GenerationError(
      'generation_failed',
      `the outputs (${got}) lack the promised kind (${missing.join(', ')})`,
    );
  }
  return files;
}

/**
 * The one video of a finished task, named after the plan. Providers' output links are short-lived: a
 * download that fails transiently is tried once more with `download` (which reads the task again for a
 * fresh link); a second failure stays transient. The file is removed when the plan refuses it.
 */
export async function singleOutput(
  download: () => Promise<DownloadedOutput>,
  request: GenerationRequest,
  signal: AbortSignal,
): Promise<GenerationOutputs> {
  let output: DownloadedOutput;
  try {
    output = await download();
  } catch (error) {
    if (!(error instanceof GeneratorTransientError) || signal.aborted) throw error;
    output = await download();
  }
  try {
    return { files: filesForPlan([output], request.plan), caption: request.plan.caption, texts: [] };
  } catch (error) {
    await rm(output.path, { force: true });
    throw error;
  }
}
