/**
 * A fake BytePlus ModelArk Seedance (PROVIDERS.md §4) on 127.0.0.1: Bearer keys, `POST
 * /contents/generations/tasks` checked against the documented rules (roles, mutually exclusive modes,
 * reference counts, enums, duration 4–15 or −1, 120 queued per key), tasks that go queued → running → their
 * outcome over a set time, `GET` for the creating key only, `DELETE` as documented, video links that
 * expire, and faults on demand. Prompt markers choose an outcome: `[seedance:refuse]` (400
 * `InputTextSensitiveContentDetected` at creation), `[seedance:output-sensitive]` (the task fails with
 * `OutputVideoSensitiveContentDetected`), `[seedance:failed]` (fails with `InvalidParameter`), `[seedance:expired]` (the task expires).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { makeMp4 } from '../../src/media/fixtures.ts';
import { type FakeReply, type FakeRequest, type FakeServer, gatewayPage, startFakeServer } from './server.ts';

export type SeedanceFault =
  /** The next POST answers 429 `RateLimitExceeded.EndpointRPM` with `Retry-After: 1`. */
  | '429'
  /** The next POST answers 500 `InternalServiceError`. */
  | '5xx'
  /** The next POST answers 403 `AccountOverdueError`. */
  | 'overdue'
  /** The next POST answers a gateway's HTML page: 429 with `Retry-After: 7`. */
  | 'gateway-429'
  /** The next POST answers a gateway's HTML page: 503 with `Retry-After: 3`. */
  | 'gateway-503';

export interface SeedanceFakeOptions {
  /** Keys that authenticate. (Default: `['ark-test-key']`) */
  apiKeys?: readonly string[];
  /** Time a task stays queued (milliseconds). (Default: 200) */
  queuedMs?: number;
  /** Time a task runs after that (milliseconds). (Default: 400) */
  runningMs?: number;
  /** Life of a video link (milliseconds). (Default: 3000) */
  urlTtlMs?: number;
  port?: number;
}

export interface SeedanceTask {
  id: string;
  key: string;
  body: Record<string, unknown>;
  createdAt: number;
  outcome: 'succeeded' | 'output-sensitive' | 'failed' | 'expired';
  cancelled: boolean;
  videoUrl: string | null;
  videoUntil: number;
}

export interface SeedanceFake extends FakeServer {
  tasks: Map<string, SeedanceTask>;
  /** The POST bodies accepted, in order. */
  bodies: Record<string, unknown>[];
  /** Ids a DELETE reached. */
  deletes: string[];
  fail(...faults: SeedanceFault[]): void;
  /** This many next video links are issued already expired (a link that died before we fetched it). */
  staleLinks: number;
  options: SeedanceFakeOptions;
}

const ROLES: Record<string, string[]> = {
  image_url: ['first_frame', 'last_frame', 'reference_image'],
  video_url: ['reference_video'],
  audio_url: ['reference_audio'],
};
const RESOLUTIONS = ['480p', '720p', '1080p'];
const RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', 'adaptive'];

const refuse = (status: number, code: string, message: string): FakeReply => ({
  status,
  body: { error: { code, message } },
});

/** The documented rules of a task body; the refusal for the first one broken, or null. */
export function checkSeedanceBody(body: Record<string, unknown>): FakeReply | null {
  const bad = (message: string): FakeReply => refuse(400, 'InvalidParameter', message);
  if (typeof body['model'] !== 'string' || body['model'] === '')
    return refuse(400, 'MissingParameter', 'model is required');
  const content = body['content'];
  if (!Array.isArray(content) || content.length === 0)
    return refuse(400, 'MissingParameter', 'content is required');
  const roles: string[] = [];
  for (const item of content as Record<string, unknown>[]) {
    const type = String(item['type']);
    if (type === 'text') {
      if (typeof item['text'] !== 'string') return bad('text must be a string');
      continue;
    }
    const allowed = ROLES[type];
    if (!allowed) return bad(`unknown content type ${type}`);
    const link = (item[type] as { url?: unknown } | undefined)?.url;
    if (typeof link !== 'string' || !/^https?:\/\//.test(link)) return bad(`${type}.url must be a URL`);
    if (!allowed.includes(String(item['role']))) return bad(`role ${String(item['role'])} for ${type}`);
    roles.push(String(item['role']));
  }
  const count = (role: string): number => roles.filter((r) => r === role).length;
  const frames = count('first_frame') + count('last_frame');
  const refs = roles.length - frames;
  if (frames > 0 && refs > 0) return bad('frames and references are mutually exclusive');
  if (count('last_frame') > 0 && count('first_frame') !== 1) return bad('last_frame needs a first_frame');
  if (count('first_frame') > 1 || count('last_frame') > 1) return bad('one first and one last frame');
  if (count('reference_image') > 9) return bad('at most 9 reference images');
  if (count('reference_video') > 3) return bad('at most 3 reference videos');
  if (count('reference_audio') > 3) return bad('at most 3 reference audio');
  if (count('reference_audio') > 0 && count('reference_image') + count('reference_video') === 0)
    return bad('reference audio needs an image or a video');
  if (body['resolution'] !== undefined && !RESOLUTIONS.includes(String(body['resolution'])))
    return bad('resolution');
  if (body['ratio'] !== undefined && !RATIOS.includes(String(body['ratio']))) return bad('ratio');
  const duration = body['duration'];
  if (duration !== undefined && duration !== -1) {
    if (typeof duration !== 'number' || !Number.isInteger(duration) || duration < 4 || duration > 15)
      return bad('duration must be 4 to 15 or -1');
  }
  return null;
}

/** Starts the fake on 127.0.0.1. */
export async function startSeedanceFake(options: SeedanceFakeOptions = {}): Promise<SeedanceFake> {
  const dir = await mkdtemp(path.join(tmpdir(), 'seedance-fake-'));
  const mp4 = await readFile(await makeMp4(dir, 1, 64, 64));
  await rm(dir, { recursive: true, force: true });
  const tasks = new Map<string, SeedanceTask>();
  const bodies: Record<string, unknown>[] = [];
  const deletes: string[] = [];
  const faults: SeedanceFault[] = [];
  const keys = options.apiKeys ?? ['ark-test-key'];
  let server: FakeServer;
  let serial = 0;
  const fake = { staleLinks: 0 };

  const statusOf = (task: SeedanceTask): string => {
    if (task.cancelled) return 'cancelled';
    const age = Date.now() - task.createdAt;
    if (age < (options.queuedMs ?? 200)) return 'queued';
    if (age < (options.queuedMs ?? 200) + (options.runningMs ?? 400)) return 'running';
    return task.outcome === 'output-sensitive' ? 'failed' : task.outcome;
  };
  const view = (task: SeedanceTask): Record<string, unknown> => {
    const status = statusOf(task);
    const b = task.body;
    const base = {
      id: task.id,
      model: b['model'],
      status,
      error: null as unknown,
      resolution: b['resolution'] ?? '720p',
      ratio: b['ratio'] ?? '16:9',
      duration: b['duration'] ?? 5,
      created_at: Math.floor(task.createdAt / 1000),
      updated_at: Math.floor(Date.now() / 1000),
    };
    if (status === 'succeeded') {
      // A signed link, issued again on a read once the last one has expired.
      if (task.videoUrl === null || task.videoUntil < Date.now()) {
        const stale = fake.staleLinks > 0;
        if (stale) fake.staleLinks--;
        const ttl = stale ? -1_000 : (options.urlTtlMs ?? 3_000);
        task.videoUrl = server.serveFile(mp4, 'video/mp4', ttl);
        task.videoUntil = Date.now() + ttl;
      }
      return {
        ...base,
        content: { video_url: task.videoUrl },
        seed: 42,
        framespersecond: 24,
        usage: { completion_tokens: 108900, total_tokens: 108900 },
      };
    }
    if (status === 'failed') {
      const error =
        task.outcome === 'output-sensitive'
          ? {
              code: 'OutputVideoSensitiveContentDetected',
              message: 'The output video may contain sensitive content',
            }
          : { code: 'InvalidParameter', message: 'the model could not render this request' };
      return { ...base, error };
    }
    return base;
  };
  const create = (request: FakeRequest, key: string): FakeReply => {
    const fault = faults.shift();
    if (fault === '429')
      return {
        ...refuse(429, 'RateLimitExceeded.EndpointRPM', 'Too many requests'),
        headers: { 'retry-after': '1' },
      };
    if (fault === '5xx') return refuse(500, 'InternalServiceError', 'internal error');
    if (fault === 'overdue') return refuse(403, 'AccountOverdueError', 'The account is overdue');
    if (fault === 'gateway-429') return gatewayPage(429, 7);
    if (fault === 'gateway-503') return gatewayPage(503, 3);
    const body = (request.body ?? {}) as Record<string, unknown>;
    const broken = checkSeedanceBody(body);
    if (broken) return broken;
    const prompt =
      (body['content'] as { type: string; text?: string }[]).find((c) => c.type === 'text')?.text ?? '';
    if (prompt.includes('[seedance:refuse]'))
      return refuse(400, 'InputTextSensitiveContentDetected', 'The input text may contain sensitive content');
    const queued = [...tasks.values()].filter((t) => t.key === key && statusOf(t) === 'queued').length;
    if (queued >= 120) return refuse(429, 'RateLimitExceeded.EndpointRPM', 'at most 120 queued tasks');
    bodies.push(body);
    const outcome = prompt.includes('[seedance:output-sensitive]')
      ? 'output-sensitive'
      : prompt.includes('[seedance:failed]')
        ? 'failed'
        : prompt.includes('[seedance:expired]')
          ? 'expired'
          : 'succeeded';
    const id = `cgt-${Date.now()}-${++serial}`;
    tasks.set(id, {
      id,
      key,
      body,
      createdAt: Date.now(),
      outcome,
      cancelled: false,
      videoUrl: null,
      videoUntil: 0,
    });
    return { status: 200, body: { id } };
  };
  const remove = (task: SeedanceTask): FakeReply => {
    deletes.push(task.id);
    const status = statusOf(task);
    if (status === 'queued') {
      task.cancelled = true;
      return { status: 200, body: {} };
    }
    if (status === 'running' || status === 'cancelled')
      return refuse(400, 'InvalidParameter', `a ${status} task cannot be deleted`);
    tasks.delete(task.id);
    return { status: 200, body: {} };
  };

  server = await startFakeServer((request) => {
    const auth = request.headers.authorization ?? '';
    const key = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    if (!keys.includes(key)) return refuse(401, 'AuthenticationError', 'the API key is missing or invalid');
    if (request.method === 'POST' && request.path === '/contents/generations/tasks')
      return create(request, key);
    const match = /^\/contents\/generations\/tasks\/([^/]+)$/.exec(request.path);
    const task = match?.[1] ? tasks.get(decodeURIComponent(match[1])) : undefined;
    if (match && (!task || task.key !== key)) return refuse(404, 'InvalidEndpoint.NotFound', 'no such task');
    if (task && request.method === 'GET') return { status: 200, body: view(task) };
    if (task && request.method === 'DELETE') return remove(task);
    return null;
  }, options.port);

  const started = Object.assign(server, {
    staleLinks: 0,
    tasks,
    bodies,
    deletes,
    options,
    fail(...more: SeedanceFault[]) {
      faults.push(...more);
    },
  });
  Object.defineProperty(started, 'staleLinks', {
    get: () => fake.staleLinks,
    set: (n: number) => {
      fake.staleLinks = n;
    },
  });
  return started;
}
