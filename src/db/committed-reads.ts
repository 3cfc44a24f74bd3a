import type SqliteDatabase from 'better-sqlite3';
import type { CompiledQuery } from 'kysely';
import { BoundedMap, oncePerTurn } from '../lib/index.ts';

/** Read results kept at most. (A task row is about a kilobyte.) */
const DEFAULT_CAPACITY = 5_000;

/**
 * The statements of one SQLite handle, prepared once by SQL text, counting every statement that may
 * change the database (`readonly` false: INSERT, UPDATE, DELETE, with or without RETURNING) as it is
 * handed out, which is just before it runs: Kysely prepares and runs a query in one synchronous step.
 */
export interface CountedStatements {
  prepare(sql: string): SqliteDatabase.Statement;
  /** How many statements that may write were handed out so far. */
  readonly writes: number;
}

/** Prepared statements kept per handle; the service issues a few dozen distinct SQL texts. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * better-sqlite3 compiles a statement on every `prepare`, which Kysely calls for every query: measured at
 * about 40 µs of a 3 µs lookup (bench/, docs/performance.md). Reusing statements by SQL text is safe
 * because Kysely runs one query at a time on the single connection, and committed reads run theirs to the
 * end synchronously.
 */
export function countedStatements(sqlite: SqliteDatabase.Database): CountedStatements {
  const cache = new BoundedMap<string, SqliteDatabase.Statement>(STATEMENT_CACHE_SIZE);
  let writes = 0;
  return {
    prepare(sql) {
      let statement = cache.get(sql);
      if (statement === undefined) {
        statement = sqlite.prepare(sql);
        cache.set(sql, statement);
      }
      if (!statement.readonly) writes += 1;
      return statement;
    },
    get writes() {
      return writes;
    },
  };
}

/**
 * Reads of committed data on a SQLite handle, at once (no wait for Kysely's connection queue) and kept
 * until the database changes (`Db.readNow`):
 * - in a transaction nothing is read here (the handle would show the transaction's own uncommitted
 *   writes, say a group commit's creation that may yet roll back): null, and the caller goes through
 *   Kysely, which waits for the commit;
 * - a kept result is dropped with all the others as soon as this handle hands out a statement that may
 *   write (`CountedStatements.writes`): this process's own changes are seen by its very next read;
 * - other processes' commits move SQLite's `data_version`, read once per turn of the event loop
 *   (`oncePerTurn`, as the key cache reads its epoch), so a change committed before a request arrived is
 *   seen.
 * The rows given out are frozen: they are shared by every later read until a change.
 */
export function committedReads(
  sqlite: SqliteDatabase.Database,
  statements: CountedStatements,
  capacity: number = DEFAULT_CAPACITY,
): <R>(query: CompiledQuery<R>) => R[] | null {
  const statement = sqlite.prepare<[], number>('pragma data_version').pluck();
  const dataVersion = oncePerTurn(() => statement.get() ?? 0);
  const kept = new BoundedMap<string, unknown[]>(capacity);
  let keptVersion = -1;
  let keptWrites = -1;

  const stillValid = (): void => {
    const version = dataVersion();
    if (version !== keptVersion) {
      kept.clear();
      keptVersion = version;
    }
    if (statements.writes !== keptWrites) {
      kept.clear();
      keptWrites = statements.writes;
    }
  };

  return <R>(query: CompiledQuery<R>): R[] | null => {
    if (sqlite.inTransaction) return null;
    stillValid();
    const key = keyOf(query);
    const rows = key === null ? undefined : kept.get(key);
    if (rows !== undefined) return rows as R[];
    const read = statements.prepare(query.sql).all(query.parameters as unknown[]) as R[];
    if (key === null) return read;
    for (const row of read) Object.freeze(row);
    kept.set(key, Object.freeze(read) as R[]);
    return read;
  };
}

/**
 * The key of a read: its SQL and parameters, NUL-separated. Only strings without NUL and numbers make a
 * key (anything else could make two reads' keys equal); other reads are not kept.
 */
function keyOf(query: CompiledQuery<unknown>): string | null {
  let key = query.sql;
  for (const parameter of query.parameters) {
    if (typeof parameter === 'string' ? parameter.includes('\u0000') : typeof parameter !== 'number')
      return null;
    key += `\u0000${parameter}`;
  }
  return key;
}
