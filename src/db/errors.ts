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
