/**
 * The Suno adapter (PROVIDERS.md §2): the `music` model on sunoapi.org. A run is one async create, then
 * record-info reads until the task ends; callbacks only wake the run (the worker's callback route) and
 * are consulted here only to poll again sooner while record-info lags behind them.
 *
 * Crash window: Suno has no idempotency key; `find()` takes the task id from the run's callbacks. A worker
 * that dies after Suno accepted the create and before the handle was saved, and resumes before any
 * callback came, starts a second upstream task; the first one's result is never used (its cost is Suno's
 * credits, not the caller's money).
 *
 * `CALLBACK_EXCEPTION` (Suno could not deliver a callback) with every track's audio is success (PROVIDERS.md,
 * decided there); with tracks still missing the run keeps polling, since only our callback endpoint failed,
 * and the channel timeout bounds it.
 */
import { slug } from '../../../catalog/index.ts';
import {
  type GeneratedFile,
  GenerationError,
  type GenerationOutputs,
  type GenerationRequest,
  type GenerationStatus,
  GeneratorTransientError,
  type RunStart,
} from '../../generator.ts';
import type { LibraryGenerator } from '../../library.ts';
import type { Adapter, AdapterDeps, DownloadedOutput } from '../types.ts';
import { type BodyContext, sunoCreateCall } from './bodies.ts';
import { hasAllAudio, readSunoTask, type SunoTask, type SunoTrack } from './record.ts';
import { asObject, SunoApi, stringField } from './wire.ts';

/** Fallback polling while no callback arrives (CONTRACT §11: every 5 s; Suno allows 20 requests / 10 s). */
export const SUNO_POLL_MS = 5_000;
/** Read again this soon when a final callback arrived before record-info shows the end. */
export const SUNO_LAG_POLL_MS = 1_000;

const RECORD_INFO = '/api/v1/generate/record-info';

/** Progress shown for the running states. */
const PROGRESS: Readonly<Record<string, number>> = {
  PENDING: 10,
  TEXT_SUCCESS: 40,
  FIRST_SUCCESS: 70,
  CALLBACK_EXCEPTION: 90,
};

/** What the worker stores for a run: the upstream task and our run key (to look up its callbacks). */
interface SunoHandle {
  v: 1;
  taskId: string;
  key: string;
}

function parseHandle(handle: string): SunoHandle {
  let parsed: Partial<SunoHandle> = {};
  try {
    parsed = JSON.parse(handle) as Partial<SunoHandle>;
  } catch {
    // Falls through to the refusal below: a handle we did not write.
  }
  if (parsed.v !== 1 || typeof parsed.taskId !== 'string' || typeof parsed.key !== 'string') {
    throw new GenerationError('generation_failed', 'unreadable suno run handle');
  }
  return parsed as SunoHandle;
}

/** Task error codes that mean the content (PROVIDERS.md "content": copyrighted lyrics, a known work). */
const CONTENT_CODES: ReadonlySet<number> = new Set([400, 413]);

/** The failure a final upstream state means, or null while the task is running or done. */
export function failureOf(task: SunoTask): GenerationStatus | null {
  const reason = task.errorMessage === '' ? task.status : `${task.status}: ${task.errorMessage}`;
  switch (task.status) {
    case 'SENSITIVE_WORD_ERROR':
      return { state: 'failed', code: 'content_refused', reason };
    case 'CREATE_TASK_FAILED':
    case 'GENERATE_AUDIO_FAILED':
      return {
        state: 'failed',
        code:
          task.errorCode !== null && CONTENT_CODES.has(task.errorCode)
            ? 'content_refused'
            : 'generation_failed',
        reason,
      };
    case 'PENDING':
    case 'TEXT_SUCCESS':
    case 'FIRST_SUCCESS':
    case 'SUCCESS':
    case 'CALLBACK_EXCEPTION':
      return null;
  }
}

/**
 * True when the task is finished with its audio: `SUCCESS` with any track's audio (a count Suno changes
 * must not strand a run), `CALLBACK_EXCEPTION` with every track (decided in PROVIDERS.md §2).
 */
export function isFinished(task: SunoTask, mode: string): boolean {
  if (task.status === 'SUCCESS') return task.tracks.some((t) => t.audioUrl !== undefined);
  return task.status === 'CALLBACK_EXCEPTION' && hasAllAudio(task, mode);
}

/** The `callbackType` of a callback body (`text`, `first`, `complete`, `error`), if readable. */
function callbackType(body: unknown): string | undefined {
  const data = (body as { data?: { callbackType?: unknown } } | null)?.data;
  return typeof data?.callbackType === 'string' ? data.callbackType : undefined;
}

/** An `error` callback whose code names the content (400 copyrighted lyrics, 413 a known work). */
function isContentErrorCallback(body: unknown): boolean {
  const code = (body as { code?: unknown } | null)?.code;
  return callbackType(body) === 'error' && typeof code === 'number' && CONTENT_CODES.has(code);
}

export class SunoAdapter implements Adapter {
  /** The helpers' side (set by `createSunoAdapter`). */
  library?: LibraryGenerator;
  readonly #deps: AdapterDeps;
  readonly #api: SunoApi;

  constructor(deps: AdapterDeps) {
    this.#deps = deps;
    this.#api = new SunoApi(deps.channel, deps.http);
  }

  /** Nothing to ask before a run: the router knows the channel's state, and Suno has no health call. */
  async ensureAvailable(): Promise<void> {}

  async create(request: GenerationRequest, run: RunStart, signal: AbortSignal): Promise<string> {
    const call = sunoCreateCall(
      request.mode,
      request.settings,
      await this.#bodyContext(request, run, signal),
    );
    const taskId = await this.#api.create(call.path, call.body, signal);
    return JSON.stringify({ v: 1, taskId, key: run.key } satisfies SunoHandle);
  }

  /**
   * A run whose handle was never saved (the worker died after Suno took the create): Suno has no
   * idempotency key and no search by our key, but its callbacks to the run's address name the task
   * (`data.task_id`), so once one came the run goes on with that task instead of paying for a second one.
   * Record-info still decides everything about it. Without a callback yet: null, a new create.
   */
  async find(_request: GenerationRequest, run: RunStart, _signal: AbortSignal): Promise<string | null> {
    for (const body of await this.#deps.callbacks.received(run.key)) {
      const taskId = stringField(asObject(asObject(body)?.['data'] ?? null), 'task_id');
      if (taskId !== undefined) return JSON.stringify({ v: 1, taskId, key: run.key } satisfies SunoHandle);
    }
    return null;
  }

  async status(handle: string, request: GenerationRequest, signal: AbortSignal): Promise<GenerationStatus> {
    const run = parseHandle(handle);
    const task = await this.#read(run.taskId, signal);
    const failure = failureOf(task);
    if (failure?.state === 'failed' && failure.code === 'generation_failed') {
      // Record-info decides that the task failed; an error callback's code 400/413 (copyrighted lyrics, a
      // known work) says it was the content (PROVIDERS.md "content").
      const callbacks = await this.#deps.callbacks.received(run.key);
      if (callbacks.some(isContentErrorCallback)) return { ...failure, code: 'content_refused' };
    }
    if (failure !== null) return failure;
    if (isFinished(task, request.mode)) return { state: 'succeeded' };
    // A final callback wakes the run; when record-info has not caught up yet, ask again soon.
    const callbacks = await this.#deps.callbacks.received(run.key);
    const woken = callbacks.some((body) => ['complete', 'error'].includes(callbackType(body) ?? ''));
    return {
      state: 'running',
      progress: PROGRESS[task.status] ?? 0,
      pollAfterMs: woken ? SUNO_LAG_POLL_MS : SUNO_POLL_MS,
    };
  }

  async outputs(
    handle: string,
    request: GenerationRequest,
    dir: string,
    signal: AbortSignal,
  ): Promise<GenerationOutputs> {
    const run = parseHandle(handle);
    let task = await this.#read(run.taskId, signal);
    if (!isFinished(task, request.mode)) {
      throw new GeneratorTransientError(`suno task ${run.taskId} has no finished audio (${task.status})`);
    }
    const tracks = task.tracks.filter((t) => t.audioUrl !== undefined);
    // Links by track id; a re-read refreshes them for the tracks still to come.
    const links = new Map(tracks.map((t) => [t.id, t.audioUrl as string]));
    const files: GeneratedFile[] = [];
    const texts: string[] = [];
    const plan = request.plan;
    // Texts per track as the plan has them: title and lyrics, the title only (instrumental), or none (sounds).
    const stride = plan.outputs.length > 0 ? Math.round(plan.texts.length / plan.outputs.length) : 0;
    for (const [index, track] of tracks.entries()) {
      let downloaded: DownloadedOutput;
      try {
        downloaded = await this.#deps.download(links.get(track.id) as string, dir, signal);
      } catch (error) {
        // A refusal for good (a file over the output cap) would come back from a fresh link too.
        if (signal.aborted || !(error instanceof GeneratorTransientError)) throw error;
        // Links are short-lived (PROVIDERS.md): read the task once more for fresh ones, then it is transient.
        task = await this.#read(run.taskId, signal);
        for (const t of task.tracks) if (t.audioUrl !== undefined) links.set(t.id, t.audioUrl);
        const fresh = task.tracks.find((t) => t.id === track.id)?.audioUrl;
        if (fresh === undefined) throw error;
        downloaded = await this.#deps.download(fresh, dir, signal);
      }
      if (downloaded.format !== 'mp3') {
        throw new GenerationError(
          'generation_failed',
          `suno track ${track.id} is ${downloaded.format}, not the promised mp3`,
        );
      }
      const planned = plan.outputs[index];
      const title = track.title ?? planned?.caption.replace(/\s*\(v\d+\)$/, '') ?? 'Untitled';
      const version = `v${index + 1}`;
      files.push({
        path: downloaded.path,
        kind: 'audio',
        filename: `${slug(title)}-${version}.mp3`,
        contentType: downloaded.contentType,
        sizeBytes: downloaded.sizeBytes,
        caption: `${title} (${version})`,
        // replace-section and personas name a track by its task and audio id (PROVIDERS.md §2).
        upstream: { provider: 'suno', ids: { taskId: run.taskId, audioId: track.id } },
      });
      texts.push(
        ...this.#texts(track, title, stride, plan.texts.slice(index * stride, index * stride + stride)),
      );
    }
    return { files, caption: plan.caption, texts };
  }

  /** Suno has no cancel: a canceled run is abandoned upstream and its late result discarded. */
  async cancel(): Promise<void> {}

  #texts(track: SunoTrack, title: string, stride: number, planned: string[]): string[] {
    if (stride === 0) return [];
    if (stride === 1) return [title];
    return [title, track.prompt ?? planned[1] ?? ''];
  }

  async #read(taskId: string, signal: AbortSignal): Promise<SunoTask> {
    return readSunoTask(await this.#api.read(RECORD_INFO, taskId, signal));
  }

  async #bodyContext(request: GenerationRequest, run: RunStart, signal: AbortSignal): Promise<BodyContext> {
    const { channel, callbacks } = this.#deps;
    const version = String(request.settings['model'] ?? 'V6');
    const context: BodyContext = {
      model: channel.upstreamModels[version] ?? version,
      callBackUrl: callbacks.urlFor(run.key),
      // replace_upload names its track by the upstream ids, never by a link: nothing to lend.
      publicUrl:
        request.mode === 'replace_upload'
          ? this.#deps.publicUrl
          : await this.#deps.inputLinks(request, signal),
    };
    const singer = this.#singer(request);
    if (singer !== undefined) context.singer = singer;
    if (request.mode === 'replace_upload') {
      const source = await this.#source(request, signal);
      if (source !== undefined) context.source = source;
    }
    return context;
  }

  /**
   * The upstream persona of `settings.persona` / `settings.voice`: the record's `upstream_id`, which only a
   * record saved at Suno has. Anything else cannot be sung by Suno: a final failure before any call.
   */
  #singer(request: GenerationRequest): BodyContext['singer'] {
    const s = request.settings;
    const field =
      typeof s['persona'] === 'string' ? 'persona' : typeof s['voice'] === 'string' ? 'voice' : null;
    if (field === null) return undefined;
    const id = String(s[field]);
    const upstream = request.inputs.records?.[id]?.['upstream_id'];
    if (typeof upstream !== 'string' || upstream === '') {
      throw new GenerationError('generation_failed', `the ${field} ${id} was not saved at suno`);
    }
    return { personaId: upstream, personaModel: field === 'persona' ? 'style_persona' : 'voice_persona' };
  }

  /** replace_upload's source: the upstream ids of our own suno output, when the service knows them. */
  async #source(request: GenerationRequest, signal: AbortSignal): Promise<BodyContext['source']> {
    const audio = request.settings['audio'];
    const url = Array.isArray(audio) ? audio[0] : undefined;
    if (typeof url !== 'string' || this.#deps.upstreamArtifact === undefined) return undefined;
    const artifact = await this.#deps.upstreamArtifact(url, signal);
    const taskId = artifact?.ids['taskId'];
    const audioId = artifact?.ids['audioId'];
    if (artifact?.provider !== 'suno' || taskId === undefined || audioId === undefined) return undefined;
    return { taskId, audioId };
  }
}
