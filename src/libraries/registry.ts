/**
 * Every library, declared once (CONTRACT §7). Routes, list responses, creation and task lookups are
 * driven by this list: a library path on a model that has none is simply not registered (404 not_found).
 */
import type { LibrarySegment } from '../db/index.ts';
import { elements } from './elements.ts';
import { clonedVoices, imageStyles, musicStyles, omniCharacters, omniVoices } from './others.ts';
import { personas } from './personas.ts';
import { singingVoices } from './singing-voices.ts';
import type { LibraryDecl } from './types.ts';

export const LIBRARIES: readonly LibraryDecl[] = [
  elements,
  personas,
  singingVoices,
  clonedVoices,
  imageStyles,
  musicStyles,
  omniCharacters,
  omniVoices,
] as readonly LibraryDecl[];

export function findLibrary(model: string, segment: LibrarySegment | string): LibraryDecl | undefined {
  return LIBRARIES.find((l) => l.model === model && l.segment === segment);
}

/** The address of a library: `/v1/models/{key}/{segment}`. */
export function libraryPath(decl: Pick<LibraryDecl, 'model' | 'segment'>): string {
  return `/v1/models/${decl.model}/${decl.segment}`;
}
