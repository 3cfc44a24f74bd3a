/**
 * The real `AdapterDeps` of a channel: its provider's HTTP API, guarded output downloads, input links as
 * the provider sees them and input bytes (input-files.ts), and callback addresses (CONTRACT §6, §11;
 * PROVIDERS.md "Rules for every adapter").
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { readCapped } from '../../lib/index.ts';
import { FetchError, type LookupFn } from '../../media/index.ts';
import { GenerationError, GeneratorTransientError } from '../generator.ts';
import type { CallbackStore } from './callback-store.ts';
import { fetchFile, MAX_OUTPUT_BYTES } from './fetch-file.ts';
import {
  artifactOfLink,
  type InputRuntime,
  inputLinksOf,
  publicLinksOf,
  publicUrlOf,
  readInput,
} from './input-files.ts';
import type {
  AdapterDeps,
  Channel,
  DownloadedOutput,
  UpstreamArtifact,
  UpstreamHttp,
  UpstreamResponse,
} from './types.ts';
import { UpstreamCallTimeout } from './types.ts';
import { retryAfterMs } from './upstream-failure.ts';

export { MAX_OUTPUT_BYTES } from './fetch-file.ts';

/** Each call to a provider's API (PROVIDERS.md: 30 s, exceeding it is transient). */
export const UPSTREAM_CALL_MS = 30_000;

/**
 * Largest answer of a provider's API, counted after decompression (fetch inflates gzip, deflate and br
 * bodies): room for one output file inline as base64 (a Cog data URL, ElevenLabs' bytes) and its JSON.
 */
function answerCap(maxOutputBytes: number): number {
  return Math.ceil(maxOutputBytes / 3) * 4 + 1024 * 1024;
}

/**
 * Whether the calls made inside `run` reached for a provider's API: a run's create that fails before any
 * call (settings or records the provider cannot take) says nothing of the channel's health, unlike an
 * answer of the provider (CONTRACT §11: the trial run that closes a circuit is one the provider answered).
 */
export class UpstreamTrace {
  static readonly #scope = new AsyncLocalStorage<UpstreamTrace>();
  #reached = false;

  get reached(): boolean {
    return this.#reached;
  }

  run<T>(fn: () => Promise<T>): Promise<T> {
    return UpstreamTrace.#scope.run(this, fn);
  }

  /** Marks the trace of the current run, if any: a call to the provider's API is under way. */
  static mark(): void {
    const trace = UpstreamTrace.#scope.getStore();
    if (trace) trace.#reached = true;
  }
}

/** What every channel's deps share: the process's storage, uploads, callbacks and address rules. */
export interface AdapterRuntime extends TransportOptions, InputRuntime {
  callbacks: CallbackStore;
  /**
   * The provider's ids of artifact `index` of task `taskId`, when the service kept them. Without it no
   * input is an artifact of ours (`AdapterDeps.upstreamArtifact` is then absent).
   */
  artifactUpstream?(taskId: string, index: number): Promise<UpstreamArtifact | null>;
}

/** What reaches a provider: its API and its output links, under the address rules and limits. */
export interface TransportOptions {
  /** Test-only exceptions to the address rules (`FETCH_ALLOW_ADDRESSES`); empty in production. */
  fetchAllowAddresses: readonly string[];
  /** Largest output file (bytes). (Default: `MAX_OUTPUT_BYTES`) */
  maxOutputBytes?: number;
  /** Limit of one provider API call (milliseconds). (Default: `UPSTREAM_CALL_MS`) */
  callTimeoutMs?: number;
  /** Limit of one output download, redirects included (milliseconds). (Default: 5 minutes) */
  downloadTimeoutMs?: number;
  /** DNS lookup override (tests). */
  lookup?: LookupFn;
}

/**
 * The upstream HTTP client and the output downloads of a channel: the parts of its AdapterDeps that need
 * neither the database nor storage (adapter tests drive adapters with them and their own inputs).
 */
export function createTransport(
  channel: Channel,
  options: TransportOptions,
): Pick<AdapterDeps, 'http' | 'download' | 'maxOutputBytes'> {
  const maxOutputBytes = options.maxOutputBytes ?? MAX_OUTPUT_BYTES;
  const timeoutMs = options.callTimeoutMs ?? UPSTREAM_CALL_MS;
  return {
    http: { request: (request) => callUpstream(channel, request, timeoutMs, answerCap(maxOutputBytes)) },
    download: (url, dir, signal) => downloadOutput(url, dir, signal, { ...options, maxOutputBytes }),
    maxOutputBytes,
  };
}

/** Builds the deps one channel's adapter is made from. */
export function createAdapterDeps(channel: Channel, runtime: AdapterRuntime): AdapterDeps {
  const callbacks = runtime.callbacks.forChannel(channel.name);
  const transport = createTransport(channel, runtime);
  const http: UpstreamHttp = {
    async request(request) {
      UpstreamTrace.mark();
      // The provider must never hold a callback address the service would refuse.
      await callbacks.settled();
      return transport.http.request(request);
    },
  };
  return {
    channel,
    clock: runtime.clock,
    http,
    download: transport.download,
    maxOutputBytes: transport.maxOutputBytes,
    publicUrl: (url) => publicUrlOf(url, runtime.publicBaseUrl),
    publicLinks: (urls) => publicLinksOf(urls, runtime),
    inputLinks: (request) => inputLinksOf(request, channel, runtime),
    readInput: (url, signal, forTaskId) => readInput(url, signal, runtime, forTaskId),
    callbacks: { urlFor: callbacks.urlFor, received: callbacks.received },
    ...(runtime.artifactUpstream === undefined
      ? {}
      : { upstreamArtifact: (url) => upstreamOfLink(url, runtime) }),
  };
}

/** The upstream ids behind an artifact link of ours; null for uploads, foreign links and files without ids. */
async function upstreamOfLink(url: string, runtime: AdapterRuntime): Promise<UpstreamArtifact | null> {
  const artifact = artifactOfLink(url);
  if (artifact === null || runtime.artifactUpstream === undefined) return null;
  return runtime.artifactUpstream(artifact.taskId, artifact.index);
}

async function callUpstream(
  channel: Channel,
  request: Parameters<UpstreamHttp['request']>[0],
  timeoutMs: number,
  maxBytes: number,
): Promise<UpstreamResponse> {
  const what = `${channel.name}: ${request.method} ${request.path}`;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([request.signal, timeout]);
  const headers: Record<string, string> = { accept: 'application/json', ...request.headers };
  let body: string | FormData | undefined;
  if (request.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(request.json);
  } else if (request.form) {
    body = request.form;
  }
  let bytes: Buffer;
  let response: Response;
  try {
    response = await fetch(`${channel.baseUrl}${request.path}`, {
      method: request.method,
      headers,
      ...(body === undefined ? {} : { body }),
      signal,
      // A provider's API answers where it is asked; a redirect would also carry its key elsewhere.
      redirect: 'error',
    });
    bytes = await readCapped(response, maxBytes);
  } catch (error) {
    // A cancel or shutdown of the run is not the provider's failure.
    if (request.signal.aborted) throw request.signal.reason;
    if (timeout.aborted)
      throw new UpstreamCallTimeout(`${what}: no answer within ${timeoutMs} ms`, { cause: error });
    throw new GeneratorTransientError(`${what}: ${(error as Error).message}`, { cause: error });
  }
  const text = bytes.toString('utf8');
  if (request.raw) {
    // By its type, or by its look when a provider leaves the type out (PROVIDERS.md names none).
    const isJson =
      (response.headers.get('content-type') ?? '').includes('json') || /^\s*[[{]/.test(text.slice(0, 64));
    let body: unknown = null;
    try {
      body = isJson ? (JSON.parse(text) as unknown) : null;
    } catch {
      body = null;
    }
    return { status: response.status, headers: response.headers, body, bytes };
  }
  if (text.trim() === '') return { status: response.status, headers: response.headers, body: null };
  try {
    return { status: response.status, headers: response.headers, body: JSON.parse(text) as unknown };
  } catch (error) {
    // A gateway's HTML page on a 429 or 5xx still says "wait and try again": the status and its
    // Retry-After decide, whatever the body (PROVIDERS.md "transient"). A JSON body is left to the adapter,
    // whose body codes may say more (Kling's no credit comes as HTTP 429).
    const wait = retryAfterMs(response.headers);
    throw new GeneratorTransientError(`${what}: HTTP ${response.status} with a body that is not JSON`, {
      cause: error,
      ...(wait === null ? {} : { retryAfterMs: wait }),
    });
  }
}

/**
 * A provider's output file fetched into `dir`. Output links are short-lived and the provider's: a link
 * that cannot be fetched is transient (PROVIDERS.md "Rules"), the run retried. A file over the output cap
 * is final `generation_failed`, as an input over its cap is refused (CONTRACT §11 "same … caps as
 * inputs"): the same link, or a re-read of the task, gives the same file again, and a new call bills
 * another run for an answer just as likely to be refused (ElevenLabs' audio answers are held to it too).
 */
async function downloadOutput(
  url: string,
  dir: string,
  signal: AbortSignal,
  runtime: TransportOptions & { maxOutputBytes: number },
): Promise<DownloadedOutput> {
  try {
    return await fetchFile(url, dir, signal, runtime);
  } catch (error) {
    if (!(error instanceof FetchError)) throw error;
    if (error.reason === 'too_large')
      throw new GenerationError(
        'generation_failed',
        `an output file is larger than the service stores (${runtime.maxOutputBytes} bytes)`,
      );
    throw new GeneratorTransientError(`output download failed (${error.reason}): ${error.message}`, {
      cause: error,
    });
  }
}
