/**
 * A small `AdapterDeps` for adapter tests, built on fetch: a channel pointing at a fake, JSON calls with a
 * time limit, downloads to loopback only with a size cap and a sniffed type, and our own uploads served
 * from memory. The service's own deps (address rules, storage) are not needed to drive an adapter.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type {
  AdapterDeps,
  Channel,
  DownloadedOutput,
  InputBytes,
  UpstreamRequest,
  UpstreamResponse,
} from '../../src/generators/adapters/types.ts';
import { GeneratorTransientError } from '../../src/generators/generator.ts';
import { systemClock } from '../../src/lib/clock.ts';

export interface TestDepsOptions {
  baseUrl: string;
  apiKey: string;
  upstreamModels?: Record<string, string>;
  /** Our own uploads by link. */
  inputs?: ReadonlyMap<string, Uint8Array>;
  /** Largest output accepted (bytes). (Default: 1 MiB) */
  maxDownloadBytes?: number;
  /** Limit of one API call (milliseconds). (Default: 30 s, as PROVIDERS.md says) */
  callTimeoutMs?: number;
}

/** Sniffed formats and their content types, by magic bytes. */
function sniff(bytes: Uint8Array): { format: string; contentType: string } {
  const ascii = (from: number, to: number): string =>
    Buffer.from(bytes.subarray(from, to)).toString('latin1');
  if (ascii(0, 4) === 'glTF') return { format: 'glb', contentType: 'model/gltf-binary' };
  if (ascii(0, 18) === 'Kaydara FBX Binary')
    return { format: 'fbx', contentType: 'application/octet-stream' };
  if (ascii(1, 4) === 'PNG') return { format: 'png', contentType: 'image/png' };
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff)
    return { format: 'jpeg', contentType: 'image/jpeg' };
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return { format: 'webp', contentType: 'image/webp' };
  return { format: 'unknown', contentType: 'application/octet-stream' };
}

/** A fetch bounded by the caller's signal and its own limit; a limit or network error is transient. */
async function boundedFetch(
  url: string,
  init: RequestInit,
  signal: AbortSignal,
  timeoutMs: number,
  what: string,
): Promise<Response> {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) });
  } catch (error) {
    signal.throwIfAborted();
    throw new GeneratorTransientError(`${what}: ${String(error)}`, { cause: error });
  }
}

/** Deps for one channel named `tripo-test` that points at `options.baseUrl`. */
export function tripoTestDeps(options: TestDepsOptions): AdapterDeps & { channel: Channel } {
  const timeoutMs = options.callTimeoutMs ?? 30_000;
  const maxBytes = options.maxDownloadBytes ?? 1024 * 1024;
  const channel: Channel = {
    name: 'tripo-test',
    provider: 'tripo',
    models: ['model-3d'],
    baseUrl: options.baseUrl,
    secrets: { api_key: options.apiKey },
    priority: 0,
    weight: 1,
    maxConcurrency: 10,
    timeoutMs: 30 * 60_000,
    upstreamModels: options.upstreamModels ?? {},
  };
  return {
    channel,
    clock: systemClock,
    http: {
      async request(request: UpstreamRequest): Promise<UpstreamResponse> {
        const headers = new Headers(request.headers);
        let body: string | FormData | undefined;
        if (request.json !== undefined) {
          headers.set('content-type', 'application/json');
          body = JSON.stringify(request.json);
        } else if (request.form) body = request.form;
        const what = `${request.method} ${request.path}`;
        const response = await boundedFetch(
          `${channel.baseUrl}${request.path}`,
          { method: request.method, headers, body },
          request.signal,
          timeoutMs,
          what,
        );
        const text = await response.text();
        try {
          return {
            status: response.status,
            headers: response.headers,
            body: text === '' ? null : JSON.parse(text),
          };
        } catch (error) {
          throw new GeneratorTransientError(`${what}: the answer is not JSON`, { cause: error });
        }
      },
    },
    async download(url: string, dir: string, signal: AbortSignal): Promise<DownloadedOutput> {
      // Tests reach the fakes only (CONTRACT §6 forbids loopback to the service itself).
      if (new URL(url).hostname !== '127.0.0.1')
        throw new GeneratorTransientError(`download: ${url} refused`);
      const response = await boundedFetch(url, {}, signal, timeoutMs, 'download');
      if (!response.ok) throw new GeneratorTransientError(`download: HTTP ${response.status}`);
      const bytes = new Uint8Array(await response.arrayBuffer());
      if (bytes.length > maxBytes)
        throw new GeneratorTransientError(`download: ${bytes.length} bytes is too big`);
      const { format, contentType } = sniff(bytes);
      const file = path.join(dir, `${randomUUID()}.${format}`);
      await writeFile(file, bytes);
      return { path: file, sizeBytes: bytes.length, format, contentType };
    },
    publicUrl: (url) => url,
    async readInput(url: string): Promise<InputBytes> {
      const bytes = options.inputs?.get(url);
      if (bytes === undefined) throw new Error(`no test input at ${url}`);
      const { format, contentType } = sniff(bytes);
      return {
        bytes: Buffer.from(bytes),
        format,
        contentType,
        filename: path.basename(new URL(url).pathname),
      };
    },
    callbacks: {
      urlFor: (runKey) => `http://127.0.0.1/v1/callbacks/tripo-test/${encodeURIComponent(runKey)}`,
      received: async () => [],
    },
  };
}
