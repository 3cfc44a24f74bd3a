/** Media inputs: content sniffing, probing (length, size) and guarded downloads of caller URLs. */
export {
  checkPublicUrl,
  FetchError,
  type FetchedFile,
  type FetchFailure,
  type FetchOptions,
  fetchToFile,
  type LookupFn,
} from './fetch.ts';
export type { PictureSize } from './image-size.ts';
export { type PostOptions, type PostResult, postGuarded } from './post.ts';
export { inspectFile, type ProbeResult, probeFile } from './probe.ts';
export { kindOf, MEDIA_FORMATS, type MediaKind, type SniffResult, sniffFormat } from './sniff.ts';
