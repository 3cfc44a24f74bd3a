/**
 * Seedance's wire shapes (PROVIDERS.md §4): the task body built from our settings, its error bodies sorted
 * into the classes every adapter uses (PROVIDERS.md "Normalised mapping"), and a task's status as our run
 * state.
 */
import { GenerationError, type GenerationStatus, GeneratorTransientError } from '../../generator.ts';
import { type Channel, ChannelOutOfCredit, type UpstreamResponse, UpstreamRunLost } from '../types.ts';
import { retryAfterMs } from '../upstream-failure.ts';

/** The upstream model of `video` 3_0 and of `video-omni` unless the channel's `upstream_models` says. */
export const SEEDANCE_MODEL = 'dreamina-seedance-2-0-260128';
/** Seedance has no callbacks (decided in PROVIDERS.md §4): polled every 5 s. (milliseconds) */
export const POLL_INTERVAL_MS = 5_000;

/** One item of the task's `content`. */
export type ContentItem =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string }; role: string }
  | { type: 'video_url'; video_url: { url: string }; role: string }
  | { type: 'audio_url'; audio_url: { url: string }; role: string };

/** The body of `POST /contents/generations/tasks`. */
export interface SeedanceBody {
  model: string;
  content: ContentItem[];
  resolution: string;
  ratio: string;
  duration: number;
  generate_audio: true;
  watermark: false;
}

/** The reference files a video-omni record stands for (kept by us, see library.ts). */
export interface KeptFiles {
  images: string[];
  audio: string[];
}

const image = (url: string, role: string): ContentItem => ({ type: 'image_url', image_url: { url }, role });
const video = (url: string, role: string): ContentItem => ({ type: 'video_url', video_url: { url }, role });
const audio = (url: string, role: string): ContentItem => ({ type: 'audio_url', audio_url: { url }, role });

function list(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Our `duration` (`"5s"` or 5) as Seedance's integer seconds. */
function seconds(value: unknown): number {
  return typeof value === 'number' ? value : Number.parseInt(String(value), 10);
}

/** The reference files of a record a video-omni task names, from its upstream id; null when it has none. */
export function keptFiles(record: Readonly<Record<string, unknown>> | undefined): KeptFiles | null {
  const kept = record?.['upstream_id'];
  if (typeof kept !== 'string') return null;
  try {
    const parsed = JSON.parse(kept) as { images?: unknown; audio?: unknown };
    return { images: list(parsed.images), audio: list(parsed.audio) };
  } catch {
    return null;
  }
}

/**
 * Every link the records of a request hold (a character's pictures, a voice's samples, a preset's stored
 * sample): the links `taskBody` may send for them.
 */
export function recordLinks(records: BodyRequest['records']): string[] {
  const links: string[] = [];
  for (const record of Object.values(records ?? {})) {
    const kept = keptFiles(record);
    if (kept !== null) links.push(...kept.images, ...kept.audio);
    const sample = record['sample_url'];
    if (typeof sample === 'string') links.push(sample);
  }
  return links;
}

/** What the body builder needs of a request. */
export interface BodyRequest {
  model: string;
  mode: string;
  settings: Readonly<Record<string, unknown>>;
  records?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/**
 * The task body of a `video` (frames, reference, omni) or `video-omni` request, as PROVIDERS.md §4 "Our
 * mapping" decides. `publicUrl` turns our links into the absolute URLs Seedance fetches.
 */
export function taskBody(
  request: BodyRequest,
  channel: Channel,
  publicUrl: (url: string) => string,
): SeedanceBody {
  const s = request.settings;
  const content: ContentItem[] = [{ type: 'text', text: String(s['prompt'] ?? '') }];
  let ratio = String(s['aspect_ratio'] ?? '16:9');
  const url = publicUrl;
  if (request.model === 'video-omni') {
    // A record with nothing to send fails the task before any call, as PROVIDERS.md §4 sends every named
    // character and voice: dropping it would run (and charge for) a video without it.
    for (const id of list(s['character_ids'])) {
      const pictures = keptFiles(request.records?.[id])?.images ?? [];
      if (pictures.length === 0)
        throw new GenerationError('generation_failed', `character ${id} has no pictures here`);
      for (const picture of pictures) content.push(image(url(picture), 'reference_image'));
    }
    for (const id of list(s['audio_ids'])) {
      const record = request.records?.[id];
      // A person's voice: its first recording; a preset: its stored sample.
      const sample = record?.['sample_url'];
      const first = keptFiles(record)?.audio[0] ?? (typeof sample === 'string' ? sample : undefined);
      if (first === undefined)
        throw new GenerationError('generation_failed', `voice ${id} has no samples here`);
      content.push(audio(url(first), 'reference_audio'));
    }
  } else if (request.mode === 'frames') {
    const [first, last] = list(s['image_urls']);
    if (first !== undefined) content.push(image(url(first), 'first_frame'));
    if (last !== undefined) content.push(image(url(last), 'last_frame'));
    ratio = 'adaptive';
  } else {
    for (const picture of list(s['ref_image_urls'])) content.push(image(url(picture), 'reference_image'));
    for (const clip of list(s['ref_video_urls'])) content.push(video(url(clip), 'reference_video'));
    for (const sound of list(s['ref_audio_urls'])) content.push(audio(url(sound), 'reference_audio'));
    const [first] = list(s['first_frame_url']);
    if (first !== undefined) {
      content.push(image(url(first), 'reference_image'));
      ratio = 'adaptive';
    }
  }
  const version = request.model === 'video-omni' ? 'video-omni' : String(s['model'] ?? '3_0');
  return {
    model: channel.upstreamModels[version] ?? SEEDANCE_MODEL,
    content,
    resolution: request.model === 'video-omni' ? '720p' : String(s['quality'] ?? '720p'),
    ratio,
    duration: seconds(s['duration'] ?? 5),
    generate_audio: true,
    watermark: false,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** Content policy codes: `*Sensitive*` and `*RiskDetection` (PROVIDERS.md "content"). */
export function isContentCode(code: string): boolean {
  return code.includes('Sensitive') || code.endsWith('RiskDetection');
}

/** Busy, rate, quota, auth and server codes: worth another try (PROVIDERS.md "transient"). */
export function isTransientCode(code: string): boolean {
  return (
    code === 'AuthenticationError' ||
    code.startsWith('RateLimitExceeded') ||
    code === 'QuotaExceeded' ||
    code === 'InternalServiceError' ||
    code === 'ServerOverloaded'
  );
}

/** The `{ code, message }` of an error body or a failed task's `error`. */
function errorOf(value: unknown): { code: string; message: string } | null {
  const error = isRecord(value) ? value['error'] : null;
  if (!isRecord(error)) return null;
  return { code: text(error['code']) ?? '', message: text(error['message']) ?? '' };
}

/**
 * The body of a successful answer; throws the classified error otherwise: 429, 5xx and the transient codes
 * → `GeneratorTransientError`, `AccountOverdueError` → `ChannelOutOfCredit`, content codes →
 * `content_refused`, any other refusal → `generation_failed`. A 2xx that is not JSON is transient.
 */
export function bodyOf(response: UpstreamResponse, what: string): Record<string, unknown> {
  const ok = response.status >= 200 && response.status < 300;
  if (ok && isRecord(response.body)) return response.body;
  const error = errorOf(response.body);
  const reason = `Seedance ${what}: HTTP ${response.status}${error ? `: ${error.code} ${error.message}`.trimEnd() : ''}`;
  const code = error?.code ?? '';
  if (ok || response.status === 429 || response.status >= 500 || isTransientCode(code)) {
    const wait = retryAfterMs(response.headers);
    throw new GeneratorTransientError(reason, wait === null ? {} : { retryAfterMs: wait });
  }
  if (code === 'AccountOverdueError') throw new ChannelOutOfCredit(reason);
  if (isContentCode(code)) throw new GenerationError('content_refused', reason);
  throw new GenerationError('generation_failed', reason);
}

/** A task as `GET /contents/generations/tasks/{id}` describes it; only the fields we read. */
export interface SeedanceTask {
  id: string;
  status: string;
  videoUrl: string | null;
  error: { code: string; message: string } | null;
  totalTokens: number | null;
}

/** A task read from an answer; one without an id or a status is a broken answer (transient). */
export function taskOf(body: Record<string, unknown>): SeedanceTask {
  const id = text(body['id']);
  const status = text(body['status']);
  if (id === null || status === null)
    throw new GeneratorTransientError('Seedance status: the task has no id or status');
  const content = isRecord(body['content']) ? body['content'] : {};
  const usage = isRecord(body['usage']) ? body['usage'] : {};
  return {
    id,
    status,
    videoUrl: text(content['video_url']),
    error: errorOf(body),
    totalTokens: typeof usage['total_tokens'] === 'number' ? usage['total_tokens'] : null,
  };
}

/**
 * The run state of a task (PROVIDERS.md "Normalised mapping"): `failed` by `error.code` (a transient code
 * means the upstream run is lost and is run again, `AccountOverdueError` that the channel has no credit); `expired` and a `cancelled` we did not ask for mean
 * the task is gone: `UpstreamRunLost`.
 */
export function statusOf(task: SeedanceTask): GenerationStatus {
  switch (task.status) {
    case 'queued':
      return { state: 'running', progress: 0, pollAfterMs: POLL_INTERVAL_MS };
    case 'running':
      return { state: 'running', progress: 50, pollAfterMs: POLL_INTERVAL_MS };
    case 'succeeded':
      return task.totalTokens === null
        ? { state: 'succeeded' }
        : { state: 'succeeded', cost: { amount: task.totalTokens, currency: 'tokens' } };
    case 'failed': {
      const code = task.error?.code ?? '';
      const reason = `Seedance task failed${task.error ? `: ${code} ${task.error.message}`.trimEnd() : ''}`;
      if (isTransientCode(code)) throw new UpstreamRunLost(reason);
      // The account fell into arrears while the task waited: the channel has no credit, the run moves on.
      if (code === 'AccountOverdueError') throw new ChannelOutOfCredit(reason);
      return { state: 'failed', code: isContentCode(code) ? 'content_refused' : 'generation_failed', reason };
    }
    case 'expired':
    case 'cancelled':
      throw new UpstreamRunLost(`Seedance task ${task.id} is ${task.status}`);
    default:
      throw new GeneratorTransientError(`Seedance task ${task.id} has an unknown status ${task.status}`);
  }
}
