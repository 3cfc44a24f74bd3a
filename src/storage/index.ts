import { fileURLToPath } from 'node:url';
import type { BlobStore } from './blob-store.ts';
import { FileStore } from './file-store.ts';
import { parseS3Url } from './s3-url.ts';

export type { BlobInfo, BlobStore, ByteRange } from './blob-store.ts';
export { FileStore } from './file-store.ts';
export type { S3Store } from './s3-store.ts';
export { StorageError } from './storage-error.ts';

/**
 * Picks the storage backend from STORAGE_URL (CONTRACT §1). The S3 client is loaded only for `s3://`: the
 * AWS SDK alone takes about 40 MB of a process's memory, which a service on local files never needs.
 */
export async function createBlobStore(storageUrl: string): Promise<BlobStore> {
  if (storageUrl.startsWith('file://')) return new FileStore(fileURLToPath(new URL(storageUrl)));
  if (storageUrl.startsWith('s3://')) {
    const { S3Store } = await import('./s3-store.ts');
    return new S3Store(parseS3Url(storageUrl));
  }
  throw new Error(`STORAGE_URL scheme not supported yet: ${storageUrl.split(':')[0]}`);
}
