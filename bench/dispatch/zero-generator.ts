import type {
  GenerationOutputs,
  GenerationRequest,
  GenerationStatus,
  Generator,
  RunStart,
} from '../../src/generators/index.ts';

/**
 * The dispatch bench's generator: every run succeeds at once with no file and no rendering, so what the
 * bench measures is the worker's own path (claim, queued → running, succeeded with the hold captured).
 * It lives under bench/ and reaches the worker only through `createContainer`'s `generator` override,
 * which no configuration of `src/main.ts` or `src/worker-main.ts` can set.
 */
export class ZeroWorkGenerator implements Generator {
  async ensureAvailable(): Promise<void> {}

  async create(_request: GenerationRequest, run: RunStart): Promise<string> {
    return `zero:${run.key}`;
  }

  async find(): Promise<string | null> {
    return null;
  }

  async status(_handle: string, _request: GenerationRequest): Promise<GenerationStatus> {
    return { state: 'succeeded' };
  }

  async outputs(): Promise<GenerationOutputs> {
    return { files: [], caption: '', texts: [] };
  }

  async cancel(): Promise<void> {}
}
