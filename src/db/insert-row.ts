import { CompiledQuery, type Insertable, type Kysely } from 'kysely';
import { execute } from './dialect.ts';
import type { Database } from './schema.ts';

/** A value Kysely binds as it is (no expression, no `undefined`, which Kysely leaves out). */
type Plain = string | number | bigint | null;

/** The INSERT text per engine (its query compiler) and per table and column list. */
const insertTexts = new WeakMap<object, Map<string, string>>();

/**
 * `tx.insertInto(table).values(row).execute()` for a hot path: Kysely builds and compiles the same
 * statement on every call (a node per column, each frozen and visited: about 20 µs for a task's 28
 * columns), so the text compiled for a table and its column list is kept and only the values change. The
 * text is Kysely's own, so the statement run is the one the builder would run; columns whose value is
 * `undefined` are left out, as Kysely does.
 */
export async function insertRow<T extends keyof Database & string>(
  tx: Kysely<Database>,
  table: T,
  row: Insertable<Database[T]>,
): Promise<void> {
  const columns: string[] = [];
  const values: Plain[] = [];
  for (const [column, value] of Object.entries(row)) {
    if (value === undefined) continue;
    columns.push(column);
    values.push(value as Plain);
  }
  const compiler = tx.getExecutor().adapter;
  let texts = insertTexts.get(compiler);
  if (texts === undefined) {
    texts = new Map();
    insertTexts.set(compiler, texts);
  }
  const key = `${table}\u0000${columns.join(',')}`;
  let text = texts.get(key);
  if (text === undefined) {
    const compiled = tx.insertInto(table).values(row).compile();
    text = compiled.sql;
    texts.set(key, text);
  }
  await execute(tx, CompiledQuery.raw(text, values));
}
