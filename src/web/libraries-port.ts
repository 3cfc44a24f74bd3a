/**
 * The part of the library service the libraries pages use (STYLE: declare only the part you use): lists
 * and single records of a declared library, read on the server for the signed-in person's account.
 * Creating, the singing voice's steps and deleting go through `/v1` from the pages' islands, so they get
 * the API's rules, limits and errors. The libraries module's `LibraryService` fits it.
 */
import type { KeyPrincipal } from '../accounts/index.ts';
import type { LibraryDecl } from '../libraries/index.ts';

export { findLibrary, LIBRARIES, type LibraryDecl, libraryPath, verifyBody } from '../libraries/index.ts';

/** A library's records as the pages read them (the list response of `GET /v1/models/{key}/{library}`). */
export interface LibrariesPort {
  list(principal: KeyPrincipal, decl: LibraryDecl): Promise<Record<string, unknown>>;
  get(principal: KeyPrincipal, decl: LibraryDecl, id: string): Promise<Record<string, unknown>>;
}
