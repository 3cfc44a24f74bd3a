/**
 * Kling behind the Generator port (PROVIDERS.md §5): `video-elements` in every version, with own scenes
 * (multi-shot) and saved elements, and the element library (elements.ts). Every request is signed with a
 * fresh JWT (jwt.ts). A run is `POST /v1/videos/omni-video` (v3.0, v4.0-omni) or `/v1/videos/text2video`
 * (v4.0) with a callback address; callbacks only wake the run, which then reads the task; polling every
 * 5 s goes on beside them. The video is downloaded at once.
 *
 * The handle is `<endpoint>:<task id>`, so the status is read where the task was made. Kling has no
 * cancel endpoint: a canceled or timed-out run is abandoned and its late result discarded. `find` takes
 * the task id from the run's callbacks (Kling looks tasks up by its own id only): a run resumed before any
 * callback came still starts a second task, the window every provider without an idempotency key leaves.
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
import type { Adapter, AdapterDeps, DownloadedOutput, UpstreamRequest, UpstreamResponse } from '../types.ts';
import { KlingElements } from './elements.ts';
import { klingToken } from './jwt.ts';
import {
  dataOf,
  endpointOf,
  isRecord,
  type KlingTask,
  routeOf,
  statusOf,
  taskOf,
  text,
  type VideoEndpoint,
  videoBody,
} from './wire.ts';

/** Kling's public API root, for a channel without `base_url` (PROVIDERS.md §5). */
export const KLING_BASE_URL = 'https://api-singapore.klingai.com';

/** One Kling channel's adapter. */
export function createKlingAdapter(deps: AdapterDeps): Adapter {
  return new KlingAdapter(deps);
}

/** Calls to Kling's API, each signed with a fresh token; answers unwrapped by `dataOf`. */
export class KlingApi {
  readonly #deps: AdapterDeps;

  constructor(deps: AdapterDeps) {
    this.#deps = deps;
  }

  /** The `data` of a successful answer; throws the classified error otherwise (`dataOf`). */
  async call(request: Omit<UpstreamRequest, 'headers'>, what: string): Promise<Record<string, unknown>> {
    return dataOf(await this.send(request), what);
  }

  /** The answer as it came, signed with a fresh token. */
  send(request: Omit<UpstreamRequest, 'headers'>): Promise<UpstreamResponse> {
    const { secrets } = this.#deps.channel;
    const token = klingToken(
      secrets['access_key'] ?? '',
      secrets['secret_key'] ?? '',
      this.#deps.clock.now(),
    );
    return this.#deps.http.request({ ...request, headers: { authorization: `Bearer ${token}` } });
  }
}

function handleOf(endpoint: VideoEndpoint, id: string): string {
  return `${endpoint}:${id}`;
}

function parseHandle(handle: string): { endpoint: VideoEndpoint; id: string } {
  const at = handle.indexOf(':');
  const endpoint = handle.slice(0, at);
  if (endpoint !== 'omni-video' && endpoint !== 'text2video')
    throw new GenerationError('generation_failed', `not a Kling run handle: ${handle}`);
  return { endpoint, id: handle.slice(at + 1) };
}

export class KlingAdapter implements Adapter {
  readonly #deps: AdapterDeps;
  readonly #api: KlingApi;
  readonly library: KlingElements;

  constructor(deps: AdapterDeps) {
    this.#deps = deps;
    this.#api = new KlingApi(deps);
    this.library = new KlingElements(deps, this.#api);
  }

  /** Kling has no health check; the router's circuit and credit state decide. */
  async ensureAvailable(): Promise<void> {}

  async create(request: GenerationRequest, run: RunStart, signal: AbortSignal): Promise<string> {
    const route = routeOf(String(request.settings['model_version'] ?? 'v3.0'), this.#deps.channel);
    const json = videoBody(
      request.inputs.records === undefined
        ? { settings: request.settings }
        : { settings: request.settings, records: request.inputs.records },
      route,
      { callback_url: this.#deps.callbacks.urlFor(run.key), external_task_id: run.key },
    );
    const data = await this.#api.call(
      { method: 'POST', path: `/v1/videos/${route.endpoint}`, json, signal },
      'create',
    );
    const id = data['task_id'];
    if (typeof id !== 'string' || id === '')
      throw new GeneratorTransientError('Kling create: the answer has no task_id');
    return handleOf(route.endpoint, id);
  }

  /**
   * A run whose handle was never saved (the worker died after Kling took the create): Kling looks tasks up
   * by its own id only, but its callbacks to the run's address carry that id and our `external_task_id`,
   * so once one came the run goes on with its task instead of paying for a second one. The worker then
   * reads the task as usual (a callback only names it). Without a callback yet: null, a new create.
   */
  async find(request: GenerationRequest, run: RunStart, _signal: AbortSignal): Promise<string | null> {
    const endpoint = endpointOf(String(request.settings['model_version'] ?? 'v3.0'));
    for (const body of await this.#deps.callbacks.received(run.key)) {
      if (!isRecord(body)) continue;
      const id = text(body['task_id']);
      const info = isRecord(body['task_info']) ? body['task_info'] : {};
      const external = info['external_task_id'];
      if (id !== null && (external === undefined || external === null || external === run.key))
        return handleOf(endpoint, id);
    }
    return null;
  }

  async status(handle: string, _request: GenerationRequest, signal: AbortSignal): Promise<GenerationStatus> {
    return statusOf(await this.#read(handle, signal));
  }

  /** The video; a failed download re-reads the task once for a fresh link, then is transient. */
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

  /** Kling has no cancel: the run is abandoned upstream and its result never read. */
  async cancel(): Promise<void> {}

  async #read(handle: string, signal: AbortSignal): Promise<KlingTask> {
    const { endpoint, id } = parseHandle(handle);
    const path = `/v1/videos/${endpoint}/${encodeURIComponent(id)}`;
    return taskOf(await this.#api.call({ method: 'GET', path, signal }, 'status'));
  }

  async #finished(handle: string, signal: AbortSignal): Promise<KlingTask> {
    const task = await this.#read(handle, signal);
    const state = statusOf(task);
    if (state.state === 'failed') throw new GenerationError(state.code, state.reason);
    if (state.state === 'running')
      throw new GeneratorTransientError(`Kling task ${task.id} is ${task.status}, not finished`);
    return task;
  }

  async #download(task: KlingTask, dir: string, signal: AbortSignal): Promise<DownloadedOutput> {
    if (task.videoUrl === null)
      throw new GenerationError('generation_failed', `Kling task ${task.id} succeeded without a video`);
    return this.#deps.download(task.videoUrl, dir, signal);
  }
}
