/**
 * The library side of the ElevenLabs adapter (PROVIDERS.md §6, "Our mapping"): cloned voices of `voice`
 * (the samples downloaded and re-uploaded to `POST /v1/voices/add`; the record keeps `voice_id`) and music
 * styles of `music-styles` (finetunes that train: `training` until ElevenLabs says `completed`, asked with
 * `settle`). Busy or broken is 503 sg_unavailable; a refusal is the library's 502. No credit
 * (`quota_exceeded`) is thrown as `ChannelOutOfCredit`: the channel router disables the channel and
 * answers 503 (channel-library.ts).
 */
import { GenerationError, GeneratorTransientError, GeneratorUnavailable } from '../../generator.ts';
import {
  type HelperIO,
  type HelperName,
  type LibraryCreated,
  type LibraryCreateRequest,
  type LibraryGenerator,
  LibraryRejected,
  type RecordDeletion,
  type SettleAnswer,
  type SettleRequest,
} from '../../library.ts';
import { type AdapterDeps, ChannelOutOfCredit } from '../types.ts';
import { deletedUpstream } from '../upstream-failure.ts';
import { callElevenLabs, refusalOf } from './wire.ts';

/** When a finetune is first asked about after its creation, then between two questions (milliseconds). */
export const FINETUNE_FIRST_ASK_MS = 2_000;
export const FINETUNE_POLL_MS = 2_000;

/** Finetune states (PROVIDERS.md §6): still learning, learned, refused. */
const TRAINING = new Set(['pending', 'in_progress']);
const FAILED = new Set(['failed', 'blocked']);

/** The library's view of the adapter errors: busy or broken → 503, refused → 502, no credit goes on. */
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

function urlsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : typeof value === 'string' ? [value] : [];
}

export class ElevenLabsLibrary implements LibraryGenerator {
  readonly #deps: AdapterDeps;

  constructor(deps: AdapterDeps) {
    this.#deps = deps;
  }

  async ensureAvailable(): Promise<void> {}

  async createRecord(request: LibraryCreateRequest, signal: AbortSignal): Promise<LibraryCreated> {
    if (request.model === 'voice' && request.library === 'voices')
      return asLibraryCall(() => this.#cloneVoice(request, signal));
    if (request.model === 'music-styles' && request.library === 'styles')
      return asLibraryCall(() => this.#finetune(request, signal));
    throw new GeneratorUnavailable(`elevenlabs keeps no ${request.model} ${request.library}`);
  }

  /** `POST /v1/voices/add`: `name`, every sample as `files`, `remove_background_noise`. */
  async #cloneVoice(request: LibraryCreateRequest, signal: AbortSignal): Promise<LibraryCreated> {
    const form = new FormData();
    form.append('name', String(request.fields['name'] ?? request.recordId));
    await this.#appendFiles(form, 'files', urlsOf(request.fields['sample_urls']), signal);
    form.append('remove_background_noise', String(request.fields['remove_background_noise'] === true));
    const response = await callElevenLabs(this.#deps, {
      method: 'POST',
      path: '/v1/voices/add',
      form,
      signal,
    });
    if (response.status < 200 || response.status >= 300) throw refusalOf(this.#deps, response, 'clone voice');
    const voiceId = (response.body as { voice_id?: unknown } | null)?.voice_id;
    if (typeof voiceId !== 'string' || voiceId === '')
      throw new GeneratorTransientError(`${this.#deps.channel.name}: clone voice: no voice_id in the answer`);
    return { data: {}, upstreamId: voiceId };
  }

  /** `POST /v1/music/finetunes`: `name` = our record id, `primary_genre "other"`, private, tracks as `files`. */
  async #finetune(request: LibraryCreateRequest, signal: AbortSignal): Promise<LibraryCreated> {
    const form = new FormData();
    form.append('name', request.recordId);
    form.append('primary_genre', 'other');
    form.append('visibility', 'private');
    await this.#appendFiles(form, 'files', urlsOf(request.fields['track_urls']), signal);
    const response = await callElevenLabs(this.#deps, {
      method: 'POST',
      path: '/v1/music/finetunes',
      form,
      signal,
    });
    if (response.status < 200 || response.status >= 300)
      throw refusalOf(this.#deps, response, 'create music finetune');
    const id = (response.body as { id?: unknown } | null)?.id;
    if (typeof id !== 'string' || id === '')
      throw new GeneratorTransientError(`${this.#deps.channel.name}: create finetune: no id in the answer`);
    return {
      data: {},
      upstreamId: id,
      polled: { afterMs: FINETUNE_FIRST_ASK_MS, pollMs: FINETUNE_POLL_MS },
    };
  }

  /** `DELETE /v1/voices/{voice_id}` or `DELETE /v1/music/finetunes/{id}`; 404 means it was gone already. */
  async deleteRecord(request: RecordDeletion, signal: AbortSignal): Promise<void> {
    const id = encodeURIComponent(request.upstreamId);
    const path =
      request.model === 'voice' && request.library === 'voices'
        ? `/v1/voices/${id}`
        : request.model === 'music-styles' && request.library === 'styles'
          ? `/v1/music/finetunes/${id}`
          : null;
    if (path === null) return;
    const response = await callElevenLabs(this.#deps, { method: 'DELETE', path, signal });
    if (!deletedUpstream(response)) throw refusalOf(this.#deps, response, `delete ${request.library}`);
  }

  async #appendFiles(form: FormData, field: string, urls: string[], signal: AbortSignal): Promise<void> {
    for (const url of urls) {
      const input = await this.#deps.readInput(url, signal);
      const blob = new Blob([new Uint8Array(input.bytes)], { type: input.contentType });
      form.append(field, blob, input.filename);
    }
  }

  /** `GET /v1/music/finetunes/{id}`: pending/in_progress → running, completed → done, failed/blocked → failed. */
  async settle(request: SettleRequest, signal: AbortSignal): Promise<SettleAnswer> {
    const response = await callElevenLabs(this.#deps, {
      method: 'GET',
      path: `/v1/music/finetunes/${encodeURIComponent(request.upstreamId)}`,
      signal,
    });
    if (response.status < 200 || response.status >= 300) {
      const error = refusalOf(this.#deps, response, 'read music finetune');
      if (error instanceof GenerationError) return { state: 'failed', reason: error.message };
      throw error;
    }
    const finetune = (response.body ?? {}) as { status?: unknown; failure_reason?: unknown };
    const status = String(finetune.status ?? '');
    if (status === 'completed') return { state: 'done' };
    if (FAILED.has(status))
      return {
        state: 'failed',
        reason: `training ${status}: ${String(finetune.failure_reason ?? 'no reason given')}`,
      };
    if (TRAINING.has(status)) return { state: 'running' };
    throw new GeneratorTransientError(`${this.#deps.channel.name}: finetune in an unknown state "${status}"`);
  }

  async issuePhrase(): Promise<string> {
    throw new GeneratorUnavailable('elevenlabs issues no singing phrases');
  }

  async checkRecording(): Promise<never> {
    throw new GeneratorUnavailable('elevenlabs checks no singing recordings');
  }

  async runHelper<H extends HelperName>(helper: H): Promise<HelperIO[H]['output']> {
    throw new GeneratorUnavailable(`elevenlabs runs no ${helper} helper`);
  }
}
