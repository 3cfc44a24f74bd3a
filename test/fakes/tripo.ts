/**
 * A fake Tripo3D OpenAPI v2 (PROVIDERS.md §1) on 127.0.0.1, for tests and manual trials: `{ code, data }`
 * envelopes, Bearer keys, `POST /upload`, `POST /task` checked against the documented rules, `GET /task/{id}`
 * for the creating key only, tasks that go queued → running → their outcome over a set time, output links
 * that expire after a few seconds, and faults on demand. Every request lands in `calls`.
 *
 * Run it alone with `node test/fakes/tripo.ts` (key `tsk_test`; `TRIPO_FAKE_PORT`, and the times
 * `TRIPO_FAKE_QUEUED_MS`, `TRIPO_FAKE_RUNNING_MS`, `TRIPO_FAKE_OUTPUT_TTL_MS` in milliseconds).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildOutputs, type FakeFile, type OutputFault } from './tripo-outputs.ts';
import { checkTaskBody, checkUpload, TRIPO_DEFAULT_VERSION, type UploadedPicture } from './tripo-rules.ts';
import {
  API,
  answerFault,
  readBody,
  refuse,
  routeOf,
  send,
  sendText,
  type TripoFault,
  type TripoRoute,
} from './tripo-wire.ts';

export type { TripoFault, TripoRoute } from './tripo-wire.ts';

/** How a task ends. */
export type TripoOutcome = 'success' | 'failed' | 'banned' | 'expired' | 'cancelled' | 'unknown';

export interface TripoFakeOptions {
  /** Keys that authenticate. (Default: `['tsk_test']`) */
  apiKeys?: readonly string[];
  /** Time a task stays queued (milliseconds). (Default: 300) */
  queuedMs?: number;
  /** Time a task runs after that (milliseconds). (Default: 900) */
  runningMs?: number;
  /** Life of an output link (milliseconds). (Default: 3000) */
  outputTtlMs?: number;
  /** Tasks a key may have queued or running at once (429/2000 beyond). (Default: 10) */
  maxConcurrentTasks?: number;
  /** Of those, tasks on a `P1-…` model version (429/2000 beyond; PROVIDERS.md §1). (Default: 5) */
  maxConcurrentP1Tasks?: number;
  /** Tasks the account can still pay for (403/2010 after), or null for no limit. (Default: null) */
  credits?: number | null;
  /** Size of the `too_big` model (bytes). (Default: 2 MiB) */
  bigBytes?: number;
  port?: number;
}

/** One request the fake received. */
export interface TripoCall {
  method: string;
  path: string;
  /** The Bearer key sent, if any. */
  key: string | null;
  /** Parsed JSON body, if any. */
  json?: unknown;
  /** The multipart `file` part of an upload. */
  upload?: { filename: string; contentType: string; size: number };
}

interface FakeTask {
  id: string;
  key: string;
  body: Record<string, unknown>;
  createdAt: number;
  outcome: TripoOutcome;
  errorCode: number | null;
  outputFault: OutputFault | null;
  files: Map<string, FakeFile> | null;
}

const OUTCOME_MARKER = /\[tripo:(success|failed|banned|expired|cancelled|unknown)\]/;

export class TripoFake {
  readonly baseUrl: string;
  readonly origin: string;
  readonly calls: TripoCall[] = [];
  readonly tasks = new Map<string, FakeTask>();
  /** Most tasks queued or running at one moment, over the fake's life. */
  peakInFlight = 0;
  /** Tasks the account can still pay for, or null for no limit. */
  credits: number | null;
  readonly #options: Required<Omit<TripoFakeOptions, 'credits' | 'port'>>;
  readonly #server: http.Server;
  readonly #uploads = new Map<string, UploadedPicture>();
  readonly #links = new Map<string, { taskId: string; output: string; expiresAt: number }>();
  readonly #faults = new Map<TripoRoute, TripoFault[]>();
  readonly #outcomes: { outcome: TripoOutcome; errorCode: number | null; outputFault: OutputFault | null }[] =
    [];

  private constructor(server: http.Server, options: TripoFakeOptions) {
    this.#server = server;
    this.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    this.baseUrl = `${this.origin}${API}`;
    this.credits = options.credits ?? null;
    this.#options = {
      apiKeys: options.apiKeys ?? ['tsk_test'],
      queuedMs: options.queuedMs ?? 300,
      runningMs: options.runningMs ?? 900,
      outputTtlMs: options.outputTtlMs ?? 3_000,
      maxConcurrentTasks: options.maxConcurrentTasks ?? 10,
      maxConcurrentP1Tasks: options.maxConcurrentP1Tasks ?? 5,
      bigBytes: options.bigBytes ?? 2 * 1024 * 1024,
    };
  }

  /** Starts a fake on a free loopback port (or `options.port`). */
  static async start(options: TripoFakeOptions = {}): Promise<TripoFake> {
    let fake: TripoFake | null = null;
    const server = http.createServer((req, res) => {
      fake?.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) send(res, 500, { code: 1000, message: String(error) });
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    fake = new TripoFake(server, options);
    return fake;
  }

  /** The next `times` requests to `route` get `fault` instead of their answer. */
  inject(route: TripoRoute, fault: TripoFault, times = 1): void {
    const queue = this.#faults.get(route) ?? [];
    for (let i = 0; i < times; i++) queue.push(fault);
    this.#faults.set(route, queue);
  }

  /** The next `times` tasks created end this way (a prompt marker `[tripo:banned]` does the same). */
  nextTasks(
    outcome: TripoOutcome,
    options: { errorCode?: number; outputFault?: OutputFault; times?: number } = {},
  ): void {
    for (let i = 0; i < (options.times ?? 1); i++)
      this.#outcomes.push({
        outcome,
        errorCode: options.errorCode ?? null,
        outputFault: options.outputFault ?? null,
      });
  }

  /** Every output link issued so far stops working (403), as after Tripo's five minutes. */
  expireLinks(): void {
    for (const link of this.#links.values()) link.expiresAt = 0;
  }

  /** Requests to a path ending with `suffix` (for example `/task` for submissions). */
  callsTo(method: string, suffix: string): TripoCall[] {
    return this.calls.filter((call) => call.method === method && call.path.endsWith(suffix));
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.origin);
    const raw = await readBody(req);
    const auth = req.headers.authorization ?? '';
    const call: TripoCall = {
      method: req.method ?? 'GET',
      path: url.pathname,
      key: auth.startsWith('Bearer ') ? auth.slice(7) : null,
    };
    this.calls.push(call);
    const route = routeOf(call.method, url.pathname);
    if (route === 'file') return this.#serveFile(url.pathname, res);
    const fault = route === null ? undefined : this.#faults.get(route)?.shift();
    if (fault) return answerFault(res, fault);
    if (call.key === null || !this.#options.apiKeys.includes(call.key))
      return send(res, 401, {
        code: 1002,
        message: 'Authentication failed',
        suggestion: 'Check your API key',
      });
    if (route === 'upload') return this.#upload(req, raw, call, res);
    if (route === 'create') return this.#create(raw, call, res);
    if (route === 'status') return this.#status(url.pathname.slice(`${API}/task/`.length), call.key, res);
    send(res, 404, { code: 2019, message: 'Resource not found' });
  }

  async #upload(
    req: http.IncomingMessage,
    raw: Buffer,
    call: TripoCall,
    res: http.ServerResponse,
  ): Promise<void> {
    const form = await new Response(new Uint8Array(raw), {
      headers: { 'content-type': req.headers['content-type'] ?? '' },
    })
      .formData()
      .catch(() => null);
    const file = form?.get('file');
    if (!(file instanceof File))
      return send(res, 400, { code: 1004, message: 'multipart part file is required' });
    const bytes = new Uint8Array(await file.arrayBuffer());
    call.upload = { filename: file.name, contentType: file.type, size: bytes.length };
    const checked = checkUpload(bytes);
    if ('code' in checked) return refuse(res, checked);
    const token = randomUUID();
    this.#uploads.set(token, { key: call.key ?? '', type: checked.type });
    send(res, 200, { code: 0, data: { image_token: token } });
  }

  async #create(raw: Buffer, call: TripoCall, res: http.ServerResponse): Promise<void> {
    const key = call.key ?? '';
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return send(res, 400, { code: 1003, message: 'body is not JSON' });
    }
    call.json = body;
    const refused = checkTaskBody(body, key, this.#uploads);
    if (refused) return refuse(res, refused);
    const now = Date.now();
    const active = [...this.tasks.values()].filter((t) => this.#isActive(t, now));
    const own = active.filter((t) => t.key === key);
    const isP1 = (t: Record<string, unknown>) => String(t['model_version'] ?? '').startsWith('P1-');
    if (
      own.length >= this.#options.maxConcurrentTasks ||
      (isP1(body as Record<string, unknown>) &&
        own.filter((t) => isP1(t.body)).length >= this.#options.maxConcurrentP1Tasks)
    )
      return send(res, 429, { code: 2000, message: 'Too many concurrent tasks' }, { 'retry-after': '1' });
    if (this.credits !== null && this.credits <= 0)
      return send(res, 403, { code: 2010, message: 'Not enough credits' });
    if (this.credits !== null) this.credits -= 1;
    const task = body as Record<string, unknown>;
    const marker = typeof task['prompt'] === 'string' ? OUTCOME_MARKER.exec(task['prompt']) : null;
    const planned = this.#outcomes.shift() ?? {
      outcome: (marker?.[1] as TripoOutcome | undefined) ?? 'success',
      errorCode: marker?.[1] === 'failed' ? 2002 : null,
      outputFault: null,
    };
    const id = randomUUID();
    this.tasks.set(id, { id, key, body: task, createdAt: now, ...planned, files: null });
    this.peakInFlight = Math.max(this.peakInFlight, active.length + 1);
    send(res, 200, { code: 0, data: { task_id: id } });
  }

  #isActive(task: FakeTask, now: number): boolean {
    return now < task.createdAt + this.#options.queuedMs + this.#options.runningMs;
  }

  async #status(id: string, key: string, res: http.ServerResponse): Promise<void> {
    const task = this.tasks.get(decodeURIComponent(id));
    // Only the creating key sees a task (PROVIDERS.md §1).
    if (task === undefined || task.key !== key)
      return send(res, 404, { code: 2001, message: 'Task not found' });
    const { queuedMs, runningMs } = this.#options;
    const elapsed = Date.now() - task.createdAt;
    const data: Record<string, unknown> = {
      task_id: task.id,
      type: task.body['type'],
      input: { ...task.body, model_version: task.body['model_version'] ?? TRIPO_DEFAULT_VERSION },
      create_time: Math.floor(task.createdAt / 1000),
      output: {},
    };
    if (elapsed < queuedMs) Object.assign(data, { status: 'queued', progress: 0, queuing_num: 1 });
    else if (elapsed < queuedMs + runningMs) {
      const progress = Math.floor(((elapsed - queuedMs) / runningMs) * 100);
      Object.assign(data, {
        status: 'running',
        progress,
        running_left_time: Math.ceil((queuedMs + runningMs - elapsed) / 1000),
      });
    } else if (task.outcome === 'success') {
      task.files ??= await buildOutputs(task, task.outputFault, this.#options.bigBytes);
      Object.assign(data, { status: 'success', progress: 100, output: this.#freshLinks(task) });
    } else {
      Object.assign(data, { status: task.outcome, progress: task.outcome === 'failed' ? 50 : 0 });
      if (task.errorCode !== null)
        Object.assign(data, { error_code: task.errorCode, error_msg: `fake error ${task.errorCode}` });
    }
    send(res, 200, { code: 0, data });
  }

  /** New links for every file of the task, each valid for `outputTtlMs`, like Tripo's signed URLs. */
  #freshLinks(task: FakeTask): Record<string, string> {
    const output: Record<string, string> = {};
    for (const [name, file] of task.files ?? []) {
      const token = randomUUID();
      this.#links.set(token, {
        taskId: task.id,
        output: name,
        expiresAt: Date.now() + this.#options.outputTtlMs,
      });
      output[name] = `${this.origin}/files/${token}/${name}.${file.ext}`;
    }
    return output;
  }

  async #serveFile(path: string, res: http.ServerResponse): Promise<void> {
    const fault = this.#faults.get('file')?.shift();
    if (fault) return answerFault(res, fault);
    const token = path.split('/')[2] ?? '';
    const link = this.#links.get(token);
    const file = link && this.tasks.get(link.taskId)?.files?.get(link.output);
    if (!link || !file) return sendText(res, 404, 'NoSuchKey');
    if (Date.now() >= link.expiresAt) return sendText(res, 403, 'Request has expired');
    res.writeHead(200, { 'content-type': file.contentType, 'content-length': file.bytes.length });
    res.end(file.bytes);
  }
}

if (import.meta.main) {
  const env = (name: string): number | undefined =>
    process.env[name] === undefined ? undefined : Number(process.env[name]);
  const fake = await TripoFake.start({
    port: env('TRIPO_FAKE_PORT') ?? 0,
    queuedMs: env('TRIPO_FAKE_QUEUED_MS'),
    runningMs: env('TRIPO_FAKE_RUNNING_MS'),
    outputTtlMs: env('TRIPO_FAKE_OUTPUT_TTL_MS'),
  });
  process.stdout.write(`Tripo fake at ${fake.baseUrl} (key tsk_test)\n`);
}
