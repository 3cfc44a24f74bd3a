import fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** The part of s3rver's API (it ships no types) that this helper uses. */
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: { closeAllConnections(): void };
}

type S3rverConstructor = new (options: {
  address: string;
  port: number;
  directory: string;
  silent: boolean;
  configureBuckets: { name: string }[];
}) => S3rverInstance;

/** A running s3rver for tests. */
export interface TestS3rver {
  /** A STORAGE_URL (CONTRACT §1) for the server's one bucket, with its static test credentials. */
  url: string;
  /** The server's base URL (`http://127.0.0.1:<port>`). */
  endpoint: string;
  bucket: string;
  /** Stops the server and removes its directory; safe to call twice. */
  stop(): Promise<void>;
}

/** s3rver's fixed credentials (it checks signatures against these); a fresh object each call (the SDK annotates it). */
export function s3rverCredentials(): { accessKeyId: string; secretAccessKey: string } {
  return { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
}

/**
 * Starts an s3rver on loopback with one bucket: by default on a free port in a fresh temporary
 * directory (removed on stop); `port` and `directory` fix them (the directory is then kept).
 * Pass `prefix` to get a STORAGE_URL whose keys live under that prefix.
 */
export async function startS3rver(
  options: { bucket?: string; prefix?: string; port?: number; directory?: string } = {},
): Promise<TestS3rver> {
  const bucket = options.bucket ?? 'test-bucket';
  const temporary = options.directory === undefined;
  const directory = options.directory ?? (await fsp.mkdtemp(path.join(os.tmpdir(), 's3rver-')));
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor;
  const server = new S3rver({
    address: '127.0.0.1',
    port: options.port ?? 0,
    directory,
    silent: true,
    configureBuckets: [{ name: bucket }],
  });
  let address: AddressInfo;
  try {
    address = await server.run();
  } catch (error) {
    if (temporary) await fsp.rm(directory, { recursive: true, force: true });
    throw error;
  }
  const endpoint = `http://127.0.0.1:${address.port}`;
  const query = new URLSearchParams({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: 'true',
    ...s3rverCredentials(),
  });
  const prefix = options.prefix ? `/${options.prefix}` : '';
  let stopped: Promise<void> | undefined;
  return {
    url: `s3://${bucket}${prefix}?${query}`,
    endpoint,
    bucket,
    stop(): Promise<void> {
      stopped ??= (async (): Promise<void> => {
        const closing = server.close();
        server.httpServer?.closeAllConnections();
        await closing;
        if (temporary) await fsp.rm(directory, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}
