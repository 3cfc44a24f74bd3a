/** Personal libraries and free helpers (reference "Library records" … "Free helpers", CONTRACT §7). */
export { HELPER_CALLS_PER_HOUR, HelperService, type HelperServiceDeps } from './helpers.ts';
export { resolveReferences } from './references.ts';
export { findLibrary, LIBRARIES, libraryPath } from './registry.ts';
export { LibraryService, type LibraryServiceDeps, type RecordView } from './service.ts';
export { singingVoices, verifyBody } from './singing-voices.ts';
export type { InputResolver, LibraryDecl, ResolvedInput } from './types.ts';
export { retryVoice, verifyVoice } from './voice-steps.ts';
