import { fileURLToPath } from 'node:url';
import type { BlobStore } from './blob-store.ts';
import { FileStore } from './file-store.ts';

export type { BlobInfo, BlobStore, ByteRange } from './blob-store.ts';
export { FileStore } from './file-store.ts';

/** Picks the storage backend from STORAGE_URL (CONTRACT §1). */
export function createBlobStore(storageUrl: string): BlobStore {
  if (storageUrl.startsWith('file://')) return new FileStore(fileURLToPath(new URL(storageUrl)));
  throw new Error(`STORAGE_URL scheme not supported yet: ${storageUrl.split(':')[0]}`);
}
