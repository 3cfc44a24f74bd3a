/**
 * A fake sunoapi.org (PROVIDERS.md §2) on 127.0.0.1 for tests and manual trials: envelopes with body
 * codes, a Bearer key check, music tasks whose state moves PENDING → TEXT_SUCCESS → FIRST_SUCCESS →
 * SUCCESS one `stepMs` at a time with callbacks (`text`, `first`, `complete`, or `error`) posted to their
 * callBackUrl, real MP3/PNG files behind links that expire after `urlTtlMs`, lyrics and style boost,
 * personas and singing voices (`suno-voices.ts`), switchable faults and a log of every call. With
 * `knownSingersOnly`, a music body whose `personaId` names no persona or voice the fake issued is refused
 * with code 400.
 *
 * Outcomes are chosen by markers in any string of the create body: `[suno:sensitive]`
 * (SENSITIVE_WORD_ERROR), `[suno:failed]` (GENERATE_AUDIO_FAILED), `[suno:copyright]` (the same with
 * errorCode 400), `[suno:callback-exception]` (CALLBACK_EXCEPTION with every track), `[suno:not-mp3]`
 * (the audio links serve a PNG), `[suno:stall]` (stays PENDING).
 *
 * Run alone: `node test/fakes/suno.ts` (PORT, SUNO_FAKE_KEY, SUNO_FAKE_STEP_MS, SUNO_FAKE_URL_TTL_MS).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import {
  callbackBody,
  createRefusal,
  type FakeTask,
  type LinkOptions,
  lyricsInfo,
  MUSIC_ENDPOINTS,
  musicInfo,
  newTask,
  SAMPLE_PNG,
  sampleMp3,
  stateOf,
} from './suno-tasks.ts';
import { FakeVoices } from './suno-voices.ts';

/** One request the fake received. */
export interface SunoCall {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  authorization: string | undefined;
}

/** A fault the next matching requests answer instead of the real thing. */
export type SunoFault =
  | { kind: 'code'; code: number; msg?: string }
  | { kind: 'http'; status: number; retryAfterSeconds?: number; body?: string }
  | { kind: 'garbage' }
  | { kind: 'missing' }
  | { kind: 'hang' };

/** Which requests a fault applies to: creates (any POST generating something), reads, or all API calls. */
export type FaultTarget = 'create' | 'read' | 'any';

export interface SunoFakeOptions {
  /** Accepted API key. (Default: `suno-test-key`) */
  apiKey?: string;
  /** Time per task stage (milliseconds). (Default: 200) */
  stepMs?: number;
  /** Lifetime of a file link from the read that issued it (milliseconds). (Default: 3000) */
  urlTtlMs?: number;
  /** Post callbacks to callBackUrl. (Default: true) */
  callbacks?: boolean;
  /** Listen port. (Default: any free one) */
  port?: number;
  /** Refuse a music body whose `personaId` the fake did not issue (code 400). (Default: false) */
  knownSingersOnly?: boolean;
  /** Length of every track it serves (seconds). (Default: 2) */
  trackSeconds?: number;
}

export class SunoFake {
  readonly calls: SunoCall[] = [];
  /** Callbacks posted: target URL, body and the answer's status (0 when unreachable). */
  readonly callbacksSent: { url: string; body: unknown; status: number }[] = [];
  readonly tasks = new Map<string, FakeTask>();
  /** Personas, voice validations and verifications. */
  readonly voices: FakeVoices;
  readonly apiKey: string;
  stepMs: number;
  urlTtlMs: number;
  sendCallbacks: boolean;
  knownSingersOnly: boolean;
  trackSeconds: number;
  #faults: { target: FaultTarget; fault: SunoFault; times: number }[] = [];
  #server: http.Server;
  #hanging = new Set<http.ServerResponse>();
  #timers = new Set<NodeJS.Timeout>();
  #port: number;

  constructor(options: SunoFakeOptions = {}) {
    this.apiKey = options.apiKey ?? 'suno-test-key';
    this.stepMs = options.stepMs ?? 200;
    this.urlTtlMs = options.urlTtlMs ?? 3_000;
    this.sendCallbacks = options.callbacks ?? true;
    this.#port = options.port ?? 0;
    this.knownSingersOnly = options.knownSingersOnly ?? false;
    this.trackSeconds = options.trackSeconds ?? 2;
    this.voices = new FakeVoices(
      (audioId) => {
        const taskId = audioId.replace(/-a\d+$/, '');
        const task = this.tasks.get(taskId);
        return task !== undefined && this.stateOf(task) === 'SUCCESS' ? taskId : undefined;
      },
      () => this.stepMs,
      (url, body, afterMs) => {
        const timer = setTimeout(() => {
          this.#timers.delete(timer);
          void this.#post(url, body());
        }, afterMs);
        this.#timers.add(timer);
      },
    );
    this.#server = http.createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        res.writeHead(500).end(String(error));
      });
    });
  }

  /** Base URL (a channel's `base_url`). */
  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(this.#port, '127.0.0.1', resolve));
    return this;
  }

  async close(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    for (const res of this.#hanging) res.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The next `times` requests of `target` answer `fault`. */
  fail(fault: SunoFault, options: { target?: FaultTarget; times?: number } = {}): void {
    this.#faults.push({ target: options.target ?? 'any', fault, times: options.times ?? 1 });
  }

  /** Create calls received (music, lyrics, style boost), in order. */
  creates(): SunoCall[] {
    return this.calls.filter((c) => c.method === 'POST');
  }

  /** State of a task now, from its age. */
  stateOf(task: FakeTask): string {
    return stateOf(task, this.stepMs);
  }

  #links(): LinkOptions {
    return { base: this.url, ttlMs: this.urlTtlMs, stepMs: this.stepMs };
  }

  #takeFault(target: 'create' | 'read'): SunoFault | undefined {
    const index = this.#faults.findIndex((f) => f.target === 'any' || f.target === target);
    const entry = this.#faults[index];
    if (entry === undefined) return undefined;
    entry.times -= 1;
    if (entry.times <= 0) this.#faults.splice(index, 1);
    return entry.fault;
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    if (url.pathname.startsWith('/files/')) return this.#serveFile(url, res);
    let body: unknown = null;
    try {
      body = raw === '' ? null : JSON.parse(raw);
    } catch {
      body = raw;
    }
    this.calls.push({
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body,
      authorization: req.headers.authorization,
    });
    const fault = this.#takeFault(req.method === 'POST' ? 'create' : 'read');
    if (fault !== undefined) return this.#answerFault(fault, res);
    if (req.headers.authorization !== `Bearer ${this.apiKey}`) {
      return send(res, 401, { code: 401, msg: 'Unauthorized: invalid API key' });
    }
    const fields = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    const voice = this.voices.handle(
      req.method ?? '',
      url.pathname,
      url.searchParams.get('taskId') ?? '',
      fields,
    );
    if (voice !== undefined) return send(res, 200, 'data' in voice ? ok(voice.data) : voice);
    if (req.method === 'POST' && MUSIC_ENDPOINTS[url.pathname] !== undefined) {
      const singer = fields['personaId'];
      if (this.knownSingersOnly && singer !== undefined && !this.voices.knowsSinger(String(singer))) {
        return send(res, 200, { code: 400, msg: 'personaId names no persona or voice' });
      }
      return this.#create(res, 'music', url.pathname, fields);
    }
    if (req.method === 'POST' && url.pathname === '/api/v1/lyrics') {
      return this.#create(res, 'lyrics', url.pathname, fields);
    }
    if (req.method === 'POST' && url.pathname === '/api/v1/style/generate') {
      if (typeof fields['content'] !== 'string')
        return send(res, 200, { code: 400, msg: 'content is required' });
      return send(
        res,
        200,
        ok({
          taskId: randomUUID(),
          result: `${fields['content']}, boosted: warm analog synths, 120 BPM`,
          creditsConsumed: 0.4,
          successFlag: '1',
        }),
      );
    }
    const taskId = url.searchParams.get('taskId') ?? '';
    const task = this.tasks.get(taskId);
    if (req.method === 'GET' && url.pathname.endsWith('/record-info')) {
      if (task === undefined) return send(res, 200, { code: 404, msg: 'task not found' });
      return send(
        res,
        200,
        ok(task.kind === 'lyrics' ? lyricsInfo(task, this.stepMs) : musicInfo(task, this.#links())),
      );
    }
    send(res, 404, { code: 404, msg: `no route ${req.method} ${url.pathname}` });
  }

  #answerFault(fault: SunoFault, res: http.ServerResponse): void {
    switch (fault.kind) {
      case 'code':
        send(res, 200, { code: fault.code, msg: fault.msg ?? `fake code ${fault.code}`, data: null });
        return;
      case 'http': {
        const wait =
          fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) };
        res
          .writeHead(fault.status, { 'content-type': 'text/html', ...wait })
          .end(fault.body ?? '<html>upstream broke</html>');
        return;
      }
      case 'garbage':
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"code": 200, "data": ');
        return;
      case 'missing':
        send(res, 200, ok({}));
        return;
      case 'hang':
        this.#hanging.add(res);
        return;
    }
  }

  #create(
    res: http.ServerResponse,
    kind: FakeTask['kind'],
    endpoint: string,
    body: Record<string, unknown>,
  ): void {
    const refusal = kind === 'music' ? createRefusal(endpoint, body) : null;
    if (refusal !== null || typeof body['callBackUrl'] !== 'string') {
      send(res, 200, { code: 400, msg: refusal ?? 'missing callBackUrl' });
      return;
    }
    const task = newTask(kind, endpoint, body);
    this.tasks.set(task.id, task);
    if (kind === 'music') this.#scheduleCallbacks(task);
    send(res, 200, ok({ taskId: task.id }));
  }

  /** Callbacks at each stage as §2 describes them: text, first, complete, or error. */
  #scheduleCallbacks(task: FakeTask): void {
    const at = (stage: number, type: string): void => {
      const timer = setTimeout(
        () => {
          this.#timers.delete(timer);
          void this.#postCallback(task, type);
        },
        stage * this.stepMs + 5,
      );
      this.#timers.add(timer);
    };
    if (task.outcome === 'stall') return;
    if (task.outcome === 'sensitive') {
      at(1, 'error');
    } else if (task.outcome === 'failed' || task.outcome === 'copyright') {
      at(1, 'text');
      at(2, 'error');
    } else {
      at(1, 'text');
      at(2, 'first');
      at(3, 'complete');
    }
  }

  async #postCallback(task: FakeTask, type: string): Promise<void> {
    await this.#post(String(task.body['callBackUrl']), callbackBody(task, type, this.#links()));
  }

  async #post(url: string, body: unknown): Promise<void> {
    if (!this.sendCallbacks) return;
    let status = 0;
    try {
      const answer = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      });
      status = answer.status;
      await answer.body?.cancel();
    } catch {
      // Unreachable callback URL: recorded with status 0, like Suno's CALLBACK_EXCEPTION.
    }
    this.callbacksSent.push({ url, body, status });
  }

  /** Files behind links that expire: 403 after `expires`, like a presigned URL. */
  async #serveFile(url: URL, res: http.ServerResponse): Promise<void> {
    const expires = Number(url.searchParams.get('expires'));
    if (!(expires > Date.now())) {
      res
        .writeHead(403, { 'content-type': 'application/xml' })
        .end('<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>');
      return;
    }
    const png = url.pathname.endsWith('.png') || url.searchParams.get('as') === 'png';
    const bytes = png ? SAMPLE_PNG : await sampleMp3(this.trackSeconds);
    res
      .writeHead(200, { 'content-type': png ? 'image/png' : 'audio/mpeg', 'content-length': bytes.length })
      .end(bytes);
  }
}

function ok(data: unknown): unknown {
  return { code: 200, msg: 'success', data };
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const fake = await new SunoFake({
    port: Number(process.env['PORT'] ?? 0),
    apiKey: process.env['SUNO_FAKE_KEY'] ?? 'suno-test-key',
    stepMs: Number(process.env['SUNO_FAKE_STEP_MS'] ?? 2_000),
    urlTtlMs: Number(process.env['SUNO_FAKE_URL_TTL_MS'] ?? 5_000),
  }).start();
  console.log(`suno fake on ${fake.url} (key ${fake.apiKey})`);
}
