/**
 * What every provider adapter is built from (CONTRACT §11, PROVIDERS.md). A channel of the channel file
 * names a provider; the channel router builds one adapter per channel from `AdapterDeps` and drives it
 * through the Generator port. Adapters speak their provider's wire shapes and classify its answers; the
 * router and the worker own retries, slots, circuits and the task's money.
 *
 * Errors an adapter throws (from any Generator method):
 * - `GeneratorTransientError`: connection errors, timeouts, 429, 5xx, a provider's "busy" or transient
 *   codes, an output that could not be downloaded (PROVIDERS.md "transient"). Retried, counts toward
 *   opening the channel.
 * - `ChannelOutOfCredit`: the channel's own account has no credit. The channel is disabled until the
 *   operator enables it; the run moves on to another channel.
 * - `GenerationError('content_refused' | 'generation_failed', reason)`: a final refusal, or
 *   `GenerationStatus { state: 'failed' }` from `status()` for a failed upstream task.
 * - `GenerationError('input_unavailable', reason)`: one of the task's inputs cannot be read before any
 *   upstream call (`readInput`). Final; it says nothing of the channel, so it never counts against it.
 */
import type { Clock } from '../../lib/index.ts';
import { type GenerationRequest, type Generator, GeneratorTransientError } from '../generator.ts';
import type { LibraryGenerator } from '../library.ts';

/** Providers a channel may name (CONTRACT §11). */
export const PROVIDERS = [
  'simulator',
  'tripo',
  'suno',
  'cog',
  'seedance',
  'kling',
  'elevenlabs',
  'recraft',
] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** True for a provider a channel may name. */
export function isProviderName(value: string): value is ProviderName {
  return (PROVIDERS as readonly string[]).includes(value);
}

/** One channel of `GENERATORS_FILE`, checked and with its secrets read from the environment. */
export interface Channel {
  /** Unique name; also the path segment of its callbacks. */
  name: string;
  provider: ProviderName;
  /** Our model keys this channel serves. */
  models: readonly string[];
  /** The provider's API root without a trailing slash (the provider's public default when unset). */
  baseUrl: string;
  /** Secrets named by the file's `*_env` keys, by key without `_env`: `{ api_key }`, `{ access_key, secret_key }`. */
  secrets: Readonly<Record<string, string>>;
  /** Lower runs first. (Default: 0) */
  priority: number;
  /** Share among channels of equal priority. (Default: 1) */
  weight: number;
  /** Runs in flight at once on this channel, across all workers. (Default: 10) */
  maxConcurrency: number;
  /** A run's limit from its upstream creation (milliseconds). (Default: 30 min) */
  timeoutMs: number;
  /** Our model version → the provider's model id; overrides the adapter's built-in table. */
  upstreamModels: Readonly<Record<string, string>>;
}

/** The channel's own account at the provider has no credit (PROVIDERS.md "no credit"). */
export class ChannelOutOfCredit extends Error {
  override name = 'ChannelOutOfCredit';
}

/**
 * The provider has no free slot for the run (Cog's 409, PROVIDERS.md §3: "no slot (run stays queued)"):
 * the task goes back to `queued` and waits, using up no attempt and not counting against the channel.
 * Transient (it extends `GeneratorTransientError`): a router that does not know it retries the run.
 */
export class ChannelBusy extends GeneratorTransientError {
  override name = 'ChannelBusy';
}

/**
 * The upstream task is gone for good (expired, unknown to the provider, or cancelled by someone else), so
 * polling it again cannot help: the run is retried as a new run, on another channel where there is one.
 * Transient (it extends `GeneratorTransientError`): a router that does not know it keeps polling in place.
 */
export class UpstreamRunLost extends GeneratorTransientError {
  override name = 'UpstreamRunLost';
}

/**
 * A call to the provider got no answer within its limit (PROVIDERS.md "Rules": 30 s, transient). Unlike an
 * answer, it leaves open whether the provider acted on the call: a create may have started a run.
 */
export class UpstreamCallTimeout extends GeneratorTransientError {
  override name = 'UpstreamCallTimeout';
}

/** An answer of the provider's HTTP API, parsed. */
export interface UpstreamResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON, or null for an empty body. */
  body: unknown;
  /** The answer's bytes, for requests made with `raw`. */
  bytes?: Buffer;
}

export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  /** Path under the channel's `baseUrl`, starting with `/`. */
  path: string;
  headers?: Record<string, string>;
  /** JSON body. */
  json?: unknown;
  /** Multipart body (file uploads). */
  form?: FormData;
  /**
   * The answer may be bytes (audio) or plain text: it comes back as `bytes`, with `body` parsed when it is
   * JSON and null otherwise, instead of a body that is not JSON being a transient failure.
   */
  raw?: boolean;
  signal: AbortSignal;
}

/**
 * Calls to the provider's API: each bounded to 30 s (PROVIDERS.md). Connection errors, timeouts and bodies
 * that are not JSON throw `GeneratorTransientError` (a body that is not JSON with the answer's
 * Retry-After, so a gateway's HTML 429 or 503 still asks for its wait); every HTTP status with a JSON or
 * empty body is returned for the adapter to classify (`transientFailure` helps). Authentication headers
 * are the adapter's.
 */
export interface UpstreamHttp {
  request(request: UpstreamRequest): Promise<UpstreamResponse>;
}

/** One output file fetched into the run's folder, its type sniffed from its bytes. */
export interface DownloadedOutput {
  path: string;
  sizeBytes: number;
  /** Sniffed format: `glb`, `fbx`, `png`, `jpeg`, `webp`, `svg`, `mp3`, `wav`, `mp4`, … */
  format: string;
  contentType: string;
}

/** One of our own inputs read back as bytes, for providers that only take uploaded files. */
export interface InputBytes {
  bytes: Buffer;
  format: string;
  contentType: string;
  filename: string;
}

export interface AdapterDeps {
  channel: Channel;
  clock: Clock;
  http: UpstreamHttp;
  /**
   * Downloads an output URL into `dir` under the address rules of CONTRACT §6 (also after redirects), a
   * size cap and a time limit; throws `GeneratorTransientError` when it cannot (expired URL, 5xx, too big).
   */
  download(url: string, dir: string, signal: AbortSignal): Promise<DownloadedOutput>;
  /**
   * Largest output file (bytes), which `download` enforces; an adapter whose output comes as a call's
   * answer (ElevenLabs' audio) checks it there.
   */
  maxOutputBytes: number;
  /**
   * An input link as the provider should see it: our own uploads as absolute URLs under PUBLIC_BASE_URL
   * (library steps; a task's run takes `inputLinks`, which also lends the caller's result files). By the
   * link's shape alone: a library step's links go through `publicLinks`.
   */
  publicUrl(url: string): string;
  /**
   * `publicUrl` for the links of a library step, except that one shaped like an upload's whose token
   * names none of ours (another host's `/files/<32 hex>/…`) stays as it is.
   */
  publicLinks(urls: readonly string[]): Promise<(url: string) => string>;
  /**
   * The input links of a task's run as its provider should see them, for providers that fetch inputs by
   * URL (PROVIDERS.md "Rules": absolute URLs under PUBLIC_BASE_URL): `publicUrl` of each link, except
   * that among the run's input files (`request.inputs.files`) a link shaped like an upload's whose token
   * names none stays as it is, and an artifact link (the caller's own result file, checked at acceptance)
   * becomes a direct link of its own made for the run, which works without an API key until the channel's
   * timeout has passed. Throws `GenerationError('input_unavailable')` when such
   * a file is no longer there (its files expired) or is not the task's account's.
   */
  inputLinks(request: GenerationRequest, signal: AbortSignal): Promise<(url: string) => string>;
  /**
   * Reads an input link's bytes: our own upload, or an artifact link of the account of task `forTaskId`,
   * from storage (never over HTTP); any other link through a guarded download. An artifact link without
   * `forTaskId` (a library creation) or of another account is not read. An input that cannot be read (an
   * upload or result file gone, a caller's link failing now) throws `GenerationError('input_unavailable')`:
   * the caller's problem, never the channel's.
   */
  readInput(url: string, signal: AbortSignal, forTaskId?: string): Promise<InputBytes>;
  /**
   * Callback addresses (CONTRACT §11): `urlFor` gives `PUBLIC_BASE_URL/v1/callbacks/{channel}/{token}` with
   * a secret token per run; `received` lists the JSON bodies posted there for the run, oldest first.
   */
  callbacks: {
    urlFor(runKey: string): string;
    received(runKey: string): Promise<unknown[]>;
  };
  /**
   * The upstream ids of the file an input link names, when it is an output of one of our runs and the
   * service kept them; null otherwise. Optional: without it an adapter treats every input as a foreign
   * file (Suno's replace-section then fails before any call, as PROVIDERS.md §2 decides).
   */
  upstreamArtifact?(url: string, signal: AbortSignal): Promise<UpstreamArtifact | null>;
}

/** Upstream ids of a file one of our runs produced (PROVIDERS.md §2: "each artifact keeps upstream taskId/audioId"). */
export interface UpstreamArtifact {
  /** Provider of the channel that produced the file. */
  provider: ProviderName;
  /** The provider's ids of the file, for example `{ taskId, audioId }` at Suno. */
  ids: Readonly<Record<string, string>>;
}

/** A provider's adapter: the task side always, the library side where the provider serves libraries. */
export interface Adapter extends Generator {
  library?: LibraryGenerator;
}

export type AdapterFactory = (deps: AdapterDeps) => Adapter;
