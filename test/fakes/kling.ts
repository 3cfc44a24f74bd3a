/**
 * A fake Kling API (PROVIDERS.md §5) on 127.0.0.1: every request's JWT checked (kling-auth.ts), the
 * `{ code, message, request_id, data }` envelope, `POST /v1/videos/omni-video` and `/text2video` checked
 * against the documented rules (kling-rules.ts), tasks that go submitted → processing → their outcome with
 * a callback at each change, `GET` of a task, video links that expire, element creation as an
 * asynchronous task, and faults on demand. Prompt markers: `[kling:refuse]` (400/1301 at creation),
 * `[kling:policy]` (the task fails with a risk-control message), `[kling:failed]` (fails otherwise); an
 * element named with `[kling:refuse]` fails its creation. `GET /v1/general/advanced-custom-elements`
 * lists an account's element creations, newest first, `pageNum`/`pageSize` paged.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { makeMp4 } from '../../src/media/fixtures.ts';
import { checkToken } from './kling-auth.ts';
import { checkElement, checkOmni, checkText2Video, type Refusal } from './kling-rules.ts';
import {
  type FakeReply,
  type FakeRequest,
  type FakeServer,
  gatewayPage,
  postJson,
  startFakeServer,
} from './server.ts';

export type KlingFault =
  /** The next POST answers 429 code 1302 (rate) with `Retry-After: 1`. */
  | '429'
  /** The next POST answers 500 code 5000. */
  | '5xx'
  /** The next POST answers 429 code 1102 (resource pack depleted). */
  | 'no-credit'
  /** The next POST answers a gateway's HTML page: 429 with `Retry-After: 7`. */
  | 'gateway-429'
  /** The next POST answers a gateway's HTML page: 503 with `Retry-After: 3`. */
  | 'gateway-503'
  /** The next POST is taken (its task starts) but never answered: the caller's wait runs out. */
  | 'lost-answer';

export interface KlingFakeOptions {
  /** Access key → secret key of the accounts. (Default: `{ 'kling-ak': 'kling-sk' }`) */
  keys?: Readonly<Record<string, string>>;
  /** Model names the omni and text endpoints take besides the published two. (Default: none) */
  extraModels?: readonly string[];
  /** Time in each of submitted and processing (milliseconds). (Default: 150) */
  stepMs?: number;
  /** Life of a video link (milliseconds). (Default: 3000) */
  urlTtlMs?: number;
  /** Posts a callback. (Default: HTTP POST with retries) */
  deliver?: (url: string, body: unknown) => Promise<unknown>;
  /**
   * Tasks an account may have from `submitted` to its end at once; one more is refused 429 code 1303
   * (concurrency) with `Retry-After: 1` (PROVIDERS.md §5). (Default: 20)
   */
  maxConcurrentTasks?: number;
  port?: number;
}

export interface KlingTask {
  id: string;
  kind: 'omni-video' | 'text2video' | 'element';
  iss: string;
  body: Record<string, unknown>;
  status: 'submitted' | 'processing' | 'succeed' | 'failed';
  message: string;
  outcome: 'succeed' | 'policy' | 'failed';
  videoUrl: string | null;
  videoUntil: number;
  elementId: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface KlingFake extends FakeServer {
  tasks: Map<string, KlingTask>;
  /** Element ids created, by access key. */
  elements: Map<string, Set<string>>;
  /** Every verified token's claims, in order (`iss`, `exp`, `nbf`), and the raw tokens. */
  tokens: { iss: string; exp: number; nbf: number; raw: string; at: number }[];
  fail(...faults: KlingFault[]): void;
  /** This many next video links are issued already expired. */
  staleLinks: number;
  options: KlingFakeOptions;
}

const PUBLISHED = ['kling-video-o1', 'kling-v3-omni'];

const envelope = (data: unknown): FakeReply => ({
  status: 200,
  body: { code: 0, message: 'SUCCEED', request_id: `req-${Date.now()}`, data },
});
const refuse = (r: Refusal, headers?: Record<string, string>): FakeReply => ({
  status: r.status,
  body: { code: r.code, message: r.message, request_id: `req-${Date.now()}` },
  ...(headers ? { headers } : {}),
});

/** Starts the fake on 127.0.0.1. */
export async function startKlingFake(options: KlingFakeOptions = {}): Promise<KlingFake> {
  const dir = await mkdtemp(path.join(tmpdir(), 'kling-fake-'));
  const mp4 = await readFile(await makeMp4(dir, 1, 64, 64));
  await rm(dir, { recursive: true, force: true });
  const tasks = new Map<string, KlingTask>();
  const elements = new Map<string, Set<string>>();
  const tokens: KlingFake['tokens'] = [];
  const faults: KlingFault[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const deliver = options.deliver ?? ((url: string, body: unknown) => postJson(url, body));
  const state = { staleLinks: 0 };
  let server: FakeServer;
  let serial = 0;

  const later = (ms: number, fn: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };
  const view = (task: KlingTask): Record<string, unknown> => {
    const base: Record<string, unknown> = {
      task_id: task.id,
      task_status: task.status,
      task_status_msg: task.message,
      task_info: { external_task_id: task.body['external_task_id'] ?? null },
      created_at: task.createdAt,
      updated_at: task.updatedAt,
    };
    if (task.status !== 'succeed') return base;
    if (task.kind === 'element') {
      const b = task.body;
      return {
        ...base,
        task_result: {
          elements: [
            {
              element_id: task.elementId,
              element_name: b['element_name'],
              element_description: b['element_description'],
              reference_type: b['reference_type'],
              element_image_list: b['element_image_list'] ?? null,
              element_video_list: b['element_video_list'] ?? null,
              tag_list: b['tag_list'] ?? [],
              owned_by: 'user',
              status: 'succeed',
            },
          ],
        },
      };
    }
    if (task.videoUrl === null || task.videoUntil < Date.now()) {
      const stale = state.staleLinks > 0;
      if (stale) state.staleLinks--;
      const ttl = stale ? -1_000 : (options.urlTtlMs ?? 3_000);
      task.videoUrl = server.serveFile(mp4, 'video/mp4', ttl);
      task.videoUntil = Date.now() + ttl;
    }
    return {
      ...base,
      final_unit_deduction: '10',
      task_result: {
        videos: [
          {
            id: `v-${task.id}`,
            url: task.videoUrl,
            watermark_url: '',
            duration: String(task.body['duration']),
          },
        ],
      },
    };
  };
  const move = (task: KlingTask, status: KlingTask['status'], message = ''): void => {
    task.status = status;
    task.message = message;
    task.updatedAt = Date.now();
    if (status === 'succeed' && task.kind === 'element') {
      task.elementId = String(800000 + ++serial);
      const owned = elements.get(task.iss) ?? new Set<string>();
      owned.add(task.elementId);
      elements.set(task.iss, owned);
    }
    const url = task.body['callback_url'];
    if (typeof url === 'string') void deliver(url, view(task)).catch(() => {});
  };
  const run = (task: KlingTask): void => {
    const step = options.stepMs ?? 150;
    later(step, () => move(task, 'processing'));
    later(2 * step, () => {
      if (task.outcome === 'policy') move(task, 'failed', 'Failure to pass the risk control system');
      else if (task.outcome === 'failed') move(task, 'failed', 'Internal rendering error');
      else move(task, 'succeed');
    });
  };
  const create = (
    request: FakeRequest,
    iss: string,
    kind: KlingTask['kind'],
  ): FakeReply | Promise<FakeReply> => {
    const fault = faults.shift();
    if (fault === '429')
      return refuse({ status: 429, code: 1302, message: 'rate limit exceeded' }, { 'retry-after': '1' });
    if (fault === '5xx') return refuse({ status: 500, code: 5000, message: 'server internal error' });
    if (fault === 'no-credit') return refuse({ status: 429, code: 1102, message: 'resource pack exhausted' });
    if (fault === 'gateway-429') return gatewayPage(429, 7);
    if (fault === 'gateway-503') return gatewayPage(503, 3);
    const running = [...tasks.values()].filter(
      (t) => t.iss === iss && (t.status === 'submitted' || t.status === 'processing'),
    );
    if (running.length >= (options.maxConcurrentTasks ?? 20))
      return refuse(
        { status: 429, code: 1303, message: 'parallel task over resource pack limit' },
        { 'retry-after': '1' },
      );
    const body = (request.body ?? {}) as Record<string, unknown>;
    const models = [...PUBLISHED, ...(options.extraModels ?? [])];
    const owned = elements.get(iss) ?? new Set<string>();
    const broken =
      kind === 'omni-video'
        ? checkOmni(body, models, owned)
        : kind === 'text2video'
          ? checkText2Video(body, models)
          : checkElement(body);
    if (broken) return refuse(broken);
    const said = JSON.stringify(body);
    if (kind !== 'element' && said.includes('[kling:refuse]'))
      return refuse({ status: 400, code: 1301, message: 'content security: the prompt is not allowed' });
    const outcome = said.includes('[kling:policy]')
      ? 'policy'
      : said.includes('[kling:failed]') || (kind === 'element' && said.includes('[kling:refuse]'))
        ? 'failed'
        : 'succeed';
    const now = Date.now();
    const task: KlingTask = {
      id: `${kind}-${now}-${++serial}`,
      kind,
      iss,
      body,
      status: 'submitted',
      message: '',
      outcome: kind === 'element' && outcome === 'failed' ? 'policy' : outcome,
      videoUrl: null,
      videoUntil: 0,
      elementId: null,
      createdAt: now,
      updatedAt: now,
    };
    tasks.set(task.id, task);
    run(task);
    if (fault === 'lost-answer') return new Promise<FakeReply>(() => {});
    return envelope(view(task));
  };

  server = await startFakeServer((request) => {
    const checked = checkToken(request.headers.authorization, options.keys ?? { 'kling-ak': 'kling-sk' });
    if (!checked.ok) return refuse({ status: 401, code: checked.code, message: checked.message });
    tokens.push({
      iss: checked.iss,
      exp: checked.exp,
      nbf: checked.nbf,
      raw: String(request.headers.authorization).slice(7),
      at: Date.now(),
    });
    const kinds = {
      'omni-video': '/v1/videos/omni-video',
      text2video: '/v1/videos/text2video',
      element: '/v1/general/advanced-custom-elements',
    } as const;
    if (request.method === 'POST' && request.path === '/v1/general/delete-elements') {
      const fault = faults.shift();
      if (fault === '5xx') return refuse({ status: 500, code: 5000, message: 'server internal error' });
      const id = String(((request.body ?? {}) as Record<string, unknown>)['element_id'] ?? '');
      if (!elements.get(checked.iss)?.delete(id))
        return refuse({ status: 404, code: 1202, message: 'element not found' });
      return envelope({});
    }
    if (request.method === 'GET' && request.path === kinds.element) {
      const size = Number(request.query.get('pageSize') ?? 30);
      const page = Number(request.query.get('pageNum') ?? 1);
      const listed = [...tasks.values()]
        .filter((t) => t.kind === 'element' && t.iss === checked.iss)
        .reverse()
        .slice((page - 1) * size, page * size);
      return envelope(listed.map(view));
    }
    for (const [kind, prefix] of Object.entries(kinds) as [KlingTask['kind'], string][]) {
      if (request.method === 'POST' && request.path === prefix) return create(request, checked.iss, kind);
      if (request.method === 'GET' && request.path.startsWith(`${prefix}/`)) {
        const task = tasks.get(decodeURIComponent(request.path.slice(prefix.length + 1)));
        if (!task || task.kind !== kind || task.iss !== checked.iss)
          return refuse({ status: 404, code: 1203, message: 'task not found' });
        return envelope(view(task));
      }
    }
    return null;
  }, options.port);

  const close = server.close;
  const fake = Object.assign(server, {
    tasks,
    elements,
    tokens,
    options,
    staleLinks: 0,
    fail(...more: KlingFault[]) {
      faults.push(...more);
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      await close();
    },
  });
  Object.defineProperty(fake, 'staleLinks', {
    get: () => state.staleLinks,
    set: (n: number) => {
      state.staleLinks = n;
    },
  });
  return fake;
}
