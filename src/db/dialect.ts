import { EventEmitter } from 'node:events';
import type SqliteDatabase from 'better-sqlite3';
import {
  type AliasedRawBuilder,
  CompiledQuery,
  type Kysely,
  PostgresAdapter,
  type QueryResult,
  type RawBuilder,
  type SqlBool,
  sql,
} from 'kysely';
import type { Database } from './schema.ts';
import { statementEnded, statementStarted } from './statement-times.ts';

/** A database handle inside a transaction (Kysely's Transaction extends Kysely). */
export type Tx = Kysely<Database>;

/** How a transaction asks the engine to plan its reads (`DialectCapabilities.groupCommit`). */
export interface TransactionOptions {
  /**
   * PostgreSQL: reads through an index in its order, never gathered whole by a bitmap and sorted
   * (`set local enable_bitmapscan = off`, sent with the BEGIN). For reads whose LIMIT takes the first rows
   * of a partial index: the worker's claim. PostgreSQL plans them from the table's statistics, and for a
   * `jobs` table analyzed while empty (a fresh database, a quiet spell) and then filled by a burst of tasks,
   * it read every due job and sorted them all to take 64: 6.2 ms against 0.3 ms with 10,000 due
   * (docs/performance.md, "A twenty-fifth session"). SQLite has no bitmap scans and plans without
   * statistics: nothing changes.
   */
  orderedReads?: boolean;
}

/**
 * What differs between the engines, as named capabilities (STYLE: no `if (isPostgres)` in queries).
 */
export interface DialectCapabilities {
  name: 'sqlite' | 'postgres';
  /**
   * Runs `fn` in one transaction that takes the write lock up front. SQLite: `BEGIN IMMEDIATE` on the
   * single connection, so a read-then-write transaction never fails to upgrade its lock; PostgreSQL:
   * an ordinary transaction whose row locks come from `lockAccount`.
   */
  transaction<T>(db: Kysely<Database>, fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * `transaction` for a hot path whose calls come many at once (task creation): on SQLite, where write
   * transactions run one after another anyway, calls that arrive while one is running share the next
   * transaction, each in a savepoint of its own (group commit). A call that throws rolls back its own
   * savepoint only; the others commit together, and each call resolves only after that commit, so an
   * answer never tells of a change a crash could still undo. PostgreSQL: `transaction` (its own commits
   * overlap, and one transaction per call keeps row locks short).
   */
  groupCommit<T>(db: Kysely<Database>, fn: (tx: Tx) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * `groupCommit` for a call that runs exactly one statement (a run's saved handle): on SQLite it shares
   * the next group commit; on PostgreSQL the statement runs on its own, which makes it a transaction by
   * itself, without the BEGIN and COMMIT round trips of `transaction` (two of a worker's task's twenty).
   */
  groupCommitStatement<T>(db: Kysely<Database>, fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Serialises money decisions of one account for the rest of the transaction. */
  lockAccount(tx: Tx, accountId: string): Promise<void>;
  /**
   * `lockAccount` for several accounts at once, taken in the order of their ids, so that two transactions
   * locking overlapping sets never wait for each other (a batch's settlement, batches.ts). `atCommit`: taken
   * with the COMMIT, before the writes queued after it (`writeAtCommit`), for a transaction that reads
   * nothing after them.
   */
  lockAccounts(tx: Tx, accountIds: readonly string[], options?: { atCommit?: boolean }): Promise<void>;
  /**
   * Rows given as one JSON parameter (`json`, made by `rowsJson` with the same `columns`), whatever their
   * count, as a table named `v` in one statement's FROM: the set-based statements of a batch (batches.ts)
   * keep one SQL text for every size, so they are built once (`prepared`). Each column as text, or as a
   * bigint. PostgreSQL parses each element once (`json_to_recordset`): `->>` per column parsed it again for
   * each column, 3 times the time for a batch's 50 rows of 6 columns.
   */
  jsonRows<C extends JsonColumns>(json: string, columns: C): AliasedRawBuilder<JsonRowOf<C>, 'v'>;
  /**
   * The JSON text of `rows` as `jsonRows` with the same `columns` reads them; a value left out is null.
   * PostgreSQL: an array of objects (`json_to_recordset` reads them by name, and `jsonIn` their `id`s).
   * SQLite: an array of arrays in the columns' order, read by position: 133 µs for 64 rows of 6 columns,
   * against 225 µs by name (docs/performance.md, "A twenty-fourth session").
   */
  rowsJson<C extends JsonColumns>(columns: C, rows: ReadonlyArray<JsonRowOf<C>>): string;
  /**
   * `column` is one of the ids in `json` (`idsJson`, or any array of objects with an `id`, such as
   * PostgreSQL's `rowsJson`), for `where … in` with one SQL text for every count.
   * PostgreSQL: as `= any(array(…))`, which its planner reads through the column's index; `in (…)` over a
   * JSON function it plans as a join whose function side it guesses at 100 rows, and below some 40,000
   * rows in the table it then reads the whole table (docs/performance.md, "A twenty-second session").
   */
  jsonIn(column: string, json: string): RawBuilder<SqlBool>;
  /**
   * `column` is none of the ids in `json` (`idsJson`; no id in it may be null). PostgreSQL: as `not in
   * (select …)`, which it checks against a hash of the list; `not (… = any(…))` compared each row with
   * every id in turn, a tenth of its CPU in a PostgreSQL drain (docs/performance.md, "A twenty-third
   * session").
   */
  jsonNotIn(column: string, json: string): RawBuilder<SqlBool>;
  /**
   * Batches of one kind that commit at once (batches.ts). SQLite: one, its writes take turns anyway.
   * PostgreSQL: a few, on the pool's connections, so a batch that waits for a row lock (a stuck
   * transaction's) holds up only the calls in it, not every later one.
   */
  batchLanes: number;
  /** `for update skip locked` where the engine has it, so workers never claim the same job. */
  supportsSkipLocked: boolean;
  /**
   * Tells other processes, when the transaction commits, that something happened on `channel`; `payload`
   * (default empty) says what, for listeners that care.
   */
  notify(tx: Tx, channel: string, payload?: string): Promise<void>;
  /**
   * Runs `query`, a write whose result nobody reads, as part of the transaction `tx`. PostgreSQL, in a
   * transaction of this module: sent with the COMMIT in one simple query, its values written into it as
   * literals (a simple query has no parameters), which saves the write's round trip; a failing write
   * aborts the transaction and the COMMIT after it does not run (the caller's error, and a rollback).
   * Elsewhere, and on SQLite, at once.
   */
  writeAtCommit(tx: Tx, query: CompiledQuery): Promise<void>;
  /** The database server's clock now (not the transaction's start), which every process shares. */
  currentTime(db: Kysely<Database>): Promise<Date>;
  /**
   * Serialises a named one-off step across processes (the demo account of a first start) for the rest of
   * the transaction, so a check-then-insert is atomic even when no row exists yet to lock.
   */
  lockStep(tx: Tx, step: string): Promise<void>;
}

/** The SQL type of each column of `DialectCapabilities.jsonRows`, by name. */
export type JsonColumns = Readonly<Record<string, 'text' | 'bigint'>>;
/** A row of `DialectCapabilities.jsonRows` with `columns`. */
export type JsonRowOf<C extends JsonColumns> = {
  [K in keyof C]: C[K] extends 'bigint' ? number : string | null;
};

/** `ids` as `DialectCapabilities.jsonIn` takes them (under `id`). */
export function idsJson(ids: readonly string[]): string {
  return JSON.stringify(ids.map((id) => ({ id })));
}

/** The ids of `json` (`idsJson`) as a PostgreSQL subquery that parses the JSON once. */
function postgresIds(json: string) {
  return sql<string>`select id from json_to_recordset(${json}::json) as element(id text)`;
}

/**
 * SQLite has no LISTEN/NOTIFY: notifications reach the listeners of this process only, through a bus per
 * database handle, after the transaction that sent them commits (nothing when it rolls back). Other
 * processes on the same file find changes by their periodic polls.
 */
const sqliteBuses = new WeakMap<object, EventEmitter>();
/** Notifications of each open SQLite transaction, sent when it commits. */
const sqlitePending = new WeakMap<object, { bus: EventEmitter; notes: Array<[string, string]> }>();

/** Each SQLite handle's statements, prepared once by SQL text (`countedStatements`), by its Kysely adapter. */
const sqliteStatements = new WeakMap<object, (sql: string) => SqliteDatabase.Statement>();

/** Registers the statements of a SQLite handle (connect.ts), for `execute`. */
export function registerSqliteStatements(
  db: Kysely<Database>,
  prepare: (sql: string) => SqliteDatabase.Statement,
): void {
  sqliteStatements.set(db.getExecutor().adapter, prepare);
}

/**
 * Runs a compiled query. Inside a SQLite transaction of this module (`transaction`, `groupCommit`) the
 * connection is the transaction's own, so the statement runs straight on the handle, as Kysely's SQLite
 * driver would run it (`all` for a statement that returns rows, `run` otherwise) but without its
 * executor's promises and connection bookkeeping: about 1.5 µs a statement, a dozen statements a task
 * creation (docs/performance.md). Everywhere else, and on PostgreSQL, through Kysely. Each run counts in a
 * recording of statement times when one runs (statement-times.ts).
 */
export function execute<R>(db: Kysely<Database>, query: CompiledQuery<R>): Promise<QueryResult<R>> {
  const started = statementStarted();
  const prepare = sqlitePending.has(db) ? sqliteStatements.get(db.getExecutor().adapter) : undefined;
  if (prepare === undefined) {
    if (started === undefined) return db.executeQuery(query);
    return db.executeQuery(query).finally(() => statementEnded(query.sql, started));
  }
  try {
    const statement = prepare(query.sql);
    const parameters = query.parameters as unknown[];
    if (statement.reader) {
      const rows = statement.all(parameters) as R[];
      statementEnded(query.sql, started);
      return Promise.resolve({ rows });
    }
    const { changes, lastInsertRowid } = statement.run(parameters);
    statementEnded(query.sql, started);
    return Promise.resolve({
      insertId: lastInsertRowid != null ? BigInt(lastInsertRowid) : undefined,
      numAffectedRows: changes != null ? BigInt(changes) : undefined,
      rows: [],
    });
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The in-process bus of a SQLite handle, made on first use; `Db.listen` subscribes to it. */
export function sqliteBus(db: Kysely<Database>): EventEmitter {
  let bus = sqliteBuses.get(db);
  if (!bus) {
    bus = new EventEmitter();
    // Every waiting request listens; the count is bounded by the request limits, not by this warning.
    bus.setMaxListeners(0);
    sqliteBuses.set(db, bus);
  }
  return bus;
}

/** The transaction statements of SQLite, compiled once: every transition of a run issues several. */
const SQLITE = {
  begin: CompiledQuery.raw('begin immediate'),
  savepoint: CompiledQuery.raw('savepoint gta_call'),
  rollbackToSavepoint: CompiledQuery.raw('rollback to gta_call'),
  release: CompiledQuery.raw('release gta_call'),
  commit: CompiledQuery.raw('commit'),
  rollback: CompiledQuery.raw('rollback'),
};

/** Most calls one group commit takes; the rest wait for the next. */
const GROUP_COMMIT_MAX = 64;

interface GroupItem {
  fn: (tx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Calls waiting for the next group commit of each SQLite handle, and whether one is running. */
const groups = new WeakMap<object, { queue: GroupItem[]; running: boolean }>();

async function runGroups(
  db: Kysely<Database>,
  group: { queue: GroupItem[]; running: boolean },
): Promise<void> {
  group.running = true;
  try {
    // What arrived while the previous group ran makes the next one.
    while (group.queue.length > 0) await commitGroup(db, group.queue.splice(0, GROUP_COMMIT_MAX));
  } finally {
    group.running = false;
  }
}

/** One transaction for `items`, each in a savepoint; settles every item. */
async function commitGroup(db: Kysely<Database>, items: GroupItem[]): Promise<void> {
  const bus = sqliteBus(db);
  const committed: Array<{ item: GroupItem; result: unknown; notes: Array<[string, string]> }> = [];
  const settled = new Set<GroupItem>();
  try {
    await db.connection().execute(async (conn) => {
      sqliteBuses.set(conn, bus);
      await execute(conn, SQLITE.begin);
      try {
        for (const item of items) {
          const pending = { bus, notes: [] as Array<[string, string]> };
          sqlitePending.set(conn, pending);
          await execute(conn, SQLITE.savepoint);
          let result: unknown;
          try {
            result = await item.fn(conn);
          } catch (error) {
            // Its own writes are undone; the group goes on. (An error that ended the whole transaction
            // makes this rollback fail, and the outer handler settles everything with it.)
            await execute(conn, SQLITE.rollbackToSavepoint);
            await execute(conn, SQLITE.release);
            settled.add(item);
            item.reject(error);
            continue;
          }
          await execute(conn, SQLITE.release);
          committed.push({ item, result, notes: pending.notes });
        }
        sqlitePending.delete(conn);
        await execute(conn, SQLITE.commit);
      } catch (error) {
        sqlitePending.delete(conn);
        await conn.executeQuery(SQLITE.rollback).catch(() => {});
        throw error;
      }
    });
  } catch (error) {
    for (const item of items) if (!settled.has(item)) item.reject(error);
    return;
  }
  const sent = new Set<string>();
  for (const { notes } of committed) {
    for (const [channel, payload] of notes) {
      const key = `${channel}\u0000${payload}`;
      if (sent.has(key)) continue;
      sent.add(key);
      bus.emit(channel, payload);
    }
  }
  for (const { item, result } of committed) item.resolve(result);
}

export const sqliteCapabilities: DialectCapabilities = {
  name: 'sqlite',
  groupCommit<T>(db: Kysely<Database>, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let group = groups.get(db);
      if (!group) {
        group = { queue: [], running: false };
        groups.set(db, group);
      }
      group.queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      if (group.running) return;
      group.running = true;
      // Started after the event loop's pending I/O: the requests read in the same turn reach this point
      // before the group begins (SQLite's calls are synchronous, so they would otherwise never overlap).
      setImmediate(() => void runGroups(db, group));
    });
  },
  groupCommitStatement(db, fn) {
    return sqliteCapabilities.groupCommit(db, fn);
  },
  async transaction(db, fn) {
    const bus = sqliteBus(db);
    return db.connection().execute(async (conn) => {
      const pending = { bus, notes: [] as Array<[string, string]> };
      sqliteBuses.set(conn, bus);
      sqlitePending.set(conn, pending);
      await execute(conn, SQLITE.begin);
      try {
        const result = await fn(conn);
        await execute(conn, SQLITE.commit);
        sqlitePending.delete(conn);
        // Once per channel and payload, as PostgreSQL delivers them.
        const sent = new Set<string>();
        for (const [channel, payload] of pending.notes) {
          const key = `${channel}\u0000${payload}`;
          if (sent.has(key)) continue;
          sent.add(key);
          bus.emit(channel, payload);
        }
        return result;
      } catch (error) {
        sqlitePending.delete(conn);
        await conn.executeQuery(SQLITE.rollback);
        throw error;
      }
    });
  },
  // No-op: BEGIN IMMEDIATE already makes this transaction the database's only writer.
  async lockAccount() {},
  async lockAccounts() {},
  batchLanes: 1,
  jsonRows(json, columns) {
    const list = sql.raw(
      Object.keys(columns)
        .map((name, i) => `value ->> ${i} as "${name.replaceAll('"', '""')}"`)
        .join(', '),
    );
    // `jsonb_each`: each element comes as JSONB, which `->>` reads without parsing it again as text
    // (`json_each` hands each element back as JSON text): a quarter off a batch's INSERT of 64 rows.
    return sql`(select ${list} from jsonb_each(${json}))`.as('v') as never;
  },
  rowsJson(columns, rows) {
    const names = Object.keys(columns);
    return JSON.stringify(rows.map((row) => names.map((name) => row[name] ?? null)));
  },
  jsonIn(column, json) {
    return sql<SqlBool>`${sql.ref(column)} in (select value ->> 'id' from jsonb_each(${json}))`;
  },
  jsonNotIn(column, json) {
    return sql<SqlBool>`${sql.ref(column)} not in (select value ->> 'id' from jsonb_each(${json}))`;
  },
  supportsSkipLocked: false,
  // This process's listeners only, on commit; other processes find changes by their periodic poll.
  async notify(tx, channel, payload = '') {
    const pending = sqlitePending.get(tx);
    if (pending) {
      pending.notes.push([channel, payload]);
      return;
    }
    // Outside a transaction the change is already committed.
    const bus = sqliteBuses.get(tx);
    if (bus) queueMicrotask(() => bus.emit(channel, payload));
  },
  async writeAtCommit(tx, query) {
    await execute(tx, query);
  },
  async currentTime(db) {
    // The processes sharing a SQLite file share its host's clock; read it through SQLite all the same.
    const { rows } = await sql<{ now: string }>`select strftime('%Y-%m-%dT%H:%M:%fZ', 'now') as now`.execute(
      db,
    );
    return new Date(Date.parse(String(rows[0]?.now)));
  },
  // No-op: BEGIN IMMEDIATE already makes this transaction the database's only writer.
  async lockStep() {},
};

/**
 * What each open PostgreSQL transaction sends with its COMMIT (`pgTransaction`): its notifications and its
 * writes whose results nobody reads (`writeAtCommit`), as SQL.
 */
interface PgPending {
  notes: Array<[string, string]>;
  writes: string[];
}
const pgPending = new WeakMap<object, PgPending>();

const PG = {
  commit: CompiledQuery.raw('commit'),
  rollback: CompiledQuery.raw('rollback'),
};

/** A PostgreSQL BEGIN with its settings for the rest of the transaction (`set local`), in one simple query. */
function pgBegin(settings: readonly string[]): CompiledQuery {
  return CompiledQuery.raw(['begin', ...settings.map((setting) => `set local ${setting}`)].join('; '));
}

/** A transaction's BEGIN by whether it runs in a request (its lock waits bounded) and `orderedReads`. */
interface PgBegins {
  plain: CompiledQuery;
  ordered: CompiledQuery;
}

const ORDERED_READS = 'enable_bitmapscan = off';
const PG_BEGINS: PgBegins = { plain: pgBegin([]), ordered: pgBegin([ORDERED_READS]) };

/** Each PostgreSQL handle's bound on lock waits of requests (`registerRequestLockTimeout`), by its Kysely adapter. */
const pgRequestBegins = new WeakMap<object, { begins: PgBegins; applies: () => boolean }>();

/**
 * Bounds the lock waits of the transactions `inRequest` says a request runs (connect.ts): they begin with
 * `set local lock_timeout`, sent with the BEGIN in one round trip, so a row held by a stuck or slow
 * transaction (a frozen worker's) fails the request's transaction after `ms` with 55P03 and rolls it back
 * whole, instead of holding the caller until `statement_timeout`. Every other transaction (the worker's,
 * the sweepers') waits as long as it must.
 */
export function registerRequestLockTimeout(db: Kysely<Database>, ms: number, inRequest: () => boolean): void {
  const lockTimeout = `lock_timeout = ${Math.max(1, Math.round(ms))}`;
  pgRequestBegins.set(db.getExecutor().adapter, {
    begins: { plain: pgBegin([lockTimeout]), ordered: pgBegin([lockTimeout, ORDERED_READS]) },
    applies: inRequest,
  });
}

/**
 * A PostgreSQL transaction whose notifications travel with its COMMIT, in one round trip: `select
 * pg_notify(…), …; commit` as one simple query. NOTIFY is transactional either way (delivered on commit,
 * dropped on rollback); sending it with the COMMIT saves the round trip each notifying transaction paid
 * for it, three a task (created, running, finished). A failing notification aborts the transaction and
 * the COMMIT after it in the same query does not run: the caller's error, and a rollback.
 */
async function pgTransaction<T>(
  db: Kysely<Database>,
  fn: (tx: Tx) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const request = pgRequestBegins.get(db.getExecutor().adapter);
  const begins = request?.applies() ? request.begins : PG_BEGINS;
  const begin = options.orderedReads === true ? begins.ordered : begins.plain;
  return db.connection().execute(async (conn) => {
    const pending: PgPending = { notes: [], writes: [] };
    pgPending.set(conn, pending);
    await conn.executeQuery(begin);
    try {
      const result = await fn(conn);
      const { notes, writes } = pending;
      await conn.executeQuery(
        notes.length === 0 && writes.length === 0
          ? PG.commit
          : CompiledQuery.raw(pgCommitWith(writes, notes)),
      );
      return result;
    } catch (error) {
      // Also after a refused notification or write sent with the COMMIT, which leaves the transaction
      // aborted. (After a failed COMMIT the transaction is already over and this ROLLBACK only warns.)
      await conn.executeQuery(PG.rollback).catch(() => {});
      throw error;
    } finally {
      pgPending.delete(conn);
    }
  });
}

/** `select pg_notify(…), …; commit`, each channel and payload once, as literals (a simple query has no parameters). */
export function notifyAndCommit(notes: ReadonlyArray<readonly [string, string]>): string {
  return pgCommitWith([], notes);
}

/** `<writes>; select pg_notify(…), …; commit` (`writeAtCommit`, `notifyAndCommit`), in that order. */
function pgCommitWith(writes: readonly string[], notes: ReadonlyArray<readonly [string, string]>): string {
  const calls = new Set<string>();
  for (const [channel, payload] of notes) calls.add(`pg_notify(${pgQuoted(channel)}, ${pgQuoted(payload)})`);
  const statements = [...writes];
  if (calls.size > 0) statements.push(`select ${[...calls].join(', ')}`);
  statements.push('commit');
  return statements.join('; ');
}

/**
 * `query` with its values written in as literals, for a simple query (`writeAtCommit`). Its SQL must hold
 * no `$n` but its placeholders (Kysely's compiled queries hold their values only as placeholders).
 */
export function pgInlined(query: CompiledQuery): string {
  return query.sql.replace(/\$(\d+)/g, (_match, index: string) =>
    pgLiteral(query.parameters[Number(index) - 1]),
  );
}

/**
 * `pg.escapeLiteral`'s literal of `text` (quotes doubled; with a backslash, an `E'…'` literal with the
 * backslashes doubled too, right whatever `standard_conforming_strings` says), by two replacements: pg's
 * builds it a character at a time, and a batch's rows sent with its COMMIT (`writeAtCommit`) made that
 * about a quarter of what a PostgreSQL drain allocated (docs/performance.md, "A twenty-sixth session").
 */
export function pgQuoted(text: string): string {
  const quoted = text.replaceAll("'", "''");
  return text.includes('\\') ? ` E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}

function pgLiteral(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return pgQuoted(value);
  if (typeof value === 'bigint' || (typeof value === 'number' && Number.isFinite(value)))
    return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  throw new TypeError(`no SQL literal for a value of type ${typeof value}`);
}

export const postgresCapabilities: DialectCapabilities = {
  name: 'postgres',
  transaction: pgTransaction,
  groupCommit: pgTransaction,
  groupCommitStatement: (db, fn) => fn(db),
  async lockAccount(tx, accountId) {
    // FOR NO KEY UPDATE, the lock an UPDATE of the balance takes anyway: money decisions of the account
    // still run one at a time, but the foreign-key checks of rows other transactions insert for it (tasks,
    // ledger entries) no longer wait for them, as they would behind FOR UPDATE.
    await tx.selectFrom('accounts').select('id').where('id', '=', accountId).forNoKeyUpdate().execute();
  },
  async lockAccounts(tx, accountIds, options) {
    if (accountIds.length === 0) return;
    // The rows are locked as the sort hands them up, so always in the same order.
    const query = sql`select id from accounts where ${postgresCapabilities.jsonIn('id', idsJson(accountIds))}
      order by id for no key update`.compile(tx);
    await (options?.atCommit ? postgresCapabilities.writeAtCommit(tx, query) : tx.executeQuery(query));
  },
  batchLanes: 4,
  jsonRows(json, columns) {
    const list = sql.raw(
      Object.entries(columns)
        .map(([name, type]) => `"${name.replaceAll('"', '""')}" ${type}`)
        .join(', '),
    );
    return sql`(select * from json_to_recordset(${json}::json) as element(${list}))`.as('v') as never;
  },
  rowsJson(_columns, rows) {
    return JSON.stringify(rows);
  },
  jsonIn(column, json) {
    return sql<SqlBool>`${sql.ref(column)} = any(array(${postgresIds(json)}))`;
  },
  jsonNotIn(column, json) {
    return sql<SqlBool>`${sql.ref(column)} not in (${postgresIds(json)})`;
  },
  supportsSkipLocked: true,
  async notify(tx, channel, payload = '') {
    // Delivered on commit, once per transaction, channel and payload: sent with the COMMIT when the
    // transaction is `pgTransaction`'s, else at once.
    const pending = pgPending.get(tx);
    if (pending !== undefined) pending.notes.push([channel, payload]);
    else await sql`select pg_notify(${channel}, ${payload})`.execute(tx);
  },
  async writeAtCommit(tx, query) {
    const pending = pgPending.get(tx);
    if (pending !== undefined) pending.writes.push(pgInlined(query));
    else await tx.executeQuery(query);
  },
  async currentTime(db) {
    // Epoch milliseconds as text: no time-zone or driver date parsing in between.
    const { rows } = await sql<{ ms: string }>`
      select (extract(epoch from clock_timestamp()) * 1000)::text as ms`.execute(db);
    return new Date(Number(rows[0]?.ms));
  },
  async lockStep(tx, step) {
    // A transaction-level advisory lock: released at commit or rollback, even when the process dies.
    await sql`select pg_advisory_xact_lock(hashtext(${`gta:${step}`}))`.execute(tx);
  },
};

/** The capabilities of the engine behind `db` (a handle or a transaction), from its Kysely adapter. */
export function capabilitiesOf(db: Kysely<Database>): DialectCapabilities {
  return db.getExecutor().adapter instanceof PostgresAdapter ? postgresCapabilities : sqliteCapabilities;
}

/** `DialectCapabilities.rowsJson` on `db`'s engine: the JSON of `rows` for a prepared query's `jsonRows`. */
export function rowsJson<C extends JsonColumns>(
  db: Kysely<Database>,
  columns: C,
  rows: ReadonlyArray<JsonRowOf<C>>,
): string {
  return capabilitiesOf(db).rowsJson(columns, rows);
}

/**
 * Tells listeners, when `tx` commits, that something happened on `channel` (`DialectCapabilities.notify`
 * for code that holds only the transaction): a SQLite transaction's own listeners, or PostgreSQL's NOTIFY.
 */
export function notifyOnCommit(tx: Tx, channel: string, payload = ''): Promise<void> {
  return capabilitiesOf(tx).notify(tx, channel, payload);
}
