/**
 * The Recraft adapter of one channel (PROVIDERS.md §7): `image` pictures, plain or in an image style
 * saved at Recraft (a vector style gives SVG files). Generation is one synchronous call answering links;
 * the run keeps a local task record (sync-runs.ts) so the worker still goes create → poll → outputs.
 *
 * Output links: Recraft has no task to read again, so a link that cannot be fetched any more (expired)
 * ends the run as `UpstreamRunLost`: the retry is a new call with new links (CONTRACT §11 "a run that
 * cannot fetch its outputs is a transient failure").
 */
import {
  type GenerationOutputs,
  type GenerationRequest,
  type GenerationStatus,
  GeneratorTransientError,
  type RunStart,
} from '../../generator.ts';
import { filesForPlan } from '../output-files.ts';
import { SyncRuns } from '../sync-runs.ts';
import { type Adapter, type AdapterDeps, type DownloadedOutput, UpstreamRunLost } from '../types.ts';
import { RecraftLibrary } from './library.ts';
import { callRecraft, generationBody, imagesOf, type RecraftImages } from './wire.ts';

export class RecraftAdapter implements Adapter {
  readonly #deps: AdapterDeps;
  readonly #runs = new SyncRuns<RecraftImages>('recraft');
  readonly library: RecraftLibrary;

  constructor(deps: AdapterDeps) {
    this.#deps = deps;
    this.library = new RecraftLibrary(deps);
  }

  async ensureAvailable(): Promise<void> {}

  /** Builds the body (a style not saved at Recraft fails here, before any call), then starts the call. */
  async create(request: GenerationRequest, run: RunStart, _signal: AbortSignal): Promise<string> {
    const json = generationBody(request, this.#deps.channel.upstreamModels);
    this.#runs.start(run.key, async (signal) =>
      imagesOf(
        this.#deps,
        await callRecraft(this.#deps, { method: 'POST', path: '/images/generations', json, signal }),
      ),
    );
    return run.key;
  }

  async find(_request: GenerationRequest, run: RunStart, _signal: AbortSignal): Promise<string | null> {
    return this.#runs.has(run.key) ? run.key : null;
  }

  /** Succeeded runs report what they cost in Recraft credits. */
  async status(
    handle: string,
    _request?: GenerationRequest,
    _signal?: AbortSignal,
  ): Promise<GenerationStatus> {
    const status = this.#runs.status(handle);
    if (status.state !== 'succeeded') return status;
    const { credits } = this.#runs.result(handle);
    return credits === null ? status : { state: 'succeeded', cost: { amount: credits, currency: 'credits' } };
  }

  async outputs(
    handle: string,
    request: GenerationRequest,
    dir: string,
    signal: AbortSignal,
  ): Promise<GenerationOutputs> {
    const { urls } = this.#runs.result(handle);
    const downloads: DownloadedOutput[] = [];
    try {
      for (const url of urls) downloads.push(await this.#deps.download(url, dir, signal));
    } catch (error) {
      if (!(error instanceof GeneratorTransientError)) throw error;
      // No upstream task to read the links again: only a new call gives new ones.
      this.#runs.drop(handle);
      throw new UpstreamRunLost(`${this.#deps.channel.name}: ${error.message}`, { cause: error });
    }
    const files = filesForPlan(downloads, request.plan);
    // Kept until the worker stored the files (`release`): a resume after our storage failed fetches the same
    // links again (they live about 24 h) instead of paying for a new call.
    return { files, caption: request.plan.caption, texts: request.plan.texts };
  }

  async cancel(handle: string, _signal?: AbortSignal): Promise<void> {
    this.#runs.cancel(handle);
  }

  /** The files are stored: the answer kept for `outputs` goes. */
  async release(handle: string, _signal?: AbortSignal): Promise<void> {
    this.#runs.drop(handle);
  }
}
