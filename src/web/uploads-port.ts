/**
 * The part of the uploads service the uploads page uses: the account's live files and the bytes they
 * hold against the quota. Uploading and deleting go through `/v1/files` from the page's island. The
 * files module's `UploadService` fits it.
 */
import type { KeyPrincipal } from '../accounts/index.ts';
import type { UploadView } from '../files/index.ts';

/** One uploaded file as `POST /v1/files` answers it. */
export type WebUpload = UploadView;

export interface UploadsPort {
  list(principal: KeyPrincipal): Promise<{ files: WebUpload[]; usedBytes: number; quotaBytes: number }>;
}
