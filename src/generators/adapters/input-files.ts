/**
 * The inputs of a run as adapters use them (CONTRACT §6, §11; PROVIDERS.md "Rules"). A provider that
 * fetches URLs gets links it can fetch without an API key: our uploads under PUBLIC_BASE_URL, and the
 * caller's own result files lent by a direct link of their own (an artifact link needs a key). A provider
 * that takes uploaded files gets bytes: our uploads and result files read from storage, never over HTTP,
 * and other links through the guarded download. Whatever cannot be read is the caller's problem:
 * `GenerationError('input_unavailable')`, never a failure of the channel.
 */
import { open, rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { ArtifactKind, InputFile } from '../../catalog/index.ts';
import { MAX_UPLOAD_BYTES, type UploadService } from '../../files/index.ts';
import { type Clock, makeTempFolder } from '../../lib/index.ts';
import { FetchError } from '../../media/index.ts';
import { type BlobStore, StorageError } from '../../storage/index.ts';
import { GenerationError, type GenerationRequest } from '../generator.ts';
import { type FetchFileOptions, fetchFile, MAX_OUTPUT_BYTES } from './fetch-file.ts';
import { OUTPUT_SNIFF_BYTES, sniffOutput } from './output-type.ts';
import type { Channel, DownloadedOutput, InputBytes } from './types.ts';

/** What reading and lending inputs needs of the process: storage, uploads, addresses. */
export interface InputRuntime extends Omit<FetchFileOptions, 'maxOutputBytes'> {
  clock: Clock;
  storage: BlobStore;
  uploads: UploadService;
  /** `PUBLIC_BASE_URL` without a trailing slash. */
  publicBaseUrl: string;
  /**
   * The stored file behind an artifact link among the inputs of task `forTaskId`, when it is a result
   * file of the same account (its task succeeded, its files not expired); null otherwise. Without it no
   * artifact link is read or lent: such an input fails its task with input_unavailable.
   */
  artifactInput?(forTaskId: string, url: string): Promise<StoredArtifact | null>;
}

/** A result file of ours, as a run reads or lends it (`AdapterRuntime.artifactInput`). */
export interface StoredArtifact {
  /** The account the file belongs to (the task's). */
  accountId: string;
  storageKey: string;
  filename: string;
  contentType: string;
  kind: ArtifactKind;
  sizeBytes: number;
  /** The task's `files_expire_at`: from then on the file answers 404, lent or not. */
  filesExpireAt: string;
}

/** Our own upload links: `/files/<token>` or `/files/<token>/<name>`, whatever host they name (CONTRACT §6). */
const OWN_UPLOAD_PATH = /^\/files\/[A-Za-z0-9]{32}(?:\/[^/]*)?$/;
/** A preset voice's sample, as its record names it (a path). */
const OWN_SAMPLE_PATH = /^\/samples\/[^/?#]+\.mp3$/;

/** The download link of an artifact of ours: `/v1/tasks/<task id>/artifacts/<index>`, whatever host it names. */
const ARTIFACT_PATH = /^\/v1\/tasks\/([0-9a-f-]{36})\/artifacts\/(\d{1,4})$/;

/**
 * The task id and index an artifact link names, or null for any other link. The index is read as the
 * download route reads it: only as the task's list writes it (`0`, `1`, … without leading zeros); another
 * spelling (`00`, `01`) is an artifact link that names no file, index -1.
 */
export function artifactOfLink(url: string): { taskId: string; index: number } | null {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return null;
  }
  const match = ARTIFACT_PATH.exec(path);
  if (!match) return null;
  const index = match[2] as string;
  return { taskId: match[1] as string, index: /^(0|[1-9]\d*)$/.test(index) ? Number(index) : -1 };
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

/**
 * The run's input links as the provider sees them (`AdapterDeps.inputLinks`): each artifact link among
 * the run's input files lent by a direct link of its own, an input file's link shaped like an upload's
 * but naming none unchanged, every other link as `publicUrlOf` gives it.
 */
export async function inputLinksOf(
  request: GenerationRequest,
  channel: Channel,
  runtime: InputRuntime,
): Promise<(url: string) => string> {
  const lent = new Map<string, string>();
  for (const file of request.inputs.files ?? []) {
    if (lent.has(file.url) || artifactOfLink(file.url) === null) continue;
    lent.set(file.url, await lendArtifact(file, request.taskId, channel, runtime));
  }
  const links = await publicLinksOf(
    (request.inputs.files ?? []).map((file) => file.url),
    runtime,
  );
  return (url) => lent.get(url) ?? links(url);
}

/**
 * `publicUrlOf` of each link, except that a link among `urls` shaped like an upload's whose token names
 * none of ours (a CDN's `/files/<32 hex>/photo.png`) stays as it is: it was downloaded from its own host
 * when the request was accepted (tasks/inputs.ts), so the provider fetches it there, not at a 404 of ours.
 * Other links are as `publicUrlOf` gives them (`AdapterDeps.publicLinks`).
 */
export async function publicLinksOf(
  urls: readonly string[],
  runtime: Pick<InputRuntime, 'uploads' | 'publicBaseUrl'>,
): Promise<(url: string) => string> {
  const foreign = new Set<string>();
  for (const url of new Set(urls)) {
    // A preset's stored sample (`/samples/…`) is ours by its path: no upload names it.
    if (OWN_SAMPLE_PATH.test(url)) continue;
    const moved = publicUrlOf(url, runtime.publicBaseUrl) !== url;
    if (moved && !(await runtime.uploads.isOwnLink(url))) foreign.add(url);
  }
  return (url) => (foreign.has(url) ? url : publicUrlOf(url, runtime.publicBaseUrl));
}

/**
 * A direct link to the result file an input names, for the provider (an artifact link needs an API key,
 * which no provider has): the upload links' own `/files/{token}` form and route, lending the file's
 * bytes. The provider may fetch it at any moment of the run, whose deadline is the channel's timeout from
 * its move to running, just before now: the link lives that long from now, or until the file expires.
 */
async function lendArtifact(
  file: InputFile,
  forTaskId: string,
  channel: Channel,
  runtime: InputRuntime,
): Promise<string> {
  const link = artifactOfLink(file.url);
  // Only a result file of the task's own account is lent, whatever the settings name.
  const artifact = link === null ? null : ((await runtime.artifactInput?.(forTaskId, file.url)) ?? null);
  if (link === null || artifact === null) {
    throw new GenerationError(
      'input_unavailable',
      `settings.${file.field}.${file.position}: the result file at ${file.url} is no longer available`,
    );
  }
  const lent = await runtime.uploads.lend({
    accountId: artifact.accountId,
    storageKey: artifact.storageKey,
    filename: artifact.filename,
    contentType: artifact.contentType,
    format: file.format,
    kind: artifact.kind,
    sizeBytes: artifact.sizeBytes,
    ...(file.durationSeconds === undefined ? {} : { durationSeconds: file.durationSeconds }),
    ...(file.width === undefined ? {} : { width: file.width }),
    ...(file.height === undefined ? {} : { height: file.height }),
    source: `${link.taskId}/${link.index}`,
    // Never past the file's own expiry: the link must not serve a result file its download refuses.
    expiresAt: new Date(
      Math.min(runtime.clock.now().getTime() + channel.timeoutMs, Date.parse(artifact.filesExpireAt)),
    ),
  });
  return publicUrlOf(lent, runtime.publicBaseUrl);
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

/**
 * A result file of ours named by an artifact link, read from storage (the link needs an API key; a round
 * trip to ourselves would be refused). Only for a task of the file's own account.
 */
async function readArtifact(url: string, runtime: InputRuntime, forTaskId?: string): Promise<InputBytes> {
  const artifact = forTaskId === undefined ? null : ((await runtime.artifactInput?.(forTaskId, url)) ?? null);
  // Another account's file, or one no task asks for (a library creation), reads as gone.
  if (artifact === null)
    throw new GenerationError('input_unavailable', `the result file at ${url} is no longer available`);
  let object: Awaited<ReturnType<BlobStore['get']>>;
  try {
    object = await runtime.storage.get(artifact.storageKey);
  } catch (error) {
    throw ownStorageFailed(`reading the result file at ${url} failed`, error);
  }
  if (!object)
    throw new GenerationError('input_unavailable', `the result file at ${url} is no longer stored`);
  const bytes = await readAll(object.body, MAX_OUTPUT_BYTES);
  const type = await sniffOutput(bytes.subarray(0, OUTPUT_SNIFF_BYTES));
  return { bytes, format: type.format, contentType: type.contentType, filename: artifact.filename };
}

/**
 * Our storage briefly unreachable while a run reads an input of ours: the input is still there, so the run
 * is tried again, and the failure is ours, a StorageError, never the channel's (a GeneratorTransientError
 * would count against it: docs/providers.md, "failures of our own storage never count against a channel").
 */
function ownStorageFailed(what: string, error: unknown): StorageError {
  return error instanceof StorageError ? error : new StorageError(what, { cause: error });
}

/** An input link's bytes (`AdapterDeps.readInput`). */
export async function readInput(
  url: string,
  signal: AbortSignal,
  runtime: InputRuntime,
  forTaskId?: string,
): Promise<InputBytes> {
  if (artifactOfLink(url) !== null) return readArtifact(url, runtime, forTaskId);
  const own = await runtime.uploads.byUrl(url);
  if (own) {
    let object: Awaited<ReturnType<BlobStore['get']>>;
    try {
      object = await runtime.storage.get(own.storage_key);
    } catch (error) {
      throw ownStorageFailed(`reading upload ${own.id} failed`, error);
    }
    // Our own input gone before any upstream call: the task cannot run (PROVIDERS.md, input_unavailable).
    if (!object) throw new GenerationError('input_unavailable', `upload ${own.id} is no longer stored`);
    const bytes = await readAll(object.body, MAX_UPLOAD_BYTES);
    return { bytes, format: own.format, contentType: own.content_type, filename: own.filename };
  }
  const dir = await makeTempFolder('input');
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
