import fsp from 'node:fs/promises';
import path from 'node:path';
import type {
  GeneratedFile,
  GenerationOutputs,
  GenerationStatus,
  Generator,
  RunStart,
} from '../../src/generators/index.ts';

/**
 * The generator of the download bench: every run succeeds at once with one result file, a copy of
 * `source` (the bytes nginx serves too). The task then finishes through the worker's normal path (stored
 * through the app's storage, an artifact row, the hold captured), so the download route serves exactly
 * what it serves in production, only larger than the simulator's files.
 */
export class FixedFileGenerator implements Generator {
  readonly #source: string;
  readonly #contentType: string;

  constructor(source: string, contentType = 'model/gltf-binary') {
    this.#source = source;
    this.#contentType = contentType;
  }

  async ensureAvailable(): Promise<void> {}

  async create(_request: unknown, run: RunStart): Promise<string> {
    return run.key;
  }

  async find(_request: unknown, run: RunStart): Promise<string | null> {
    return run.key;
  }

  async status(): Promise<GenerationStatus> {
    return { state: 'succeeded' };
  }

  async outputs(_handle: string, _request: unknown, dir: string): Promise<GenerationOutputs> {
    const target = path.join(dir, path.basename(this.#source));
    await fsp.copyFile(this.#source, target);
    const { size } = await fsp.stat(target);
    const file: GeneratedFile = {
      path: target,
      kind: 'document',
      filename: path.basename(this.#source),
      contentType: this.#contentType,
      sizeBytes: size,
      caption: 'bench artifact',
    };
    return { files: [file], caption: 'bench', texts: [] };
  }

  async cancel(): Promise<void> {}
}
