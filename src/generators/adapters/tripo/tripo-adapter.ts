/**
 * Tripo3D OpenAPI v2 behind the Generator port (PROVIDERS.md §1): model-3d in all three modes. A run is
 * `POST /upload` for each picture, `POST /task`, then `GET /task/{id}` every 5 s until it ends; its files
 * are downloaded at once, because Tripo's output links live about five minutes.
 *
 * Tripo has no idempotency key, no way to list tasks and no cancel, so:
 * - `find` answers null. The window this leaves: a crash after Tripo accepted `POST /task` and before the
 *   worker saved the task id starts a second upstream task on resume; the first one's result is never read
 *   (Tripo charges for it if it succeeds; failed tasks are free).
 * - `cancel` does nothing: a canceled or timed-out run is abandoned upstream and its late result discarded.
 */
import { rm } from 'node:fs/promises';
import type { ImageOutput, MeshOutput } from '../../../catalog/index.ts';
import {
  type GeneratedFile,
  GenerationError,
  type GenerationOutputs,
  type GenerationRequest,
  type GenerationStatus,
  GeneratorTransientError,
  type RunStart,
} from '../../generator.ts';
import type { Adapter, AdapterDeps, DownloadedOutput, UpstreamRequest } from '../types.ts';
import { dataOf, statusOf, type TripoTask, taskOf } from './answers.ts';
import { type TripoFile, taskBody } from './task-body.ts';

/** Tripo's public API root, for a channel without `base_url` (PROVIDERS.md §1). */
export const TRIPO_BASE_URL = 'https://api.tripo3d.ai/v2/openapi';
/** Our models a Tripo channel can serve (CONTRACT §11). */
export const TRIPO_MODELS: readonly string[] = ['model-3d'];

/** Picture formats Tripo takes, as its `type` names them. */
const PICTURE_TYPES: Readonly<Record<string, TripoFile['type']>> = { jpeg: 'jpg', png: 'png' };
/** Formats a preview may come in; Tripo renders PNG or WebP. */
const PREVIEW_FORMATS = new Set(['png', 'jpeg', 'webp']);

/** One Tripo channel's adapter. */
export function createTripoAdapter(deps: AdapterDeps): Adapter {
  return new TripoAdapter(deps);
}

class TripoAdapter implements Adapter {
  readonly #deps: AdapterDeps;

  constructor(deps: AdapterDeps) {
    this.#deps = deps;
  }

  /** Tripo has no health check; the router's circuit and credit state decide whether the channel is used. */
  async ensureAvailable(): Promise<void> {}

  async create(request: GenerationRequest, _run: RunStart, signal: AbortSignal): Promise<string> {
    const body = await taskBody(request, this.#deps.channel, (url) => this.#upload(url, request, signal));
    const data = await this.#call({ method: 'POST', path: '/task', json: body, signal }, 'create');
    const id = data['task_id'];
    if (typeof id !== 'string' || id === '')
      throw new GeneratorTransientError('Tripo create: the answer has no task_id');
    return id;
  }

  /** Tripo cannot look a task up by anything of ours (see the module comment for the window). */
  async find(): Promise<string | null> {
    return null;
  }

  async status(handle: string, _request: GenerationRequest, signal: AbortSignal): Promise<GenerationStatus> {
    return statusOf(await this.#readTask(handle, signal));
  }

  /**
   * The model file (`pbr_model ?? model ?? base_model`) and the rendered preview when there is one. A
   * download that fails re-reads the task once for fresh links (they expire after about five minutes); a
   * second failure is transient.
   */
  async outputs(
    handle: string,
    request: GenerationRequest,
    dir: string,
    signal: AbortSignal,
  ): Promise<GenerationOutputs> {
    let task = await this.#finishedTask(handle, signal);
    let files: GeneratedFile[];
    try {
      files = await this.#download(task, request, dir, signal);
    } catch (error) {
      if (!(error instanceof GeneratorTransientError) || signal.aborted) throw error;
      task = await this.#finishedTask(handle, signal);
      files = await this.#download(task, request, dir, signal);
    }
    return { files, caption: request.plan.caption, texts: [...request.plan.texts] };
  }

  /** Tripo has no cancel: the run is left to finish upstream and its result is never read. */
  async cancel(): Promise<void> {}

  async #call(request: Omit<UpstreamRequest, 'headers'>, what: string): Promise<Record<string, unknown>> {
    const key = this.#deps.channel.secrets['api_key'] ?? '';
    const response = await this.#deps.http.request({
      ...request,
      headers: { authorization: `Bearer ${key}` },
    });
    return dataOf(response, what);
  }

  async #readTask(handle: string, signal: AbortSignal): Promise<TripoTask> {
    const path = `/task/${encodeURIComponent(handle)}`;
    return taskOf(await this.#call({ method: 'GET', path, signal }, 'status'), 'status');
  }

  /** The task once it succeeded; a task that did not is reported as `status` would. */
  async #finishedTask(handle: string, signal: AbortSignal): Promise<TripoTask> {
    const task = await this.#readTask(handle, signal);
    const state = statusOf(task);
    if (state.state === 'failed') throw new GenerationError(state.code, state.reason);
    if (state.state === 'running')
      throw new GeneratorTransientError(`Tripo task ${handle} is ${task.status}, not finished`);
    return task;
  }

  /** Uploads one picture of the task's (our upload, its own result file, or a caller's link). */
  async #upload(url: string, request: GenerationRequest, signal: AbortSignal): Promise<TripoFile> {
    const input = await this.#deps.readInput(url, signal, request.taskId);
    const type = PICTURE_TYPES[input.format];
    if (type === undefined)
      throw new GenerationError('generation_failed', `Tripo takes JPEG or PNG pictures, not ${input.format}`);
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(input.bytes)], { type: input.contentType }), input.filename);
    const data = await this.#call({ method: 'POST', path: '/upload', form, signal }, 'upload');
    const token = data['image_token'];
    if (typeof token !== 'string' || token === '')
      throw new GeneratorTransientError('Tripo upload: the answer has no image_token');
    return { type, file_token: token };
  }

  /** Downloads the task's files; a failed one removes what this pass fetched, so a retry starts clean. */
  async #download(
    task: TripoTask,
    request: GenerationRequest,
    dir: string,
    signal: AbortSignal,
  ): Promise<GeneratedFile[]> {
    const mesh = request.plan.outputs.find((o): o is MeshOutput => o.kind === 'document');
    const preview = request.plan.outputs.find((o): o is ImageOutput => o.kind === 'image');
    if (mesh === undefined) throw new GenerationError('generation_failed', 'model-3d plans one model file');
    const link = (key: string): string | null => {
      const value = task.output[key];
      return typeof value === 'string' && value !== '' ? value : null;
    };
    const modelUrl = link('pbr_model') ?? link('model') ?? link('base_model');
    if (modelUrl === null)
      throw new GenerationError('generation_failed', `Tripo task ${task.task_id} succeeded without a model`);
    const previewUrl = preview === undefined ? null : link('rendered_image');
    const fetched: DownloadedOutput[] = [];
    try {
      const model = await this.#deps.download(modelUrl, dir, signal);
      fetched.push(model);
      if (model.format !== mesh.format)
        throw new GenerationError(
          'generation_failed',
          `Tripo returned a ${model.format} model where ${mesh.format} was asked for`,
        );
      const files = [fileOf(model, mesh, mesh.filename)];
      if (previewUrl !== null && preview !== undefined) {
        const image = await this.#deps.download(previewUrl, dir, signal);
        fetched.push(image);
        if (!PREVIEW_FORMATS.has(image.format))
          throw new GenerationError('generation_failed', `Tripo returned a ${image.format} preview`);
        files.push(fileOf(image, preview, previewName(preview.filename, image.format)));
      }
      return files;
    } catch (error) {
      await Promise.all(fetched.map((file) => rm(file.path, { force: true })));
      throw error;
    }
  }
}

function fileOf(file: DownloadedOutput, plan: MeshOutput | ImageOutput, filename: string): GeneratedFile {
  return {
    path: file.path,
    kind: plan.kind,
    filename,
    contentType: file.contentType,
    sizeBytes: file.sizeBytes,
    caption: plan.caption,
  };
}

/** The plan's preview name with the extension of what Tripo rendered (`preview.png`, `preview.webp`). */
function previewName(planned: string, format: string): string {
  const stem = planned.includes('.') ? planned.slice(0, planned.lastIndexOf('.')) : planned;
  return `${stem}.${format === 'jpeg' ? 'jpg' : format}`;
}
