/** A unique constraint refused a write; the one shape both engines' errors are translated to. */
export class UniqueViolation extends Error {
  override name = 'UniqueViolation';
}

/** True for SQLite `SQLITE_CONSTRAINT_UNIQUE`/`_PRIMARYKEY` and PostgreSQL `23505`. */
export function isUniqueViolation(error: unknown): boolean {
  if (error instanceof UniqueViolation) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

/**
 * True for PostgreSQL `22021`: text with a NUL character (U+0000), which PostgreSQL cannot store and
 * SQLite can. Only a caller's input (an id in the path, a name) carries one, so it is the caller's error.
 */
export function isNulInText(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '22021';
}

/**
 * True for PostgreSQL `55P03` (a request's transaction gave up waiting for a row lock, `lock_timeout`) and
 * SQLite's `SQLITE_BUSY` (another writer held the database past `busy_timeout`): the transaction rolled back
 * whole, and the same request succeeds once the other transaction ends.
 */
export function isLockTimeout(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '55P03' || (typeof code === 'string' && code.startsWith('SQLITE_BUSY'));
}
