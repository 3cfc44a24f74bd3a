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
/** A name's extension: a dot and up to 10 letters or digits at its end (`.png`, `.tar`, `.mp3`). */
const EXTENSION = /\.[\p{L}\p{N}]{1,10}$/u;

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
  // Cut by whole characters: half of a surrogate pair would break the link's percent-encoding. A long
  // name loses the end of its stem, not its extension, so the link still says what the file is.
  const chars = [...cleaned];
  const ext = chars.length > MAX_NAME_CHARS ? [...(EXTENSION.exec(cleaned)?.[0] ?? '')] : [];
  const stem = chars.slice(0, Math.min(chars.length - ext.length, MAX_NAME_CHARS - ext.length));
  const base = `${stem.join('').replace(EDGES, '')}${ext.join('')}`.replace(EDGES, '');
  return base || `upload.${format === 'jpeg' ? 'jpg' : format}`;
}

/**
 * A multipart part's filename as the person named the file: browsers write `"`, CR and LF in it as `%22`,
 * `%0D` and `%0A` (the HTML standard's multipart/form-data encoding), so those three are read back. Any
 * other `%` stays as it is, since a name may hold `%41` literally.
 */
export function multipartFilename(name: string | undefined): string | undefined {
  return name?.replace(/%(22|0D|0A)/gi, (_, code: string) => String.fromCharCode(Number.parseInt(code, 16)));
}
