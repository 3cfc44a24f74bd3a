import type { Readable } from 'node:stream';

/** A byte range of an object, both ends inclusive (HTTP Range semantics). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface BlobInfo {
  sizeBytes: number;
}

/**
 * Where result files and uploads live. Keys are service-made paths such as `results/<task>/<index>`;
 * callers never pass user text as a key.
 */
export interface BlobStore {
  /** Stores a stream under `key`, replacing any object there; resolves to its size. */
  put(
    key: string,
    body: Readable,
    options?: { contentType?: string; signal?: AbortSignal },
  ): Promise<BlobInfo>;
  /** Streams an object (or a range of it); null when it does not exist. */
  get(key: string, range?: ByteRange): Promise<{ body: Readable; sizeBytes: number } | null>;
  stat(key: string): Promise<BlobInfo | null>;
  /** Removes an object; removing a missing object is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Removes every object whose key starts with `folder/` (all the runs' files of a task, those of a run
   * killed between storing them and recording them included); an empty folder is not an error.
   */
  deleteFolder(folder: string): Promise<void>;
  /**
   * Removes what writes of killed processes left behind (a local store's `.part` files); resolves with
   * how many. Absent where the store cleans up itself (S3: a lifecycle rule aborts multipart uploads).
   */
  removeAbandonedWrites?(): Promise<number>;
  /** Throws when the store cannot be reached (readiness). */
  ping(): Promise<void>;
}
