/**
 * Test-only AdapterDeps for driving an adapter against a fake: fetch-based upstream calls, downloads
 * that sniff and cap, public URLs under a made-up base, and callbacks received by a small in-memory
 * endpoint on 127.0.0.1 (`/v1/callbacks/{channel}/{token}`). The service's real deps are built elsewhere.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type {
  AdapterDeps,
  Channel,
  UpstreamArtifact,
  UpstreamRequest,
} from '../../src/generators/adapters/types.ts';
import { GeneratorTransientError } from '../../src/generators/generator.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { sniffFormat } from '../../src/media/index.ts';

/** Largest output the test deps download (bytes). */
export const TEST_OUTPUT_CAP = 5 * 1024 * 1024;

export interface TestDeps {
  deps: AdapterDeps;
  /** Public base URL our uploads are under. */
  publicBase: string;
  /** Callback bodies by run key. */
  received: Map<string, unknown[]>;
  /** Downloads attempted, in order. */
  downloads: string[];
  close(): Promise<void>;
}

export function testChannel(provider: Channel['provider'], baseUrl: string, apiKey: string): Channel {
  return {
    name: `${provider}-test`,
    provider,
    models: ['music'],
    baseUrl,
    secrets: { api_key: apiKey },
    priority: 0,
    weight: 1,
    maxConcurrency: 10,
    timeoutMs: 30 * 60_000,
    upstreamModels: {},
  };
}

export async function createTestDeps(
  channel: Channel,
  options: { artifacts?: Record<string, UpstreamArtifact> } = {},
): Promise<TestDeps> {
  const received = new Map<string, unknown[]>();
  const tokens = new Map<string, string>();
  const downloads: string[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const token = (req.url ?? '').split('/').pop() ?? '';
    const key = tokens.get(token);
    // CONTRACT §11: an unknown token is 404.
    if (req.method !== 'POST' || key === undefined) return void res.writeHead(404).end();
    let body: unknown = null;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return void res.writeHead(400).end();
    }
    received.set(key, [...(received.get(key) ?? []), body]);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const callbackBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const publicBase = 'https://api.example.test';

  const deps: AdapterDeps = {
    channel,
    clock: systemClock,
    http: {
      async request(request: UpstreamRequest) {
        let response: Response;
        try {
          response = await fetch(`${channel.baseUrl}${request.path}`, {
            method: request.method,
            headers: {
              ...(request.json === undefined ? {} : { 'content-type': 'application/json' }),
              ...request.headers,
            },
            ...(request.json === undefined ? {} : { body: JSON.stringify(request.json) }),
            ...(request.form === undefined ? {} : { body: request.form }),
            signal: AbortSignal.any([request.signal, AbortSignal.timeout(30_000)]),
          });
        } catch (error) {
          throw new GeneratorTransientError(`${request.method} ${request.path}: ${String(error)}`, {
            cause: error,
          });
        }
        const text = await response.text();
        let body: unknown = null;
        try {
          body = text === '' ? null : JSON.parse(text);
        } catch (error) {
          throw new GeneratorTransientError(`${request.method} ${request.path}: body is not JSON`, {
            cause: error,
          });
        }
        return { status: response.status, headers: response.headers, body };
      },
    },
    async download(url, dir, signal) {
      downloads.push(url);
      const response = await fetch(url, { signal }).catch((error: unknown) => {
        throw new GeneratorTransientError(`download: ${String(error)}`, { cause: error });
      });
      if (!response.ok) throw new GeneratorTransientError(`download: HTTP ${response.status}`);
      const bytes = Buffer.from(await response.arrayBuffer());
      if (bytes.length > TEST_OUTPUT_CAP) throw new GeneratorTransientError('download: too big');
      const sniffed = await sniffFormat(bytes);
      const format = sniffed?.format ?? 'unknown';
      const path = join(dir, `${randomUUID()}.${format}`);
      await writeFile(path, bytes);
      return {
        path,
        sizeBytes: bytes.length,
        format,
        contentType: sniffed?.contentType ?? 'application/octet-stream',
      };
    },
    publicUrl: (url) => new URL(new URL(url, publicBase).pathname, publicBase).toString(),
    async readInput() {
      throw new Error('readInput is not used by this adapter');
    },
    callbacks: {
      urlFor(runKey) {
        const token = randomUUID().replaceAll('-', '');
        tokens.set(token, runKey);
        return `${callbackBase}/v1/callbacks/${channel.name}/${token}`;
      },
      async received(runKey) {
        return received.get(runKey) ?? [];
      },
    },
    ...(options.artifacts === undefined
      ? {}
      : { upstreamArtifact: async (url: string) => options.artifacts?.[url] ?? null }),
  };
  return {
    deps,
    publicBase,
    received,
    downloads,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
