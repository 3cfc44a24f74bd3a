/**
 * The real `AdapterDeps` of a channel: its provider's HTTP API, guarded output downloads, input links as
 * the provider sees them, and callback addresses (CONTRACT §6, §11; PROVIDERS.md "Rules for every
 * adapter").
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { MAX_UPLOAD_BYTES, type UploadService } from '../../files/index.ts';
import type { Clock } from '../../lib/index.ts';
import { FetchError, fetchToFile, type LookupFn } from '../../media/index.ts';
import type { BlobStore } from '../../storage/index.ts';
import { GenerationError, GeneratorTransientError } from '../generator.ts';
import type { CallbackStore } from './callback-store.ts';
import { decodeDataUrl } from './data-url.ts';
import { OUTPUT_SNIFF_BYTES, sniffOutput } from './output-type.ts';
import type {
  AdapterDeps,
  Channel,
  DownloadedOutput,
  InputBytes,
  UpstreamArtifact,
  UpstreamHttp,
  UpstreamResponse,
} from './types.ts';

/** Each call to a provider's API (PROVIDERS.md: 30 s, exceeding it is transient). */
export const UPSTREAM_CALL_MS = 30_000;
/** Largest output file taken from a provider (bytes). */
export const MAX_OUTPUT_BYTES = 200 * 1024 * 1024;

/** What every channel's deps share: the process's storage, uploads, callbacks and address rules. */
export interface AdapterRuntime extends TransportOptions {
  clock: Clock;
  storage: BlobStore;
  uploads: UploadService;
  callbacks: CallbackStore;
  /** `PUBLIC_BASE_URL` without a trailing slash. */
  publicBaseUrl: string;
  /**
   * The provider's ids of artifact `index` of task `taskId`, when the service kept them. Without it no
   * input is an artifact of ours (`AdapterDeps.upstreamArtifact` is then absent).
   */
  artifactUpstream?(taskId: string, index: number): Promise<UpstreamArtifact | null>;
}

/** Our own upload links: `/files/<token>` or `/files/<token>/<name>`, whatever host they name (CONTRACT §6). */
const OWN_UPLOAD_PATH = /^\/files\/[A-Za-z0-9]{32}(?:\/[^/]*)?$/;
/** A preset voice's sample, as its record names it (a path). */
const OWN_SAMPLE_PATH = /^\/samples\/[^/?#]+\.mp3$/;

/** The download link of an artifact of ours: `/v1/tasks/<task id>/artifacts/<index>`, whatever host it names. */
const ARTIFACT_PATH = /^\/v1\/tasks\/([0-9a-f-]{36})\/artifacts\/(\d{1,4})$/;

/** The task id and index an artifact link names, or null for any other link. */
export function artifactOfLink(url: string): { taskId: string; index: number } | null {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return null;
  }
  const match = ARTIFACT_PATH.exec(path);
  return match ? { taskId: match[1] as string, index: Number(match[2]) } : null;
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
): Pick<AdapterDeps, 'http' | 'download'> {
  const maxOutputBytes = options.maxOutputBytes ?? MAX_OUTPUT_BYTES;
  const timeoutMs = options.callTimeoutMs ?? UPSTREAM_CALL_MS;
  return {
    http: { request: (request) => callUpstream(channel, request, timeoutMs) },
    download: (url, dir, signal) => downloadOutput(url, dir, signal, { ...options, maxOutputBytes }),
  };
}

/** Builds the deps one channel's adapter is made from. */
export function createAdapterDeps(channel: Channel, runtime: AdapterRuntime): AdapterDeps {
  const callbacks = runtime.callbacks.forChannel(channel.name);
  const transport = createTransport(channel, runtime);
  const http: UpstreamHttp = {
    async request(request) {
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
    publicUrl: (url) => publicUrlOf(url, runtime.publicBaseUrl),
    readInput: (url, signal) => readInput(url, signal, runtime),
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
    bytes = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    // A cancel or shutdown of the run is not the provider's failure.
    if (request.signal.aborted) throw request.signal.reason;
    if (timeout.aborted)
      throw new GeneratorTransientError(`${what}: no answer within ${timeoutMs} ms`, { cause: error });
    throw new GeneratorTransientError(`${what}: ${(error as Error).message}`, { cause: error });
  }
  const text = bytes.toString('utf8');
  if (request.raw) {
    const isJson = (response.headers.get('content-type') ?? '').includes('json');
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
    throw new GeneratorTransientError(`${what}: HTTP ${response.status} with a body that is not JSON`, {
      cause: error,
    });
  }
}

/**
 * An input link as a provider sees it: our own uploads, and the presets' samples (`/samples/…`), under
 * `PUBLIC_BASE_URL`; others unchanged.
 */
export function publicUrlOf(url: string, publicBaseUrl: string): string {
  if (OWN_SAMPLE_PATH.test(url)) return `${publicBaseUrl}${url}`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (!OWN_UPLOAD_PATH.test(parsed.pathname)) return url;
  return `${publicBaseUrl}${parsed.pathname}${parsed.search}`;
}

async function sniffFile(path: string): Promise<ReturnType<typeof sniffOutput>> {
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(OUTPUT_SNIFF_BYTES);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return await sniffOutput(head.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

/**
 * A provider's output file fetched into `dir`. Output links are short-lived and the provider's: a link
 * that cannot be fetched is transient (PROVIDERS.md "Rules"), the run retried.
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
    throw new GeneratorTransientError(`output download failed (${error.reason}): ${error.message}`, {
      cause: error,
    });
  }
}

/** A link or data URL fetched into `dir` under the address rules and caps, its type sniffed; throws FetchError. */
async function fetchFile(
  url: string,
  dir: string,
  signal: AbortSignal,
  runtime: TransportOptions & { maxOutputBytes: number },
): Promise<DownloadedOutput> {
  let path: string;
  let sizeBytes: number;
  if (url.startsWith('data:')) {
    const decoded = decodeDataUrl(url, runtime.maxOutputBytes);
    if (!decoded.ok) throw new FetchError('bad_url', `data URL: ${decoded.reason}`);
    path = join(dir, randomUUID());
    await writeFile(path, decoded.bytes, { flag: 'wx' });
    sizeBytes = decoded.bytes.length;
  } else {
    const fetched = await fetchToFile(url, {
      dir,
      maxBytes: runtime.maxOutputBytes,
      totalTimeoutMs: runtime.downloadTimeoutMs ?? 5 * 60_000,
      signal,
      allowAddresses: runtime.fetchAllowAddresses,
      ...(runtime.lookup ? { lookup: runtime.lookup } : {}),
    });
    path = fetched.path;
    sizeBytes = fetched.sizeBytes;
  }
  const type = await sniffFile(path);
  return { path, sizeBytes, format: type.format, contentType: type.contentType };
}

async function readAll(body: Readable, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      body.destroy();
      throw new Error(`over ${maxBytes} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function nameOf(url: string): string {
  try {
    const last = new URL(url).pathname.split('/').pop() ?? '';
    return decodeURIComponent(last) || 'input';
  } catch {
    return 'input';
  }
}

async function readInput(url: string, signal: AbortSignal, runtime: AdapterRuntime): Promise<InputBytes> {
  const own = await runtime.uploads.byUrl(url);
  if (own) {
    let object: Awaited<ReturnType<BlobStore['get']>>;
    try {
      object = await runtime.storage.get(own.storage_key);
    } catch (error) {
      // Storage briefly unreachable: the input is still there, so the run is tried again.
      throw new GeneratorTransientError(`reading upload ${own.id} failed`, { cause: error });
    }
    // Our own input gone before any upstream call: the task cannot run (PROVIDERS.md, input_unavailable).
    if (!object) throw new GenerationError('input_unavailable', `upload ${own.id} is no longer stored`);
    const bytes = await readAll(object.body, MAX_UPLOAD_BYTES);
    return { bytes, format: own.format, contentType: own.content_type, filename: own.filename };
  }
  const dir = await mkdtemp(join(tmpdir(), 'gta-input-'));
  try {
    let downloaded: DownloadedOutput;
    try {
      downloaded = await fetchFile(url, dir, signal, { ...runtime, maxOutputBytes: MAX_UPLOAD_BYTES });
    } catch (error) {
      // A cancel or shutdown of the run is not the input's fault.
      if (signal.aborted) throw signal.reason;
      if (!(error instanceof FetchError)) throw error;
      // The caller's link answered the probe at acceptance and fails now: the caller's problem, not the
      // channel's. The task fails before any upstream call (PROVIDERS.md "Normalised mapping") and
      // nothing counts against the channel or its circuit; a transient error here would let one caller's
      // flaky link open a channel for everyone.
      throw new GenerationError(
        'input_unavailable',
        `the input file at ${url} cannot be read (${error.reason}): ${error.message}`,
      );
    }
    const handle = await open(downloaded.path, 'r');
    try {
      const bytes = await handle.readFile();
      return {
        bytes,
        format: downloaded.format,
        contentType: downloaded.contentType,
        filename: nameOf(url),
      };
    } finally {
      await handle.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
