import type { Readable } from 'node:stream';
import { type KeyPrincipal, mayUseModel } from '../accounts/index.ts';
import type { Db } from '../db/index.ts';
import { ApiError, errors } from '../errors.ts';
import type { Clock } from '../lib/index.ts';
import type { BlobStore, ByteRange } from '../storage/index.ts';
import { artifactRowOf, taskRowOf } from './task-rows.ts';

export interface ArtifactDownload {
  body: Readable;
  filename: string;
  contentType: string;
  sizeBytes: number;
  /** The satisfied range, when one was asked for. */
  range: ByteRange | null;
  /** When the run made the file: the task's end (`Last-Modified`). */
  modifiedAt: string;
  /** The task's `files_expire_at`: no cache may keep the file past it. */
  expiresAt: string;
}

/**
 * Parses a single `bytes=` range against the object size (RFC 9110 §14.1.2). Null when absent or
 * not a single byte range (the whole file is then sent); throws 416 when nothing of it is inside.
 * Not range-parser 1.3.0: it refuses a suffix longer than the file (`bytes=-1000` of 100 bytes, which
 * is the whole file), answers an invalid `9-3` like an unsatisfiable range and drops the unsatisfiable
 * parts of a multi-range request, so wrapping it would take this same parsing (docs/decisions.md).
 */
export function parseRange(header: string | undefined, size: number): ByteRange | null {
  if (!header) return null;
  // The unit is case-insensitive (§14.1): `Bytes=0-9` is a range like `bytes=0-9`.
  const match = /^bytes=(\d*)-(\d*)$/i.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return null;
  let start: number;
  let end: number;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) throw rangeNotSatisfiable(size);
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    if (start >= size) throw rangeNotSatisfiable(size);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
    if (end < start) return null;
  }
  return { start, end };
}

function rangeNotSatisfiable(size: number): ApiError {
  return new ApiError('range_not_satisfiable', { headers: { 'Content-Range': `bytes */${size}` } });
}

/** Opens a result file for its owner: 404 task_not_found, artifact_expired or artifact_not_found. */
export async function openArtifact(
  deps: { db: Db; storage: BlobStore; clock: Clock },
  input: {
    principal: KeyPrincipal;
    taskId: string;
    index: string;
    /** The part to read of a file of `size` bytes made at `modifiedAt` (its validators decide); all without. */
    range?: (size: number, modifiedAt: string) => ByteRange | null;
  },
): Promise<ArtifactDownload> {
  // Both reads are compiled once (task-rows.ts): a download's fixed cost matters for small Range reads.
  const task = await taskRowOf(deps.db, input.principal.accountId, input.taskId);
  // Another account's task, or one of a model the key is not allowed, reads as missing (issue 10.19).
  if (!task || !mayUseModel(input.principal, task.model)) throw errors.taskNotFound(input.taskId);
  // Written as the list numbers it (0, 1, … without leading zeros); `01` or `1e0` name no artifact.
  const index = /^(0|[1-9]\d{0,3})$/.test(input.index) ? Number(input.index) : -1;
  const artifact =
    task.status === 'succeeded' && index >= 0 ? await artifactRowOf(deps.db, input.taskId, index) : undefined;
  if (!artifact) throw errors.artifactNotFound(input.taskId, input.index);
  const expired = task.files_expired === 1 || (task.files_expire_at ?? '') <= deps.clock.now().toISOString();
  if (expired) throw errors.artifactExpired(input.taskId);
  const size = Number(artifact.size_bytes);
  // Its bytes were made by the run: they date from its end.
  const modifiedAt = task.finished_at ?? task.created_at;
  const range = input.range?.(size, modifiedAt) ?? null;
  const object = await deps.storage.get(artifact.storage_key, range ?? undefined);
  if (!object) throw errors.artifactExpired(input.taskId);
  return {
    body: object.body,
    filename: artifact.filename,
    contentType: artifact.content_type,
    sizeBytes: size,
    range,
    modifiedAt,
    expiresAt: task.files_expire_at ?? '',
  };
}
