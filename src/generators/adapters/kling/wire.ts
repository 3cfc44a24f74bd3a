/**
 * Kling's wire shapes (PROVIDERS.md §5): the `{ code, message, data }` envelope and its codes sorted into
 * the classes every adapter uses, the video bodies built from our settings, a task's status as our run
 * state.
 */
import { elementIds } from '../../../catalog/index.ts';
import { GenerationError, type GenerationStatus, GeneratorTransientError } from '../../generator.ts';
import { type Channel, ChannelOutOfCredit, type UpstreamResponse } from '../types.ts';
import { retryAfterMs } from '../upstream-failure.ts';

/** Kling's built-in upstream model of our v3.0; v4.0 and v4.0-omni come only from `upstream_models`. */
export const KLING_V3_MODEL = 'kling-v3-omni';
/** Polling besides the callbacks that wake a run (milliseconds). */
export const POLL_INTERVAL_MS = 5_000;

const TRANSIENT_CODES = new Set([1000, 1001, 1002, 1003, 1004, 1302, 1303, 5000, 5001, 5002]);
const NO_CREDIT_CODES = new Set([1101, 1102]);
const CONTENT_CODES = new Set([1300, 1301]);
/** A failed task's message naming the content policy (PROVIDERS.md "Normalised mapping"). */
const POLICY_MESSAGE = /policy|risk|sensitive/i;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * The `data` of a successful answer; throws the classified error otherwise: no credit (1101, 1102) →
 * `ChannelOutOfCredit`; 1300/1301 → `content_refused`; auth, rate, concurrency and server codes, any 429
 * or 5xx, and a 2xx without the envelope → transient; anything else → `generation_failed`.
 */
export function dataOf(response: UpstreamResponse, what: string): Record<string, unknown> {
  const body = isRecord(response.body) ? response.body : {};
  const code = typeof body['code'] === 'number' ? body['code'] : null;
  const ok = response.status >= 200 && response.status < 300;
  if (ok && code === 0 && isRecord(body['data'])) return body['data'];
  const said = text(body['message']);
  const reason = `Kling ${what}: HTTP ${response.status}${code === null ? '' : `, code ${code}`}${said ? `: ${said}` : ''}`;
  if (code !== null && NO_CREDIT_CODES.has(code)) throw new ChannelOutOfCredit(reason);
  if (code !== null && CONTENT_CODES.has(code)) throw new GenerationError('content_refused', reason);
  if (
    ok ||
    (code !== null && TRANSIENT_CODES.has(code)) ||
    response.status === 429 ||
    response.status >= 500
  ) {
    const wait = retryAfterMs(response.headers);
    throw new GeneratorTransientError(reason, wait === null ? {} : { retryAfterMs: wait });
  }
  throw new GenerationError('generation_failed', reason);
}

/** Which Kling endpoint a run uses. */
export type VideoEndpoint = 'omni-video' | 'text2video';

/** The endpoint of a `video-elements` version: v4.0 is text2video, the others omni-video. */
export function endpointOf(version: string): VideoEndpoint {
  return version === 'v4.0' ? 'text2video' : 'omni-video';
}

/** The endpoint and upstream model of a `video-elements` version (PROVIDERS.md §5 "Our mapping"). */
export function routeOf(version: string, channel: Channel): { endpoint: VideoEndpoint; model: string } {
  const configured = channel.upstreamModels[version];
  const endpoint = endpointOf(version);
  if (configured !== undefined) return { endpoint, model: configured };
  if (version === 'v3.0') return { endpoint, model: KLING_V3_MODEL };
  throw new GenerationError(
    'generation_failed',
    `Kling publishes no model for ${version}: the channel needs upstream_models.${version}`,
  );
}

/** What the body builder needs of a request. */
export interface VideoRequest {
  settings: Readonly<Record<string, unknown>>;
  records?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

interface Shot {
  prompt: string;
  duration: number;
}

/**
 * The body of `POST /v1/videos/{endpoint}` for a run: `Element_<id>` → `<<<element_N>>>` with the
 * elements in `element_list` in first-mention order (omni only), shots → `multi_prompt`, `length` →
 * `duration`, the constants `aspect_ratio 16:9`, `mode std`, `sound off`.
 */
export function videoBody(
  request: VideoRequest,
  route: { endpoint: VideoEndpoint; model: string },
  extra: { callback_url: string; external_task_id: string },
): Record<string, unknown> {
  const s = request.settings;
  const shots = (Array.isArray(s['shots']) ? s['shots'] : []) as Shot[];
  const prompt = typeof s['prompt'] === 'string' ? s['prompt'] : '';
  const texts = s['multi_shot'] === true ? shots.map((shot) => shot.prompt) : [prompt];
  const ids = [...new Set(texts.flatMap((t) => elementIds(t)))];
  const label = (t: string): string =>
    ids.reduce((out, id, i) => out.replaceAll(`Element_${id}`, `<<<element_${i + 1}>>>`), t);
  const common = {
    model_name: route.model,
    mode: 'std',
    sound: 'off',
    aspect_ratio: '16:9',
    duration: String(s['length'] ?? 5),
    ...extra,
  };
  if (route.endpoint === 'text2video') return { ...common, prompt };
  const element_list = ids.map((id) => {
    const upstream = request.records?.[id]?.['upstream_id'];
    if (typeof upstream !== 'string')
      throw new GenerationError('generation_failed', `element ${id} was not created at Kling`);
    return { element_id: upstream };
  });
  const scenes =
    s['multi_shot'] === true
      ? {
          multi_shot: true,
          shot_type: 'customize',
          multi_prompt: shots.map((shot, i) => ({
            index: i + 1,
            prompt: label(shot.prompt),
            duration: String(shot.duration),
          })),
        }
      : { prompt: label(prompt) };
  return { ...common, ...scenes, ...(element_list.length > 0 ? { element_list } : {}) };
}

/** A video task as the GET (or a callback) describes it; only the fields we read. */
export interface KlingTask {
  id: string;
  status: string;
  message: string;
  videoUrl: string | null;
  units: number | null;
}

export function taskOf(data: Record<string, unknown>): KlingTask {
  const id = text(data['task_id']);
  const status = text(data['task_status']);
  if (id === null || status === null)
    throw new GeneratorTransientError('Kling status: the task has no task_id or task_status');
  const result = isRecord(data['task_result']) ? data['task_result'] : {};
  const videos = Array.isArray(result['videos']) ? result['videos'] : [];
  const first = isRecord(videos[0]) ? videos[0] : {};
  const units = Number(data['final_unit_deduction']);
  return {
    id,
    status,
    message: text(data['task_status_msg']) ?? '',
    videoUrl: text(first['url']),
    units: data['final_unit_deduction'] === undefined || Number.isNaN(units) ? null : units,
  };
}

/** The run state of a task: `failed` is content when its message names policy, risk or sensitivity. */
export function statusOf(task: KlingTask): GenerationStatus {
  switch (task.status) {
    case 'submitted':
      return { state: 'running', progress: 0, pollAfterMs: POLL_INTERVAL_MS };
    case 'processing':
      return { state: 'running', progress: 50, pollAfterMs: POLL_INTERVAL_MS };
    case 'succeed':
      return task.units === null
        ? { state: 'succeeded' }
        : { state: 'succeeded', cost: { amount: task.units, currency: 'units' } };
    case 'failed':
      return {
        state: 'failed',
        code: POLICY_MESSAGE.test(task.message) ? 'content_refused' : 'generation_failed',
        reason: `Kling task failed${task.message ? `: ${task.message}` : ''}`,
      };
    default:
      throw new GeneratorTransientError(`Kling task ${task.id} has an unknown status ${task.status}`);
  }
}
