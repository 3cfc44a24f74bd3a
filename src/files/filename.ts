import type { MediaFormat } from '../catalog/index.ts';

/** Longest stored name (characters, not UTF-16 units). */
const MAX_NAME_CHARS = 200;
// Invisible format characters: bidi overrides and isolates (U+202A–202E, U+2066–2069, which make
// "invoice‮gnp.exe" read as "invoiceexe.png"), marks, zero-width spaces and joiners, BOM. Dropped.
const INVISIBLE = /\p{Cf}/gu;
// Controls, line and paragraph separators and path separators never reach a header or a link.
const UNSAFE = /[\p{Cc}\p{Zl}\p{Zp}/\\]/gu;
// Leading and trailing dots and spaces: "." and ".." are path segments a client rewrites
// (`/files/<token>/..` becomes `/files/`), a leading dot hides a file, a trailing one Windows drops.
const EDGES = /^[\s.]+|[\s.]+$/gu;

/**
 * The name an upload is stored and linked under: the caller's name made safe for links, headers and
 * file systems, or `upload.<ext>` when nothing usable is left.
 */
export function safeFilename(name: string | undefined, format: MediaFormat): string {
  const cleaned = (name ?? '')
    .normalize('NFC')
    .replace(INVISIBLE, '')
    .replace(UNSAFE, '_')
    .replace(EDGES, '');
  // Cut by whole characters: half of a surrogate pair would break the link's percent-encoding.
  const base = [...cleaned].slice(0, MAX_NAME_CHARS).join('').replace(EDGES, '');
  return base || `upload.${format === 'jpeg' ? 'jpg' : format}`;
}
