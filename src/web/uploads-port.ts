/**
 * The part of the uploads service the uploads page uses: the account's live files and the bytes they
 * hold against the quota. Uploading and deleting go through `/v1/files` from the page's island. The
 * files module's `UploadService` fits it.
 */
import type { KeyPrincipal } from '../accounts/index.ts';
import type { HeldUploadView } from '../files/index.ts';

/** One uploaded file as `POST /v1/files` answers it, and whether a library record holds it. */
export type WebUpload = HeldUploadView;

export interface UploadsPort {
  list(principal: KeyPrincipal): Promise<{ files: WebUpload[]; usedBytes: number; quotaBytes: number }>;
}
