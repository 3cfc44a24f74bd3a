/** `defineLibrary`: checks a declaration and keeps its literal segment and states for the registry. */
import type { LibraryDecl } from './types.ts';

/**
 * A library kind, declared once (CONTRACT §7). The segment and states keep their literal types, so
 * `LibrarySegment` (registry.ts) is the union of the registered kinds' segments. Presets are listed in
 * the list response too (`presets`).
 */
export function defineLibrary<B, const Seg extends string, const S extends string = never>(
  decl: LibraryDecl<B, Seg, S>,
): LibraryDecl<B, Seg, S> {
  if (!decl.presets) return decl;
  return { ...decl, listExtras: { ...decl.listExtras, presets: decl.presets } };
}
