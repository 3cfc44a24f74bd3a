/**
 * HTTP calls of a soak run that survive the chaos: a request that meets a killed process (refused or
 * cut connection) is sent again to another API process; 429 and 409 request_in_progress wait for their
 * Retry-After. Any 5xx is recorded: a killed process never answers, so a 5xx is the service's fault.
 */
import type { Rng } from '../../src/generators/simulator/media/seed.ts';
import { sleep } from './cluster.ts';

export interface Answer {
  status: number;
  headers: Headers;
  body: Buffer;
  json<T = Record<string, unknown>>(): T;
}

export interface CallFigures {
  /** Requests sent again after a refused or cut connection. */
  networkRetries: number;
  /** 429 answers waited out. */
  limited: number;
  /** 5xx answers, with method, path and body. */
  serverErrors: string[];
}

export interface CallOptions {
  headers?: Record<string, string>;
  body?: unknown;
  /** Give up after this many 409 request_in_progress answers and return the last. (Default: 0, never) */
  inProgressTries?: number;
}

/** Most attempts of one request before the run fails: the cluster is down for good. */
const MAX_ATTEMPTS = 60;
/** Longest wait for any API process to be up (milliseconds). */
const NO_API_MS = 120_000;

export class Client {
  readonly figures: CallFigures = { networkRetries: 0, limited: 0, serverErrors: [] };
  readonly #apis: () => string[];
  readonly #rng: Rng;

  /** `apis` lists the API processes that are up now; it is asked again before every attempt. */
  constructor(apis: () => string[], rng: Rng) {
    this.#apis = apis;
    this.#rng = rng;
  }

  async call(method: string, path: string, options: CallOptions = {}): Promise<Answer> {
    let inProgress = 0;
    const givesUpAt = Date.now() + NO_API_MS;
    for (let attempt = 1; ; attempt++) {
      const apis = this.#apis();
      if (apis.length === 0) {
        if (Date.now() > givesUpAt) throw new Error(`${method} ${path}: no API process came back up`);
        await sleep(200);
        continue;
      }
      const base = this.#rng.pick(apis);
      let res: Response;
      try {
        res = await fetch(`${base}${path}`, {
          method,
          headers: {
            ...(options.body === undefined || Buffer.isBuffer(options.body)
              ? {}
              : { 'content-type': 'application/json' }),
            ...options.headers,
          },
          ...(options.body === undefined
            ? {}
            : {
                body: Buffer.isBuffer(options.body)
                  ? new Uint8Array(options.body)
                  : JSON.stringify(options.body),
              }),
          signal: AbortSignal.timeout(60_000),
        });
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS) throw new Error(`${method} ${path}: ${String(error)}`, { cause: error });
        this.figures.networkRetries++;
        await sleep(100 + this.#rng.int(0, 400));
        continue;
      }
      const answer = await readAnswer(res);
      if (answer.status >= 500) {
        this.figures.serverErrors.push(`${method} ${path} → ${answer.status} ${answer.body.toString()}`);
        return answer;
      }
      const code = answer.status === 409 || answer.status === 429 ? errorCode(answer) : '';
      const waitable = answer.status === 429 || code === 'request_in_progress';
      if (code === 'request_in_progress') inProgress++;
      const givesUp = code === 'request_in_progress' && inProgress >= (options.inProgressTries ?? Infinity);
      if (!waitable || givesUp || attempt >= MAX_ATTEMPTS) return answer;
      if (answer.status === 429) this.figures.limited++;
      await sleep(Math.min(10, Number(answer.headers.get('retry-after') ?? 1)) * 1000);
    }
  }
}

async function readAnswer(res: Response): Promise<Answer> {
  const body = Buffer.from(await res.arrayBuffer());
  return {
    status: res.status,
    headers: res.headers,
    body,
    json: <T>() => JSON.parse(body.toString('utf8')) as T,
  };
}

/** `error.code` of an error answer, or '' when the body is not the error shape. */
export function errorCode(answer: Answer): string {
  try {
    return answer.json<{ error?: { code?: string } }>().error?.code ?? '';
  } catch {
    return '';
  }
}
