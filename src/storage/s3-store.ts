import { pipeline, Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  S3Client,
  type S3ClientConfig,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { ByteCounter } from '../lib/index.ts';
import type { BlobInfo, BlobStore, ByteRange } from './blob-store.ts';
import type { S3Location } from './s3-url.ts';
import { StorageError } from './storage-error.ts';

/** Tuning of an S3Store; the defaults suit production. */
export interface S3StoreOptions {
  /** Multipart part size in bytes (S3's minimum is 5 MiB). Default 8 MiB. */
  partSizeBytes?: number;
  /** Parts uploaded at once; memory use is about (queueSize + 1) × partSize per put. Default 2. */
  queueSize?: number;
  /** Milliseconds before ping() gives up. Default 5000. */
  pingTimeoutMs?: number;
  /** Milliseconds to wait for a TCP connection. Default 5000. */
  connectTimeoutMs?: number;
  /**
   * Milliseconds from sending a request (its body included) to the first byte of the answer; past it the
   * attempt fails and the SDK retries it. Default 60,000: an 8 MiB part then needs only ~140 KB/s.
   */
  requestTimeoutMs?: number;
  /**
   * Milliseconds a connection may carry no bytes in either direction while a call or a streamed download
   * is under way. Default 60,000, long enough for a slow reader of a download to pause.
   */
  idleTimeoutMs?: number;
}

const MIB = 1024 * 1024;

/** The HTTP status of an SDK error, when the server answered. */
function httpStatusOf(error: unknown): number | undefined {
  return error instanceof S3ServiceException ? error.$metadata.httpStatusCode : undefined;
}

/** A short, stable description of an error: the S3 error code or the network error code. */
function codeOf(error: unknown): string {
  if (error instanceof S3ServiceException) {
    return `${error.name} (HTTP ${error.$metadata.httpStatusCode ?? '?'})`;
  }
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return typeof code === 'string' ? code : error.name;
  }
  return 'unknown error';
}

function translate(operation: string, target: string, error: unknown): StorageError {
  return new StorageError(`S3 ${operation} of ${target} failed: ${codeOf(error)}`, { cause: error });
}

/** `Content-Range: bytes a-b/total` as numbers; undefined when absent, malformed or of unknown total. */
function parseContentRange(
  header: string | undefined,
): { start: number; end: number; total: number } | undefined {
  const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header ?? '');
  if (!match) return undefined;
  return { start: Number(match[1]), end: Number(match[2]), total: Number(match[3]) };
}

/** The first `limit` bytes of `body`; the rest is not read (the source is destroyed). */
function firstBytes(body: Readable, limit: number): Readable {
  async function* take(): AsyncGenerator<Buffer> {
    let left = limit;
    for await (const chunk of body) {
      const buffer = chunk as Buffer;
      yield buffer.length > left ? buffer.subarray(0, left) : buffer;
      left -= Math.min(buffer.length, left);
      if (left === 0) return;
    }
  }
  return Readable.from(take());
}

/**
 * Objects in one bucket of S3 or an S3-compatible server, under an optional key prefix.
 * Uploads stream through `@aws-sdk/lib-storage` (multipart above one part), never buffering a whole body.
 */
export class S3Store implements BlobStore {
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;
  readonly #partSize: number;
  readonly #queueSize: number;
  readonly #pingTimeoutMs: number;

  constructor(location: S3Location, options: S3StoreOptions = {}) {
    const config: S3ClientConfig = {
      forcePathStyle: location.forcePathStyle,
      // With the SDK defaults streamed bodies go aws-chunked with a trailing checksum, which S3-compatible
      // servers such as s3rver store verbatim (200,000 bytes became 200,045); checksums only where required.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // Every call is bounded (issue 10, fault injection): a server that accepts and never answers, or
      // stops mid-body, ends the attempt with a TimeoutError instead of stalling the worker forever.
      requestHandler: {
        connectionTimeout: options.connectTimeoutMs ?? location.connectTimeoutMs ?? 5_000,
        requestTimeout: options.requestTimeoutMs ?? location.requestTimeoutMs ?? 60_000,
        throwOnRequestTimeout: true,
        socketTimeout: options.idleTimeoutMs ?? location.idleTimeoutMs ?? 60_000,
        // A streamed download keeps its connection until its reader has taken every byte; with the SDK's
        // 50 connections, 50 slow readers made every other call (downloads, uploads, the readiness ping)
        // wait for a free one until connectTimeout, then fail. One connection per call, as Node's default.
        httpAgent: { maxSockets: Number.POSITIVE_INFINITY },
        httpsAgent: { maxSockets: Number.POSITIVE_INFINITY },
      },
    };
    if (location.endpoint !== undefined) config.endpoint = location.endpoint;
    if (location.region !== undefined) config.region = location.region;
    if (location.credentials !== undefined) config.credentials = location.credentials;
    this.#client = new S3Client(config);
    this.#bucket = location.bucket;
    this.#prefix = location.prefix === '' ? '' : `${location.prefix}/`;
    this.#partSize = Math.max(options.partSizeBytes ?? 8 * MIB, 5 * MIB);
    this.#queueSize = Math.max(1, options.queueSize ?? 2);
    this.#pingTimeoutMs = options.pingTimeoutMs ?? 5000;
  }

  #key(key: string): string {
    return this.#prefix + key;
  }

  async put(
    key: string,
    body: Readable,
    options: { contentType?: string; signal?: AbortSignal } = {},
  ): Promise<BlobInfo> {
    const { signal } = options;
    if (signal?.aborted) {
      body.destroy();
      throw signal.reason;
    }
    const counter = new ByteCounter();
    // Errors reach the uploader through `counter`; the callback only keeps them from being unhandled.
    pipeline(body, counter, () => {});
    const upload = new Upload({
      client: this.#client,
      params: {
        Bucket: this.#bucket,
        Key: this.#key(key),
        Body: counter,
        ContentType: options.contentType,
      },
      partSize: this.#partSize,
      queueSize: this.#queueSize,
      leavePartsOnError: false,
    });
    const onAbort = (): void => {
      void upload.abort();
      counter.destroy(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await upload.done();
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      // The caller's own stream failed: hand back its error untouched.
      if (body.errored) throw body.errored;
      throw translate('put', key, error);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (!counter.destroyed) counter.destroy();
    }
    return { sizeBytes: counter.bytes };
  }

  async get(key: string, range?: ByteRange): Promise<{ body: Readable; sizeBytes: number } | null> {
    let response: GetObjectCommandOutput;
    try {
      response = await this.#client.send(
        new GetObjectCommand({
          Bucket: this.#bucket,
          Key: this.#key(key),
          Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }),
      );
    } catch (error) {
      if (error instanceof S3ServiceException && error.name === 'NoSuchKey') return null;
      if (range && httpStatusOf(error) === 416) {
        // Like a file read past its end: nothing to stream, but the object exists.
        const info = await this.stat(key);
        return info ? { body: Readable.from([]), sizeBytes: info.sizeBytes } : null;
      }
      throw translate('get', key, error);
    }
    const body = response.Body;
    if (!(body instanceof Readable)) {
      throw new StorageError(`S3 get of ${key} failed: the response has no readable body`);
    }
    if (!range) {
      if (response.ContentLength !== undefined) return { body, sizeBytes: response.ContentLength };
      body.destroy();
      throw new StorageError(`S3 get of ${key} failed: the response has no Content-Length`);
    }
    const served = parseContentRange(response.ContentRange);
    if (!served || served.start !== range.start) {
      body.destroy();
      throw new StorageError(`S3 get of ${key} failed: the server did not honour the byte range`);
    }
    // Some servers (s3rver for `bytes=0-0`) send more than asked: cut the surplus off.
    const wanted = range.end - range.start + 1;
    const limited = served.end > range.end ? firstBytes(body, wanted) : body;
    return { body: limited, sizeBytes: served.total };
  }

  async stat(key: string): Promise<BlobInfo | null> {
    try {
      const head = await this.#client.send(
        new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }),
      );
      return { sizeBytes: head.ContentLength ?? 0 };
    } catch (error) {
      if (httpStatusOf(error) === 404) return null;
      throw translate('stat', key, error);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }));
    } catch (error) {
      if (error instanceof S3ServiceException && error.name === 'NoSuchKey') return;
      throw translate('delete', key, error);
    }
  }

  async deleteFolder(folder: string): Promise<void> {
    const prefix = `${this.#key(folder)}/`;
    let token: string | undefined;
    do {
      let page: ListObjectsV2CommandOutput;
      try {
        page = await this.#client.send(
          new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: prefix, ContinuationToken: token }),
        );
      } catch (error) {
        throw translate('list', `${folder}/`, error);
      }
      // Keys as listed, the store's prefix included: removed as they are, one call each (the few files
      // of a task; DeleteObjects would need a Content-MD5 some S3-compatible servers do not take).
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined) continue;
        try {
          await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: object.Key }));
        } catch (error) {
          if (error instanceof S3ServiceException && error.name === 'NoSuchKey') continue;
          throw translate('delete', object.Key, error);
        }
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  async ping(): Promise<void> {
    try {
      await this.#client.send(new HeadBucketCommand({ Bucket: this.#bucket }), {
        abortSignal: AbortSignal.timeout(this.#pingTimeoutMs),
      });
    } catch (error) {
      throw translate('ping', `bucket ${this.#bucket}`, error);
    }
  }

  /** Creates the bucket unless it exists (tests and the dev script; production buckets are provisioned). */
  async createBucketIfMissing(): Promise<void> {
    try {
      await this.#client.send(new HeadBucketCommand({ Bucket: this.#bucket }));
      return;
    } catch (error) {
      if (httpStatusOf(error) !== 404) throw translate('head', `bucket ${this.#bucket}`, error);
    }
    try {
      await this.#client.send(new CreateBucketCommand({ Bucket: this.#bucket }));
    } catch (error) {
      const name = error instanceof S3ServiceException ? error.name : '';
      if (name === 'BucketAlreadyOwnedByYou' || name === 'BucketAlreadyExists') return;
      throw translate('create', `bucket ${this.#bucket}`, error);
    }
  }

  /** Closes the client's idle connections; the store is unusable afterwards. */
  close(): void {
    this.#client.destroy();
  }
}
