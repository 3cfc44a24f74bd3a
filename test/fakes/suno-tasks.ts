/**
 * Tasks of the fake sunoapi.org (`suno.ts`): what each create endpoint requires (PROVIDERS.md §2), how a
 * task's state moves with its age, and the record-info and callback bodies it shows.
 */
import { randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderMp3 } from '../../src/generators/simulator/media/mp3.ts';
import { drawPicture, encodePng } from '../../src/generators/simulator/media/png.ts';

export type FakeOutcome = 'ok' | 'sensitive' | 'failed' | 'copyright' | 'callback-exception' | 'stall';

export interface FakeTask {
  id: string;
  kind: 'music' | 'lyrics';
  endpoint: string;
  body: Record<string, unknown>;
  createdAt: number;
  outcome: FakeOutcome;
  /** The audio links serve a PNG. */
  notMp3: boolean;
}

const STAGES = ['PENDING', 'TEXT_SUCCESS', 'FIRST_SUCCESS', 'SUCCESS'] as const;

/** Create endpoints of music tasks and the fields each one cannot do without (PROVIDERS.md §2). */
export const MUSIC_ENDPOINTS: Readonly<Record<string, readonly string[]>> = {
  '/api/v1/generate': ['customMode', 'instrumental', 'model'],
  '/api/v1/generate/sounds': ['prompt', 'model'],
  '/api/v1/generate/add-vocals': ['uploadUrl', 'prompt', 'title', 'style', 'negativeTags', 'model'],
  '/api/v1/generate/add-instrumental': ['uploadUrl', 'title', 'tags', 'negativeTags', 'model'],
  '/api/v1/generate/upload-cover': ['uploadUrl', 'customMode', 'instrumental', 'model'],
  '/api/v1/generate/upload-extend': ['uploadUrl', 'defaultParamFlag', 'model'],
  '/api/v1/generate/replace-section': [
    'taskId',
    'audioId',
    'prompt',
    'tags',
    'title',
    'infillStartS',
    'infillEndS',
  ],
  '/api/v1/generate/mashup': ['uploadUrlList', 'customMode', 'model'],
};

/** The upstream's 400 message for a create body it would refuse, or null. */
export function createRefusal(endpoint: string, body: Record<string, unknown>): string | null {
  const missing = (MUSIC_ENDPOINTS[endpoint] ?? []).filter((field) => body[field] === undefined);
  if (typeof body['callBackUrl'] !== 'string') missing.unshift('callBackUrl');
  if (missing.length > 0) return `missing ${missing.join(', ')}`;
  if (endpoint === '/api/v1/generate/mashup') {
    const list = body['uploadUrlList'];
    if (!Array.isArray(list) || list.length !== 2) return 'uploadUrlList takes exactly 2 URLs';
  }
  if (endpoint === '/api/v1/generate/upload-extend' && body['defaultParamFlag'] === true) {
    const need = ['style', 'title', 'continueAt', ...(body['instrumental'] === true ? [] : ['prompt'])];
    const absent = need.filter((field) => body[field] === undefined);
    if (absent.length > 0) return `defaultParamFlag true needs ${absent.join(', ')}`;
  }
  // PROVIDERS.md §2: "`false` takes uploadUrl + prompt", whatever instrumental is.
  if (endpoint === '/api/v1/generate/upload-extend' && body['defaultParamFlag'] === false) {
    if (typeof body['prompt'] !== 'string' || body['prompt'] === '')
      return 'defaultParamFlag false needs prompt';
  }
  return SONG_ENDPOINTS.includes(endpoint) ? songRefusal(endpoint, body) : null;
}

const SONG_ENDPOINTS = ['/api/v1/generate', '/api/v1/generate/upload-cover', '/api/v1/generate/mashup'];

/** Custom mode needs style and title (and lyrics unless instrumental, but not for mashup); simple a prompt ≤ 500. */
function songRefusal(endpoint: string, body: Record<string, unknown>): string | null {
  if (body['customMode'] !== true) {
    if (typeof body['prompt'] !== 'string') return 'prompt is required in non-custom mode';
    return body['prompt'].length > 500 ? 'prompt is limited to 500 characters in non-custom mode' : null;
  }
  const lyrics = body['instrumental'] === true || endpoint.endsWith('/mashup') ? [] : ['prompt'];
  const absent = ['style', 'title', ...lyrics].filter((field) => body[field] === undefined);
  return absent.length > 0 ? `custom mode needs ${absent.join(', ')}` : null;
}

export function hasMarker(value: unknown, marker: string): boolean {
  if (typeof value === 'string') return value.includes(marker);
  if (Array.isArray(value)) return value.some((v) => hasMarker(v, marker));
  if (value !== null && typeof value === 'object') {
    return Object.values(value).some((v) => hasMarker(v, marker));
  }
  return false;
}

export function newTask(kind: FakeTask['kind'], endpoint: string, body: Record<string, unknown>): FakeTask {
  const outcomes = ['sensitive', 'failed', 'copyright', 'callback-exception', 'stall'] as const;
  return {
    id: randomUUID().replaceAll('-', ''),
    kind,
    endpoint,
    body,
    createdAt: Date.now(),
    outcome: outcomes.find((o) => hasMarker(body, `[suno:${o}]`)) ?? 'ok',
    notMp3: hasMarker(body, '[suno:not-mp3]'),
  };
}

/** State of a music task now, from its age: one stage per `stepMs`. */
export function stateOf(task: FakeTask, stepMs: number): string {
  if (task.outcome === 'stall') return 'PENDING';
  const stage = Math.floor((Date.now() - task.createdAt) / stepMs);
  if (task.outcome === 'sensitive' && stage >= 1) return 'SENSITIVE_WORD_ERROR';
  if ((task.outcome === 'failed' || task.outcome === 'copyright') && stage >= 2)
    return 'GENERATE_AUDIO_FAILED';
  if (task.outcome === 'callback-exception' && stage >= 3) return 'CALLBACK_EXCEPTION';
  return STAGES[Math.min(stage, 3)] as string;
}

/** Where file links point and how long they live. */
export interface LinkOptions {
  base: string;
  ttlMs: number;
  stepMs: number;
}

/** record-info `data` of a music task: tracks appear with TEXT_SUCCESS, audio with FIRST_SUCCESS. */
export function musicInfo(task: FakeTask, links: LinkOptions) {
  const status = stateOf(task, links.stepMs);
  const count = task.endpoint === '/api/v1/generate/sounds' ? 1 : 2;
  const final = status === 'SUCCESS' || status === 'CALLBACK_EXCEPTION';
  const withAudio = final ? count : status === 'FIRST_SUCCESS' ? 1 : 0;
  const failed = status === 'SENSITIVE_WORD_ERROR' || status === 'GENERATE_AUDIO_FAILED';
  const expires = Date.now() + links.ttlMs;
  const title = String(task.body['title'] ?? task.body['prompt'] ?? 'Fake song').slice(0, 40);
  const file = (i: number, ext: string) =>
    `${links.base}/files/${task.id}-a${i + 1}.${ext}?expires=${expires}`;
  const sunoData =
    status === 'PENDING' || failed
      ? []
      : Array.from({ length: count }, (_, i) => ({
          id: `${task.id}-a${i + 1}`,
          audioUrl: i < withAudio ? `${file(i, 'mp3')}${task.notMp3 ? '&as=png' : ''}` : '',
          streamAudioUrl: file(i, 'mp3'),
          imageUrl: file(i, 'png'),
          prompt: task.body['instrumental'] === true ? '' : `[Verse]\nLyrics of ${title} take ${i + 1}`,
          modelName: String(task.body['model'] ?? 'chirp'),
          title: `${title} ${i + 1}`,
          tags: String(task.body['style'] ?? task.body['tags'] ?? ''),
          createTime: task.createdAt,
          duration: 2,
        }));
  return {
    taskId: task.id,
    parentMusicId: '',
    param: JSON.stringify(task.body),
    status,
    operationType: 'generate',
    errorCode: failed ? (task.outcome === 'copyright' ? 400 : 501) : null,
    errorMessage: failed
      ? status === 'SENSITIVE_WORD_ERROR'
        ? 'Contains sensitive words'
        : 'Audio generation failed'
      : null,
    response: { taskId: task.id, sunoData },
  };
}

/** The callback §2 describes for a stage (`text`, `first`, `complete`, `error`), tracks in snake_case. */
export function callbackBody(task: FakeTask, type: string, links: LinkOptions): unknown {
  const info = musicInfo(task, links);
  if (type === 'error') {
    return {
      code: task.outcome === 'copyright' ? 400 : 501,
      msg: 'generation failed',
      data: { callbackType: 'error', task_id: task.id, error: info.errorMessage },
    };
  }
  const data = info.response.sunoData.map((t) => ({
    id: t.id,
    audio_url: t.audioUrl,
    stream_audio_url: t.streamAudioUrl,
    image_url: t.imageUrl,
    prompt: t.prompt,
    model_name: t.modelName,
    title: t.title,
    tags: t.tags,
    createTime: t.createTime,
    duration: t.duration,
  }));
  return {
    code: 200,
    msg: 'All generated successfully.',
    data: { callbackType: type, task_id: task.id, data },
  };
}

/** Lyrics record-info `data`: done after one step, two variants made from the idea. */
export function lyricsInfo(task: FakeTask, stepMs: number) {
  const done = Date.now() - task.createdAt >= stepMs;
  const sensitive = task.outcome === 'sensitive';
  const idea = String(task.body['prompt'] ?? '');
  const variants = [1, 2].map((n) => ({
    title: `Idea ${n}`,
    text: `[Verse]\n${idea} (variant ${n})`,
    status: 'complete',
    errorMessage: '',
  }));
  return {
    taskId: task.id,
    status: done ? (sensitive ? 'SENSITIVE_WORD_ERROR' : 'SUCCESS') : 'PENDING',
    errorCode: done && sensitive ? 400 : null,
    errorMessage: done && sensitive ? 'Contains sensitive words' : null,
    response: { taskId: task.id, lyricsData: done && !sensitive ? variants : [] },
  };
}

const mp3Bytes = new Map<number, Promise<Buffer>>();

/** A real MP3 of `durationSeconds` made by the simulator's encoder (once per length and process). */
export function sampleMp3(durationSeconds = 2): Promise<Buffer> {
  let bytes = mp3Bytes.get(durationSeconds);
  if (bytes === undefined) {
    bytes = (async () => {
      const path = join(tmpdir(), `suno-fake-${randomUUID()}.mp3`);
      await renderMp3(
        { kind: 'audio', format: 'mp3', filename: 'a.mp3', caption: '', seed: 'suno', durationSeconds },
        path,
      );
      const rendered = await readFile(path);
      await rm(path, { force: true });
      return rendered;
    })();
    mp3Bytes.set(durationSeconds, bytes);
  }
  return bytes;
}

/** A real PNG (cover images, and the "not mp3" fault). */
export const SAMPLE_PNG = encodePng(16, 16, drawPicture(16, 16, 'suno-cover'));
