/**
 * BytePlus ModelArk Seedance behind the Generator port (PROVIDERS.md §4): `video` in its three modes and
 * `video-omni`. A run is `POST /contents/generations/tasks`, then `GET …/tasks/{id}` every 5 s (Seedance
 * has no callbacks); the video is downloaded at once.
 *
 * Seedance has no idempotency key and no lookup by anything of ours, so `find` answers null: a crash after
 * Seedance accepted the task and before the worker saved its id starts a second upstream task on resume
 * (the first one's result is never read). Cancel deletes the task while it is still `queued`; a running
 * one cannot be stopped and is abandoned.
 */
import {
  GenerationError,
  type GenerationOutputs,
  type GenerationRequest,
  type GenerationStatus,
  GeneratorTransientError,
  type RunStart,
} from '../../generator.ts';
import { singleOutput } from '../output-files.ts';
import type { Adapter, AdapterDeps, DownloadedOutput, UpstreamRequest } from '../types.ts';
import { SeedanceLibrary } from './library.ts';
import { bodyOf, recordLinks, type SeedanceTask, statusOf, taskBody, taskOf } from './wire.ts';

/** Seedance's public API root, for a channel without `base_url` (PROVIDERS.md §4). */
export const SEEDANCE_BASE_URL = 'https://ark.ap-southeast.bytepluses.com/api/v3';
const TASKS = '/contents/generations/tasks';

/** One Seedance channel's adapter. */
export function createSeedanceAdapter(deps: AdapterDeps): Adapter {
  return new SeedanceAdapter(deps);
}

export class SeedanceAdapter implements Adapter {
  readonly #deps: AdapterDeps;
  /** Characters and voices of video-omni are kept by us and sent as reference files. */
  readonly library = new SeedanceLibrary();

  constructor(deps: AdapterDeps) {
    this.#deps = deps;
  }

  /** Seedance has no health check; the router's circuit and credit state decide. */
  async ensureAvailable(): Promise<void> {}

  async create(request: GenerationRequest, _run: RunStart, signal: AbortSignal): Promise<string> {
    const records = recordsOf(request);
    // A record's files are no input files of the run: their links go through `publicLinks`, so one shaped
    // like an upload's but naming none (another host's `/files/<32 hex>/…`) stays at its own host.
    const kept = recordLinks(records.records);
    const keptLink = await this.#deps.publicLinks(kept);
    const runLink = await this.#deps.inputLinks(request, signal);
    const json = taskBody(
      { model: request.model, mode: request.mode, settings: request.settings, ...records },
      this.#deps.channel,
      (url) => (kept.includes(url) ? keptLink(url) : runLink(url)),
    );
    const body = await this.#call({ method: 'POST', path: TASKS, json, signal }, 'create');
    const id = body['id'];
    if (typeof id !== 'string' || id === '')
      throw new GeneratorTransientError('Seedance create: the answer has no id');
    return id;
  }

  /** Seedance cannot look a task up by anything of ours (see the module comment for the window). */
  async find(): Promise<string | null> {
    return null;
  }

  async status(handle: string, _request: GenerationRequest, signal: AbortSignal): Promise<GenerationStatus> {
    return statusOf(await this.#read(handle, signal));
  }

  /**
   * The video, named after the plan. A download that fails re-reads the task once for a fresh link; a
   * second failure is transient (PROVIDERS.md: output URLs are short-lived).
   */
  async outputs(
    handle: string,
    request: GenerationRequest,
    dir: string,
    signal: AbortSignal,
  ): Promise<GenerationOutputs> {
    return singleOutput(
      async () => this.#download(await this.#finished(handle, signal), dir, signal),
      request,
      signal,
    );
  }

  /**
   * DELETE while the task is still queued; a running task cannot be stopped and is abandoned. A DELETE
   * Seedance could not take (429, 5xx) throws as transient, so the cancel stays owed and is asked again
   * (upstream-cancels.ts); a refusal (the task started meanwhile) is final.
   */
  async cancel(handle: string, signal: AbortSignal): Promise<void> {
    const task = await this.#read(handle, signal);
    if (task.status !== 'queued') return;
    const path = `${TASKS}/${encodeURIComponent(handle)}`;
    const response = await this.#deps.http.request({ method: 'DELETE', path, headers: this.#auth(), signal });
    if (response.status < 200 || response.status >= 300) bodyOf(response, 'cancel');
  }

  #auth(): Record<string, string> {
    return { authorization: `Bearer ${this.#deps.channel.secrets['api_key'] ?? ''}` };
  }

  async #call(request: Omit<UpstreamRequest, 'headers'>, what: string): Promise<Record<string, unknown>> {
    return bodyOf(await this.#deps.http.request({ ...request, headers: this.#auth() }), what);
  }

  async #read(handle: string, signal: AbortSignal): Promise<SeedanceTask> {
    const path = `${TASKS}/${encodeURIComponent(handle)}`;
    return taskOf(await this.#call({ method: 'GET', path, signal }, 'status'));
  }

  /** The task once it succeeded; one that did not is reported as `status` would. */
  async #finished(handle: string, signal: AbortSignal): Promise<SeedanceTask> {
    const task = await this.#read(handle, signal);
    const state = statusOf(task);
    if (state.state === 'failed') throw new GenerationError(state.code, state.reason);
    if (state.state === 'running')
      throw new GeneratorTransientError(`Seedance task ${handle} is ${task.status}, not finished`);
    return task;
  }

  async #download(task: SeedanceTask, dir: string, signal: AbortSignal): Promise<DownloadedOutput> {
    if (task.videoUrl === null)
      throw new GenerationError('generation_failed', `Seedance task ${task.id} succeeded without a video`);
    return this.#deps.download(task.videoUrl, dir, signal);
  }
}

function recordsOf(request: GenerationRequest): {
  records?: NonNullable<GenerationRequest['inputs']['records']>;
} {
  return request.inputs.records === undefined ? {} : { records: request.inputs.records };
}
