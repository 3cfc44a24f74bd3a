/**
 * A file behind a link or a data URL fetched into a folder under the address rules of CONTRACT §6 (also
 * after redirects), a size cap and a time limit, its type sniffed from its bytes. A provider's outputs
 * (deps.ts) and the inputs adapters read (input-files.ts) each classify its failures their own way.
 */
import { randomUUID } from 'node:crypto';
import { open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FetchError, fetchToFile, type LookupFn } from '../../media/index.ts';
import { decodeDataUrl } from './data-url.ts';
import { OUTPUT_SNIFF_BYTES, sniffOutput } from './output-type.ts';
import type { DownloadedOutput } from './types.ts';

/** Largest output file taken from a provider (bytes); also the largest result file read as an input. */
export const MAX_OUTPUT_BYTES = 200 * 1024 * 1024;

/** The limits and address rules of one fetch. */
export interface FetchFileOptions {
  /** Test-only exceptions to the address rules (`FETCH_ALLOW_ADDRESSES`); empty in production. */
  fetchAllowAddresses: readonly string[];
  /** Largest file (bytes). */
  maxOutputBytes: number;
  /** Limit of the download, redirects included (milliseconds). (Default: 5 minutes) */
  downloadTimeoutMs?: number;
  /** DNS lookup override (tests). */
  lookup?: LookupFn;
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

/** A link or data URL fetched into `dir` under the address rules and caps, its type sniffed; throws FetchError. */
export async function fetchFile(
  url: string,
  dir: string,
  signal: AbortSignal,
  runtime: FetchFileOptions,
): Promise<DownloadedOutput> {
  let path: string;
  let sizeBytes: number;
  if (url.startsWith('data:')) {
    const decoded = decodeDataUrl(url, runtime.maxOutputBytes);
    if (!decoded.ok)
      throw new FetchError(decoded.tooLarge ? 'too_large' : 'bad_url', `data URL: ${decoded.reason}`);
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
