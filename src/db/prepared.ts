import type { Compilable, CompiledQuery, Kysely, QueryResult } from 'kysely';
import { capabilitiesOf, type DialectCapabilities, execute } from './dialect.ts';
import type { Database } from './schema.ts';

/**
 * The values a prepared query takes, by name: scalars only (a list would change the SQL text; it goes as
 * one JSON text: `DialectCapabilities.jsonRows`, `jsonIn`).
 */
export type PreparedValues = Record<string, string | number | null>;

/** Stands for a named value while the query is built; no real value starts with a NUL character. */
const MARK = '\u0000gta-prepared:';

type Slot = { name: string } | { value: unknown };

interface Template<R> {
  query: CompiledQuery<R>;
  slots: Slot[];
}

/**
 * Runs a prepared query with its values; `compiled` gives the query it would run, SQL and values, for a
 * test of its plan.
 */
export type PreparedQuery<V extends PreparedValues, R> = ((
  db: Kysely<Database>,
  values: V,
) => Promise<QueryResult<R>>) & {
  compiled(db: Kysely<Database>, values: V): CompiledQuery<R>;
  /** Runs the query as a write whose result nobody reads (`DialectCapabilities.writeAtCommit`). */
  atCommit(db: Kysely<Database>, values: V): Promise<void>;
};

/**
 * A query of the hot paths (a task's transitions, its money, its creation) built and compiled once per
 * SQL dialect and afterwards only given its values: building a Kysely query (its immutable nodes, then
 * the compiler's walk) costs more CPU than SQLite's indexed write itself (bench:dispatch's profile).
 *
 * `build` receives `value(name)`, which stands for the value of that name in the built query, and the
 * engine's capabilities; every other value in it is kept as built. The SQL text is the same for every
 * call, so the statement caches (better-sqlite3's, PostgreSQL's) reuse it as well.
 */
export function prepared<V extends PreparedValues, R>(
  build: (
    db: Kysely<Database>,
    value: <K extends keyof V & string>(name: K) => V[K],
    dialect: DialectCapabilities,
  ) => Compilable<R>,
): PreparedQuery<V, R> {
  const templates = new WeakMap<object, Template<R>>();
  const templateFor = (db: Kysely<Database>): Template<R> => {
    const adapter = db.getExecutor().adapter;
    let template = templates.get(adapter);
    if (template === undefined) {
      const query = build(db, (name) => `${MARK}${name}` as never, capabilitiesOf(db)).compile();
      const slots = query.parameters.map((parameter): Slot => {
        if (typeof parameter === 'string' && parameter.startsWith(MARK))
          return { name: parameter.slice(MARK.length) };
        return { value: parameter };
      });
      template = { query, slots };
      templates.set(adapter, template);
    }
    return template;
  };
  const compiled = (db: Kysely<Database>, values: V): CompiledQuery<R> => {
    const { query, slots } = templateFor(db);
    const parameters = slots.map((slot) => {
      if (!('name' in slot)) return slot.value;
      const value = values[slot.name];
      if (value === undefined) throw new Error(`prepared query: no value for "${slot.name}"`);
      return value;
    });
    return { ...query, parameters };
  };
  return Object.assign(
    async (db: Kysely<Database>, values: V): Promise<QueryResult<R>> => execute<R>(db, compiled(db, values)),
    {
      compiled,
      atCommit: (db: Kysely<Database>, values: V): Promise<void> =>
        capabilitiesOf(db).writeAtCommit(db, compiled(db, values)),
    },
  );
}
