/**
 * A fake Cog HTTP server (PROVIDERS.md §3): async predictions under `PUT /predictions/{id}` that go
 * starting → processing → succeeded, `start` and `completed` webhooks, outputs as data URLs or links that
 * expire, 409 when every slot is busy, cancel, and failures on demand (5xx, 422, failed predictions,
 * hangs, non-JSON answers). Tests read `calls`, `predictions` and `maxInFlight`.
 */
import {
  type FakeReply,
  type FakeRequest,
  type FakeServer,
  gatewayPage,
  postJson,
  startFakeServer,
} from './server.ts';

export type CogFault =
  /** The next PUT answers 500. */
  | '5xx'
  /** The next PUT answers 429 with `Retry-After: 7` (a rate-limiting proxy in front of the server). */
  | '429'
  /** The next PUT answers 422 `{detail:[{loc,msg,type}]}` (invalid input). */
  | '422'
  /** The next PUT answers 200 with a body that is not JSON. */
  | 'garbage'
  /** The next PUT answers a gateway's HTML page: 429 with `Retry-After: 7`. */
  | 'gateway-429'
  /** The next PUT answers a gateway's HTML page: 503 with `Retry-After: 3`. */
  | 'gateway-503'
  /** The next prediction ends `failed` with an error text. */
  | 'failed'
  /** The next prediction ends `failed` by the model's safety checker. */
  | 'nsfw'
  /** The next prediction never completes (no `completed` webhook). */
  | 'hang'
  /** The next PUT is never answered. */
  | 'hang-http'
  /** The next PUT starts its prediction, but its answer never comes (lost on the way back). */
  | 'accept-hang';

export interface CogFile {
  bytes: Buffer;
  contentType: string;
}

export interface CogFakeOptions {
  /** Predictions running at once (`concurrency.max`); more answer 409. (Default: 1) */
  slots?: number;
  /** Time from start to completion (milliseconds). (Default: 300) */
  runMs?: number;
  /** Files every prediction returns. (Default: one small PNG) */
  files?: CogFile[];
  /** `data`: data URLs (Cog's default); `url`: links that expire after `urlTtlMs`. (Default: data) */
  outputAs?: 'data' | 'url';
  /** Life of output links (milliseconds). (Default: 3000) */
  urlTtlMs?: number;
  /** Shape of `output`: a list of files, one string (first file), or an object of files. (Default: list) */
  outputShape?: 'list' | 'string' | 'object';
  /** Posts a webhook; tests deliver through `app.inject`. (Default: HTTP POST with retries) */
  deliver?: (url: string, body: unknown) => Promise<unknown>;
  /** `/health-check` status. (Default: READY, or BUSY while every slot is taken) */
  health?: string;
  /** A key a proxy in front of the server wants as `Authorization: Bearer`; others get 401. (Default: none) */
  apiKey?: string;
  port?: number;
}

export interface FakePrediction {
  id: string;
  status: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled';
  input: unknown;
  output: unknown;
  error: string | null;
  webhook: string | null;
  webhook_events_filter: string[];
  logs: string;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  metrics?: { predict_time: number };
}

/** A 1×1 PNG, the default output. */
export const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

export interface CogFake extends FakeServer {
  predictions: Map<string, FakePrediction>;
  /** The PUT bodies in order (one per accepted or refused PUT). */
  submissions: unknown[];
  /** Ids whose cancel endpoint was called. */
  cancels: string[];
  /** Most predictions running at once so far. */
  maxInFlight: number;
  /** Queues faults for the next PUTs or predictions, in order. */
  fail(...faults: CogFault[]): void;
  /** The next cancels answer these HTTP statuses instead (a proxy's 503, a 429), in order. */
  failCancels(...statuses: number[]): void;
  options: CogFakeOptions;
}

const FINAL = new Set(['succeeded', 'failed', 'canceled']);

/** Starts the fake Cog server on 127.0.0.1. */
export async function startCogFake(options: CogFakeOptions = {}): Promise<CogFake> {
  const predictions = new Map<string, FakePrediction>();
  const submissions: unknown[] = [];
  const cancels: string[] = [];
  const faults: CogFault[] = [];
  const cancelFaults: number[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const deliver = options.deliver ?? ((url: string, body: unknown) => postJson(url, body));
  let server: FakeServer;
  let maxInFlight = 0;

  const inFlight = (): number => [...predictions.values()].filter((p) => !FINAL.has(p.status)).length;
  const later = (ms: number, fn: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };
  const notify = (prediction: FakePrediction, event: 'start' | 'completed'): void => {
    if (prediction.webhook && prediction.webhook_events_filter.includes(event))
      void deliver(prediction.webhook, structuredClone(prediction)).catch(() => {});
  };
  const outputOf = (): unknown => {
    const files = options.files ?? [{ bytes: TINY_PNG, contentType: 'image/png' }];
    const links = files.map((file) =>
      options.outputAs === 'url'
        ? server.serveFile(file.bytes, file.contentType, options.urlTtlMs ?? 3_000)
        : `data:${file.contentType};base64,${file.bytes.toString('base64')}`,
    );
    if (options.outputShape === 'string') return links[0];
    if (options.outputShape === 'object')
      return Object.fromEntries(links.map((link, i) => [`file_${i}`, link]));
    return links;
  };
  const run = (prediction: FakePrediction, fault: CogFault | undefined): void => {
    const runMs = options.runMs ?? 300;
    later(Math.min(50, runMs / 3), () => {
      if (prediction.status !== 'starting') return;
      prediction.status = 'processing';
      prediction.started_at = new Date().toISOString();
      prediction.logs = 'predicting…';
      notify(prediction, 'start');
    });
    if (fault === 'hang') return;
    later(runMs, () => {
      if (FINAL.has(prediction.status)) return;
      prediction.completed_at = new Date().toISOString();
      prediction.metrics = { predict_time: runMs / 1000 };
      if (fault === 'failed' || fault === 'nsfw') {
        prediction.status = 'failed';
        prediction.error =
          fault === 'nsfw'
            ? 'NSFW content detected. Try running it again, or try a different prompt.'
            : 'CUDA out of memory';
      } else {
        prediction.status = 'succeeded';
        prediction.output = outputOf();
      }
      notify(prediction, 'completed');
    });
  };

  const put = (request: FakeRequest, id: string): FakeReply | Promise<FakeReply> => {
    submissions.push(request.body);
    const existing = predictions.get(id);
    // Same id while running: the existing prediction (Cog's idempotent PUT).
    if (existing && !FINAL.has(existing.status)) return { status: 202, body: existing };
    if (inFlight() >= (options.slots ?? 1))
      return { status: 409, body: { detail: 'Already running a prediction' } };
    const fault = faults.shift();
    if (fault === 'hang-http') return new Promise<FakeReply>(() => {});
    if (fault === '429')
      return { status: 429, body: { detail: 'Too Many Requests' }, headers: { 'retry-after': '7' } };
    if (fault === '5xx') return { status: 500, body: { detail: 'Internal Server Error' } };
    if (fault === 'garbage') return { status: 200, body: '<html>Bad gateway</html>' };
    if (fault === 'gateway-429') return gatewayPage(429, 7);
    if (fault === 'gateway-503') return gatewayPage(503, 3);
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (fault === '422' || typeof body.input !== 'object' || body.input === null) {
      return {
        status: 422,
        body: {
          detail: [{ loc: ['body', 'input', 'prompt'], msg: 'field required', type: 'value_error.missing' }],
        },
      };
    }
    const prediction: FakePrediction = {
      id,
      status: 'starting',
      input: body.input,
      output: null,
      error: null,
      webhook: typeof body.webhook === 'string' ? body.webhook : null,
      webhook_events_filter: Array.isArray(body.webhook_events_filter)
        ? (body.webhook_events_filter as string[])
        : ['start', 'output', 'logs', 'completed'],
      logs: '',
      created_at: new Date().toISOString(),
      started_at: null,
      completed_at: null,
    };
    predictions.set(id, prediction);
    maxInFlight = Math.max(maxInFlight, inFlight());
    run(prediction, fault);
    if (fault === 'accept-hang') return new Promise<FakeReply>(() => {});
    return { status: 202, body: { ...prediction } };
  };

  const cancel = (id: string): FakeReply => {
    cancels.push(id);
    const fault = cancelFaults.shift();
    if (fault !== undefined) return { status: fault, body: { detail: `fake cancel fault ${fault}` } };
    const prediction = predictions.get(id);
    if (!prediction) return { status: 404, body: { detail: 'Not Found' } };
    if (!FINAL.has(prediction.status)) {
      prediction.status = 'canceled';
      prediction.completed_at = new Date().toISOString();
      notify(prediction, 'completed');
    }
    return { status: 200, body: {} };
  };

  server = await startFakeServer((request) => {
    if (options.apiKey && request.headers.authorization !== `Bearer ${options.apiKey}`)
      return { status: 401, body: { detail: 'Unauthorized' } };
    if (request.method === 'GET' && request.path === '/health-check') {
      const busy = inFlight() >= (options.slots ?? 1);
      const status = options.health ?? (busy ? 'BUSY' : 'READY');
      return { status: 200, body: { status, setup: { status: 'succeeded' } } };
    }
    const cancelMatch = /^\/predictions\/([^/]+)\/cancel$/.exec(request.path);
    if (request.method === 'POST' && cancelMatch?.[1]) return cancel(decodeURIComponent(cancelMatch[1]));
    const putMatch = /^\/predictions\/([^/]+)$/.exec(request.path);
    if (request.method === 'PUT' && putMatch?.[1]) {
      if (request.headers.prefer !== 'respond-async')
        return { status: 422, body: { detail: 'this fake serves asynchronous predictions only' } };
      return put(request, decodeURIComponent(putMatch[1]));
    }
    return null;
  }, options.port);

  const close = server.close;
  const fake = Object.assign(server, {
    predictions,
    submissions,
    cancels,
    options,
    maxInFlight: 0,
    fail(...more: CogFault[]) {
      faults.push(...more);
    },
    failCancels(...statuses: number[]) {
      cancelFaults.push(...statuses);
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      await close();
    },
  });
  // A live count (Object.assign would copy a getter's value once).
  Object.defineProperty(fake, 'maxInFlight', { get: () => maxInFlight });
  return fake;
}
