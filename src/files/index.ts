export { multipartFilename } from './filename.ts';
export { holdUploads, isLiveAt, releaseUploads } from './upload-holds.ts';
export {
  type HeldUploadView,
  type LentFile,
  MAX_UPLOAD_BYTES,
  UploadService,
  type UploadServiceDeps,
  type UploadView,
} from './upload-service.ts';
