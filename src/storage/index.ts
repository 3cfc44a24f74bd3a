import { fileURLToPath } from 'node:url';
import type { BlobStore } from './blob-store.ts';
import { FileStore } from './file-store.ts';
import { S3Store } from './s3-store.ts';
import { parseS3Url } from './s3-url.ts';

export type { BlobInfo, BlobStore, ByteRange } from './blob-store.ts';
export { FileStore } from './file-store.ts';
export { S3Store, StorageError } from './s3-store.ts';

/** Picks the storage backend from STORAGE_URL (CONTRACT §1). */
export function createBlobStore(storageUrl: string): BlobStore {
  if (storageUrl.startsWith('file://')) return new FileStore(fileURLToPath(new URL(storageUrl)));
  if (storageUrl.startsWith('s3://')) return new S3Store(parseS3Url(storageUrl));
  throw new Error(`STORAGE_URL scheme not supported yet: ${storageUrl.split(':')[0]}`);
}
