/**
 * The library side of the Recraft adapter (PROVIDERS.md §7): image styles (the pictures downloaded and
 * sent as `file1`…`fileN` to `POST /styles`; the record keeps Recraft's style id) and the `enhance`
 * helper (`POST /prompts/enhance`). Busy or broken is 503 sg_unavailable; a refusal is the library's 502.
 * No credit (402, a body naming credits) is thrown as `ChannelOutOfCredit`: the channel router disables
 * the channel and answers 503 (channel-library.ts).
 */
import { cutUnits } from '../../../lib/index.ts';
import { GenerationError, GeneratorTransientError, GeneratorUnavailable } from '../../generator.ts';
import {
  type HelperIO,
  type HelperName,
  type LibraryCreated,
  type LibraryCreateRequest,
  type LibraryGenerator,
  LibraryRejected,
  type RecordDeletion,
} from '../../library.ts';
import { type AdapterDeps, ChannelOutOfCredit } from '../types.ts';
import { deletedUpstream } from '../upstream-failure.ts';
import { callRecraft, RECRAFT_MODELS, refusalOf } from './wire.ts';

/** Recraft's limit of an enhanced prompt (characters). */
export const ENHANCE_PROMPT_MAX = 2000;

/** Busy or broken → 503, refused → 502 (libraries/ask-generator), no credit goes on for the router. */
async function asLibraryCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ChannelOutOfCredit) throw error;
    if (error instanceof GeneratorTransientError)
      throw new GeneratorUnavailable(error.message, { cause: error });
    if (error instanceof GenerationError) throw new LibraryRejected(error.message, { cause: error });
    throw error;
  }
}

export class RecraftLibrary implements LibraryGenerator {
  readonly #deps: AdapterDeps;

  constructor(deps: AdapterDeps) {
    this.#deps = deps;
  }

  async ensureAvailable(): Promise<void> {}

  async createRecord(request: LibraryCreateRequest, signal: AbortSignal): Promise<LibraryCreated> {
    if (request.model !== 'image' || request.library !== 'styles')
      throw new GeneratorUnavailable(`recraft keeps no ${request.model} ${request.library}`);
    return asLibraryCall(() => this.#createStyle(request, signal));
  }

  /** `POST /styles`: `style` (`any` or `vector_illustration`), `model`, `file1`…`fileN`. */
  async #createStyle(request: LibraryCreateRequest, signal: AbortSignal): Promise<LibraryCreated> {
    const vector = request.fields['type'] === 'vector';
    const form = new FormData();
    form.append('style', vector ? 'vector_illustration' : 'any');
    form.append('model', vector ? RECRAFT_MODELS.vector : RECRAFT_MODELS.raster);
    const urls = request.fields['image_urls'];
    const list = Array.isArray(urls) ? urls.map(String) : [];
    for (const [index, url] of list.entries()) {
      const input = await this.#deps.readInput(url, signal);
      const blob = new Blob([new Uint8Array(input.bytes)], { type: input.contentType });
      form.append(`file${index + 1}`, blob, input.filename);
    }
    const response = await callRecraft(this.#deps, { method: 'POST', path: '/styles', form, signal });
    if (response.status < 200 || response.status >= 300)
      throw refusalOf(this.#deps, response, 'create style');
    const id = (response.body as { id?: unknown } | null)?.id;
    if (typeof id !== 'string' || id === '')
      throw new GeneratorTransientError(`${this.#deps.channel.name}: create style: no id in the answer`);
    return { data: {}, upstreamId: id };
  }

  /** `DELETE /styles/{id}` (PROVIDERS.md §7, decided there); 404 means it was gone already. */
  async deleteRecord(request: RecordDeletion, signal: AbortSignal): Promise<void> {
    if (request.library !== 'styles') return;
    const path = `/styles/${encodeURIComponent(request.upstreamId)}`;
    const response = await callRecraft(this.#deps, { method: 'DELETE', path, signal });
    if (!deletedUpstream(response)) throw refusalOf(this.#deps, response, 'delete style');
  }

  async issuePhrase(): Promise<string> {
    throw new GeneratorUnavailable('recraft issues no singing phrases');
  }

  async checkRecording(): Promise<never> {
    throw new GeneratorUnavailable('recraft checks no singing recordings');
  }

  /** `enhance`: `POST /prompts/enhance {prompt}` → `{prompt}` (PROVIDERS.md §7, decided there). */
  async runHelper<H extends HelperName>(
    helper: H,
    input: HelperIO[H]['input'],
    signal: AbortSignal,
  ): Promise<HelperIO[H]['output']> {
    if (helper !== 'enhance') throw new GeneratorUnavailable(`recraft runs no ${helper} helper`);
    const prompt = cutUnits(String((input as HelperIO['enhance']['input']).prompt), ENHANCE_PROMPT_MAX);
    return asLibraryCall(async () => {
      const response = await callRecraft(this.#deps, {
        method: 'POST',
        path: '/prompts/enhance',
        json: { prompt },
        signal,
      });
      if (response.status < 200 || response.status >= 300)
        throw refusalOf(this.#deps, response, 'enhance prompt');
      const enhanced = (response.body as { prompt?: unknown } | null)?.prompt;
      if (typeof enhanced !== 'string' || enhanced === '')
        throw new GeneratorTransientError(`${this.#deps.channel.name}: enhance: no prompt in the answer`);
      const output: HelperIO['enhance']['output'] = { prompt: enhanced };
      return output as HelperIO[H]['output'];
    });
  }
}
