/** Media inputs: content sniffing, probing (length, size) and guarded downloads of caller URLs. */
export { isBlockedAddress } from './address.ts';
export {
  type FetchedFile,
  FetchError,
  type FetchFailure,
  type FetchOptions,
  fetchToFile,
  type LookupFn,
} from './fetch.ts';
export type { PictureSize } from './image-size.ts';
export { type ProbeResult, probeFile } from './probe.ts';
export {
  contentTypeOf,
  kindOf,
  MEDIA_FORMATS,
  type MediaKind,
  SNIFF_BYTES,
  type SniffResult,
  sniffFormat,
} from './sniff.ts';
