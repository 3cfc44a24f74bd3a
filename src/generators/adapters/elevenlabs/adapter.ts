/**
 * The ElevenLabs adapter of one channel (PROVIDERS.md §6): `voice` (text_to_dialogue, voice_change) in
 * voices cloned at ElevenLabs, and `music-styles` (compose, with a trained finetune when `style` is set).
 * Every call is synchronous and answers audio bytes; the run keeps a local task record (sync-runs.ts) so
 * the worker still goes create → poll → outputs. ElevenLabs has no cancel: a canceled run stops waiting
 * for its call and its late answer is dropped.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  GenerationError,
  type GenerationOutputs,
  type GenerationRequest,
  type GenerationStatus,
  type RunStart,
} from '../../generator.ts';
import { filesForPlan } from '../output-files.ts';
import { sniffOutput } from '../output-type.ts';
import { SyncRuns } from '../sync-runs.ts';
import type { Adapter, AdapterDeps } from '../types.ts';
import { ElevenLabsLibrary } from './library.ts';
import {
  audioOf,
  callElevenLabs,
  dialogueInputs,
  OUTPUT_FORMAT,
  UPSTREAM_MODELS,
  upstreamVoice,
} from './wire.ts';

export class ElevenLabsAdapter implements Adapter {
  readonly #deps: AdapterDeps;
  readonly #runs = new SyncRuns<Buffer>('elevenlabs');
  readonly library: ElevenLabsLibrary;

  constructor(deps: AdapterDeps) {
    this.#deps = deps;
    this.library = new ElevenLabsLibrary(deps);
  }

  async ensureAvailable(): Promise<void> {}

  /**
   * Checks what fails before any call (voices not saved here, too many voices) and reads the input file,
   * then starts the call. A joined run (its call already started) reads nothing.
   */
  async create(request: GenerationRequest, run: RunStart, signal: AbortSignal): Promise<string> {
    if (this.#runs.has(run.key)) return run.key;
    const call = await this.#callOf(request, signal);
    this.#runs.start(run.key, call);
    return run.key;
  }

  async find(_request: GenerationRequest, run: RunStart, _signal: AbortSignal): Promise<string | null> {
    return this.#runs.has(run.key) ? run.key : null;
  }

  async status(
    handle: string,
    _request?: GenerationRequest,
    _signal?: AbortSignal,
  ): Promise<GenerationStatus> {
    return this.#runs.status(handle);
  }

  async outputs(
    handle: string,
    request: GenerationRequest,
    dir: string,
    _signal: AbortSignal,
  ): Promise<GenerationOutputs> {
    const bytes = this.#runs.result(handle);
    const type = await sniffOutput(bytes.subarray(0, 4100));
    const path = join(dir, randomUUID());
    await writeFile(path, bytes, { flag: 'wx' });
    const files = filesForPlan(
      [{ path, sizeBytes: bytes.length, format: type.format, contentType: type.contentType }],
      request.plan,
    );
    // Kept until the worker stored the files (`release`): a resume after our storage failed reads it again.
    return { files, caption: request.plan.caption, texts: request.plan.texts };
  }

  async cancel(handle: string, _signal?: AbortSignal): Promise<void> {
    this.#runs.cancel(handle);
  }

  /** The files are stored: the audio kept for `outputs` goes. */
  async release(handle: string, _signal?: AbortSignal): Promise<void> {
    this.#runs.drop(handle);
  }

  #model(key: string): string {
    return this.#deps.channel.upstreamModels[key] ?? (UPSTREAM_MODELS[key] as string);
  }

  /**
   * The one call of the run, checked up front; throws `GenerationError` for what fails before any call. The
   * input file of a voice change is read here, before the call starts: our storage failing to give it, or
   * the file being gone (`input_unavailable`), is then the run's create failing before any upstream call,
   * which the worker neither counts against the channel nor, for our storage, against the run's attempts.
   */
  async #callOf(
    request: GenerationRequest,
    signal: AbortSignal,
  ): Promise<(signal: AbortSignal) => Promise<Buffer>> {
    const deps = this.#deps;
    const s = request.settings;
    const query = `?output_format=${OUTPUT_FORMAT}`;
    if (request.model === 'music-styles') {
      const style = typeof s['style'] === 'string' ? s['style'] : undefined;
      const body = {
        prompt: String(s['prompt'] ?? ''),
        music_length_ms: Number(s['duration'] ?? 60) * 1000,
        force_instrumental: s['instrumental'] === true,
        model_id: this.#model('music-styles'),
        ...(style === undefined ? {} : { finetune_id: upstreamId(request, style, 'style') }),
      };
      return async (signal) =>
        audioOf(
          deps,
          await callElevenLabs(deps, { method: 'POST', path: `/v1/music${query}`, json: body, signal }),
          'compose',
        );
    }
    if (request.mode === 'text_to_dialogue') {
      const body = { inputs: dialogueInputs(request), model_id: this.#model('text_to_dialogue') };
      return async (signal) =>
        audioOf(
          deps,
          await callElevenLabs(deps, {
            method: 'POST',
            path: `/v1/text-to-dialogue${query}`,
            json: body,
            signal,
          }),
          'text-to-dialogue',
        );
    }
    if (request.mode === 'voice_change') {
      const voiceId = upstreamVoice(request, String(s['voice']));
      const audio = Array.isArray(s['audio']) ? String(s['audio'][0]) : String(s['audio']);
      const model = this.#model('voice_change');
      const input = await deps.readInput(audio, signal, request.taskId);
      return async (signal) => {
        const form = new FormData();
        form.append(
          'audio',
          new Blob([new Uint8Array(input.bytes)], { type: input.contentType }),
          input.filename,
        );
        form.append('model_id', model);
        const response = await callElevenLabs(deps, {
          method: 'POST',
          path: `/v1/speech-to-speech/${encodeURIComponent(voiceId)}${query}`,
          form,
          signal,
        });
        return audioOf(deps, response, 'speech-to-speech');
      };
    }
    throw new GenerationError(
      'generation_failed',
      `elevenlabs does not serve ${request.model} ${request.mode}`,
    );
  }
}

function upstreamId(request: GenerationRequest, id: string, what: string): string {
  const upstream = request.inputs.records?.[id]?.['upstream_id'];
  if (typeof upstream !== 'string' || upstream === '')
    throw new GenerationError('generation_failed', `the ${what} ${id} was not saved at elevenlabs`);
  return upstream;
}
