/**
 * AdapterDeps for driving one adapter against a fake without the service around it. The upstream HTTP
 * client and the output downloads are the service's own (`createTransport`, loopback allowed); what the
 * real deps take from the database and storage is replaced here: our uploads served from memory, public
 * links under a made-up base, callbacks received by a small endpoint on 127.0.0.1
 * (`/v1/callbacks/{channel}/{token}`), and the upstream ids of files our runs produced.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  type AdapterDeps,
  type Channel,
  createTransport,
  type InputBytes,
  sniffOutput,
  type UpstreamArtifact,
} from '../../src/generators/adapters/index.ts';
import { systemClock } from '../../src/lib/clock.ts';

/** Largest output the test deps download (bytes). */
export const TEST_OUTPUT_CAP = 5 * 1024 * 1024;

export interface TestDepsOptions {
  /** Our own uploads by link (read by adapters that upload files to the provider). */
  inputs?: ReadonlyMap<string, Uint8Array>;
  /** Upstream ids of files our runs produced, by link. */
  artifacts?: Record<string, UpstreamArtifact>;
  /** The direct link a run lends for an input link (`AdapterDeps.inputLinks`), by link. */
  lent?: Record<string, string>;
  /**
   * Links shaped like our uploads' that name none of ours (a CDN's `/files/<32 hex>/…`): `publicLinks` and
   * `inputLinks` leave them at their own host when they are among the links asked for, as the real deps.
   */
  foreign?: readonly string[];
  /** Largest output accepted (bytes). (Default: TEST_OUTPUT_CAP) */
  maxDownloadBytes?: number;
  /** Limit of one API call (milliseconds). (Default: 30 s, as PROVIDERS.md says) */
  callTimeoutMs?: number;
}

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

export function testChannel(
  provider: Channel['provider'],
  baseUrl: string,
  apiKey: string,
  models: readonly string[] = ['music'],
): Channel {
  return {
    name: `${provider}-test`,
    provider,
    models,
    baseUrl,
    secrets: { api_key: apiKey },
    priority: 0,
    weight: 1,
    maxConcurrency: 10,
    timeoutMs: 30 * 60_000,
    upstreamModels: {},
  };
}

const PUBLIC_BASE = 'https://api.example.test';

/** The deps of `channel`; `callbackBase` is where its callback addresses point. */
function buildDeps(
  channel: Channel,
  options: TestDepsOptions,
  state: { received: Map<string, unknown[]>; tokens: Map<string, string>; downloads: string[] },
  callbackBase: string,
): AdapterDeps {
  const publicUrl = (url: string): string =>
    new URL(new URL(url, PUBLIC_BASE).pathname, PUBLIC_BASE).toString();
  const keptForeign =
    (urls: readonly string[]) =>
    (url: string): string =>
      urls.includes(url) && options.foreign?.includes(url) === true ? url : publicUrl(url);
  const transport = createTransport(channel, {
    // The fakes serve their files on loopback, which the address rules refuse in production.
    fetchAllowAddresses: ['127.0.0.1'],
    maxOutputBytes: options.maxDownloadBytes ?? TEST_OUTPUT_CAP,
    ...(options.callTimeoutMs === undefined ? {} : { callTimeoutMs: options.callTimeoutMs }),
  });
  return {
    channel,
    clock: systemClock,
    http: transport.http,
    maxOutputBytes: transport.maxOutputBytes,
    download(url, dir, signal) {
      state.downloads.push(url);
      return transport.download(url, dir, signal);
    },
    publicUrl,
    publicLinks: async (urls) => keptForeign(urls),
    // Links lent for a run (the real deps lend artifact links by a direct link of their own); a foreign
    // link is left as it is only among the run's input files, as `inputLinksOf` does.
    inputLinks: async (request) => {
      const link = keptForeign((request.inputs.files ?? []).map((file) => file.url));
      return (url) => options.lent?.[url] ?? link(url);
    },
    async readInput(url): Promise<InputBytes> {
      const bytes = options.inputs?.get(url);
      if (bytes === undefined) throw new Error(`no test input at ${url}`);
      const { format, contentType } = await sniffOutput(bytes);
      return {
        bytes: Buffer.from(bytes),
        format,
        contentType,
        filename: path.basename(new URL(url).pathname),
      };
    },
    callbacks: {
      urlFor(runKey) {
        const token = randomUUID().replaceAll('-', '');
        state.tokens.set(token, runKey);
        return `${callbackBase}/v1/callbacks/${channel.name}/${token}`;
      },
      async received(runKey) {
        return state.received.get(runKey) ?? [];
      },
    },
    ...(options.artifacts === undefined
      ? {}
      : { upstreamArtifact: async (url: string) => options.artifacts?.[url] ?? null }),
  };
}

/** Deps whose callbacks are never delivered (for providers polled only), ready at once. */
export function pollingTestDeps(channel: Channel, options: TestDepsOptions = {}): AdapterDeps {
  const state = { received: new Map(), tokens: new Map(), downloads: [] };
  return buildDeps(channel, options, state, 'http://127.0.0.1:9');
}

/** Deps with a callback endpoint on 127.0.0.1 that keeps what providers post to it. */
export async function createTestDeps(channel: Channel, options: TestDepsOptions = {}): Promise<TestDeps> {
  const state = { received: new Map<string, unknown[]>(), tokens: new Map<string, string>(), downloads: [] };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const token = (req.url ?? '').split('/').pop() ?? '';
    const key = state.tokens.get(token);
    // CONTRACT §11: an unknown token is 404.
    if (req.method !== 'POST' || key === undefined) return void res.writeHead(404).end();
    let body: unknown = null;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return void res.writeHead(400).end();
    }
    state.received.set(key, [...(state.received.get(key) ?? []), body]);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const callbackBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    deps: buildDeps(channel, options, state, callbackBase),
    publicBase: PUBLIC_BASE,
    received: state.received,
    downloads: state.downloads,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
