/**
 * Every library, declared once (CONTRACT §7). Routes, list responses, creation, task lookups, the
 * simulator's learning times and docs/libraries.md are driven by this list: a library path on a model
 * that has none is simply not registered (404 not_found). A new kind is one declaration and one line here.
 */
import { elements } from './elements.ts';
import { clonedVoices, imageStyles, musicStyles, omniCharacters, omniVoices } from './others.ts';
import { personas } from './personas.ts';
import { singingVoices } from './singing-voices.ts';
import type { LibraryDecl } from './types.ts';

const KINDS = [
  elements,
  personas,
  singingVoices,
  clonedVoices,
  imageStyles,
  musicStyles,
  omniCharacters,
  omniVoices,
] as const;

/** The last path segment of a library (`elements`, `voices`, …): the segments of the registered kinds. */
export type LibrarySegment = (typeof KINDS)[number]['segment'];

export const LIBRARIES: readonly LibraryDecl[] = KINDS;

export function findLibrary(model: string, segment: string): LibraryDecl | undefined {
  return LIBRARIES.find((l) => l.model === model && l.segment === segment);
}

/** The address of a library: `/v1/models/{key}/{segment}`. */
export function libraryPath(decl: Pick<LibraryDecl, 'model' | 'segment'>): string {
  return `/v1/models/${decl.model}/${decl.segment}`;
}
