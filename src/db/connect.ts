import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { type CompiledQuery, Kysely, PostgresDialect, SqliteDialect, type SqliteDialectConfig } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import { startCheckpointer } from './checkpointer.ts';
import { committedReads, countedStatements } from './committed-reads.ts';
import {
  type DialectCapabilities,
  postgresCapabilities,
  registerRequestLockTimeout,
  registerSqliteStatements,
  sqliteBus,
  sqliteCapabilities,
} from './dialect.ts';
import { registerEpochReader } from './epochs.ts';
import { listenPostgres } from './listen.ts';
import { migrationProvider } from './migrations/index.ts';
import { preparingPool } from './pg-statements.ts';
import type { Database } from './schema.ts';

export interface Db {
  db: Kysely<Database>;
  dialect: DialectCapabilities;
  /** The PostgreSQL pool, for libraries that keep shared state in the database (rate limits); null on SQLite. */
  pgPool: pg.Pool | null;
  /**
   * Calls `onNotify` whenever any process notifies `channel` (PostgreSQL LISTEN/NOTIFY), so workers wake
   * without busy polling. SQLite has no such thing: only this process's notifications arrive.
   * `onNotify` gets the notification's payload, or null after a lost connection was made again (whatever
   * was notified meanwhile is lost). Resolves to a function that stops listening.
   */
  listen(channel: string, onNotify: (payload: string | null) => void): Promise<() => Promise<void>>;
  /**
   * A change counter of the `epochs` table read at once, without waiting for the connection: on SQLite
   * the value (a synchronous read of the shared file, about a microsecond), on PostgreSQL null, where
   * LISTEN tells every process of a change instead. For caches that must notice another process's change
   * on their very next use.
   */
  readEpoch(name: string): number | null;
  /**
   * A compiled read answered at once from committed data, or null: then the caller runs it through Kysely.
   * On SQLite while no transaction is open on the handle: the rows as Kysely would give them, frozen, kept
   * until the database changes (committed-reads.ts), so a poll of an unchanged task costs no query. Null
   * on PostgreSQL. For the hot reads of polls and downloads.
   */
  readNow<R>(query: CompiledQuery<R>): R[] | null;
  /**
   * Runs the migrator so that processes starting together on one database take turns and none runs a
   * migration twice; `fn` gets the handle to migrate on.
   */
  migrationSession(fn: (session: Kysely<Database>) => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

/**
 * Bounds on PostgreSQL work, so a stuck statement, a forgotten transaction or a server that stopped
 * answering ends in an error instead of holding locks and requests forever (issue 10.13). The service's
 * statements take milliseconds; the bounds only catch the broken cases. `statement_timeout`,
 * `idle_in_transaction_session_timeout` and `query_timeout` given in DATABASE_URL's query win over these.
 * SQLite ignores them: its only wait is `busy_timeout` (5 s).
 */
export interface DbOptions {
  /** Longest a statement may run before the server cancels it (milliseconds). (Default: 30 s) */
  statementTimeoutMs?: number;
  /**
   * Longest a transaction may sit idle, holding its row locks, before the server ends its session
   * (milliseconds). (Default: 60 s)
   */
  idleInTransactionTimeoutMs?: number;
  /** Longest to wait for a pooled connection, including connecting to the server (milliseconds). (Default: 10 s) */
  connectTimeoutMs?: number;
  /**
   * Longest a transaction run for a request waits for a row lock another transaction holds (milliseconds):
   * past it the transaction rolls back with 55P03, which the API answers at once as retryable, instead of
   * holding the caller behind a stuck or slow transaction until `statement_timeout`. (Default: 3 s)
   */
  requestLockTimeoutMs?: number;
  /**
   * True while the caller runs for a request, whose transactions `requestLockTimeoutMs` bounds; the
   * worker's and the sweepers' transactions wait for their locks as long as they must. (Default: never)
   */
  inRequest?: () => boolean;
}

const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
const DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_REQUEST_LOCK_TIMEOUT_MS = 3_000;
/**
 * The client gives up this long after the server should have cancelled a statement itself: only a server
 * that no longer answers at all (network partition, blackholed connection) gets this far.
 */
const CLIENT_GRACE_MS = 5_000;

// PostgreSQL bigint (int8) and count() come back as strings; money fits in a double exactly up to 2^53.
pg.types.setTypeParser(20, (value) => Number(value));

/**
 * Reads `epochs` straight on the SQLite handle: synchronous, so it never queues behind the connection's
 * other queries (it sees what is committed, or the running transaction's own change, which only makes a
 * cache forget early). 0 before the migration made the table.
 */
function epochReader(sqlite: SqliteDatabase.Database): (name: string) => number {
  let statement: SqliteDatabase.Statement<[string], number> | null = null;
  return (name) => {
    try {
      statement ??= sqlite.prepare<[string], number>('select value from epochs where name = ?').pluck();
      return Number(statement.get(name) ?? 0);
    } catch (error) {
      if (error instanceof SqliteDatabase.SqliteError && /no such table/.test(error.message)) return 0;
      throw error;
    }
  };
}

/** Opens the database named by DATABASE_URL (`sqlite:<file>` or `postgres://…`). */
export function createDb(databaseUrl: string, options: DbOptions = {}): Db {
  if (databaseUrl.startsWith('sqlite:')) {
    const file = databaseUrl.slice('sqlite:'.length);
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const sqlite = new SqliteDatabase(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    // Savepoints (every member of a group commit has one) journal the pages they change; beyond 64 KiB
    // that journal spilled to a temporary file on disk, about 60 KiB of writes per task creation.
    sqlite.pragma('temp_store = MEMORY');
    // SQLite's own lower() folds ASCII letters only: the operator's search for "ромашка" never found
    // "ООО Ромашка", which PostgreSQL's lower() finds. JavaScript's folding makes the engines agree.
    sqlite.function('lower', { deterministic: true }, (value: unknown) =>
      typeof value === 'string' ? value.toLowerCase() : value,
    );
    const statements = countedStatements(sqlite);
    const database = {
      close: () => sqlite.close(),
      prepare: statements.prepare,
    } as SqliteDialectConfig['database'];
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
    // Known as SQLite from here on (`notifyOnCommit`), in a transaction or not.
    sqliteBus(db);
    const readEpoch = epochReader(sqlite);
    registerEpochReader(db, readEpoch);
    registerSqliteStatements(db, statements.prepare);
    const stopCheckpointer = file === ':memory:' ? null : startCheckpointer(sqlite, path.resolve(file));
    return {
      db,
      dialect: sqliteCapabilities,
      pgPool: null,
      // This process's notifications only (dialect.ts), delivered on commit.
      listen: async (channel, onNotify) => {
        const bus = sqliteBus(db);
        const handler = (payload: string): void => onNotify(payload);
        bus.on(channel, handler);
        return async () => {
          bus.off(channel, handler);
        };
      },
      // Kysely's SQLite migration lock is a no-op that only holds within one process; `BEGIN IMMEDIATE`
      // makes every other process wait (busy_timeout) until the migrations commit, and a failed run rolls
      // back whole.
      migrationSession: (fn) => sqliteCapabilities.transaction(db, fn),
      readEpoch,
      readNow: committedReads(sqlite, statements),
      close: async () => {
        await stopCheckpointer?.();
        await db.destroy();
      },
    };
  }
  const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  // The URL's own statement_timeout wins (pg reads it over the pool's), so the client's bound follows it;
  // 0 there turns both off.
  const fromUrl = Number(new URL(databaseUrl).searchParams.get('statement_timeout') ?? Number.NaN);
  const effectiveStatementTimeoutMs = Number.isFinite(fromUrl) && fromUrl >= 0 ? fromUrl : statementTimeoutMs;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const pool = preparingPool({
    connectionString: databaseUrl,
    max: 10,
    statement_timeout: statementTimeoutMs,
    idle_in_transaction_session_timeout:
      options.idleInTransactionTimeoutMs ?? DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    query_timeout:
      effectiveStatementTimeoutMs > 0 ? effectiveStatementTimeoutMs + CLIENT_GRACE_MS : undefined,
    connectionTimeoutMillis: connectTimeoutMs,
    // A server gone silent is noticed on idle connections too, not only when a query times out.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle connection dropped by the server (restart, failover) is replaced on next use; unhandled, the
  // pool's 'error' event would end the process.
  pool.on('error', () => {});
  // The pool listens only to idle connections: one checked out between two statements of a transaction
  // would raise its 'error' unheard and end the process when the server goes away. Its next statement
  // fails instead, and the pool drops it on release because it is no longer queryable.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  if (options.inRequest)
    registerRequestLockTimeout(
      db,
      options.requestLockTimeoutMs ?? DEFAULT_REQUEST_LOCK_TIMEOUT_MS,
      options.inRequest,
    );
  // LISTEN connections are the handle's too: closing it ends them, whoever forgot to stop listening.
  const listeners = new Set<() => Promise<void>>();
  return {
    db,
    dialect: postgresCapabilities,
    pgPool: pool,
    listen: async (channel, onNotify) => {
      const stop = await listenPostgres({ databaseUrl, channel, onNotify, connectTimeoutMs });
      listeners.add(stop);
      return async () => {
        listeners.delete(stop);
        await stop();
      };
    },
    migrationSession: (fn) => migrationSessionPostgres(databaseUrl, connectTimeoutMs, fn),
    readEpoch: () => null,
    readNow: () => null,
    close: async () => {
      await Promise.all([...listeners].map((stop) => stop()));
      listeners.clear();
      await db.destroy();
    },
  };
}

/**
 * Migrations on a connection of their own, without the pool's statement and query timeouts: a long
 * migration, or waiting for Kysely's advisory lock while another process migrates, is no stuck query.
 * The lock is what makes processes take turns.
 */
async function migrationSessionPostgres(
  databaseUrl: string,
  connectTimeoutMs: number,
  fn: (session: Kysely<Database>) => Promise<void>,
): Promise<void> {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: 1,
    connectionTimeoutMillis: connectTimeoutMs,
  });
  pool.on('error', () => {});
  const session = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  try {
    await fn(session);
  } finally {
    await session.destroy();
  }
}

/**
 * Brings the schema up to date; fails loudly with the migration's own error. Processes starting together
 * on one database take turns (`Db.migrationSession`), so none runs a migration twice.
 */
export async function migrateToLatest(db: Db): Promise<void> {
  await db.migrationSession(async (session) => {
    const migrator = new Migrator({ db: session, provider: migrationProvider });
    const { error, results } = await migrator.migrateToLatest();
    const failed = results?.find((r) => r.status === 'Error');
    if (error || failed) {
      // Thrown inside the session, so SQLite rolls back what the failed run did.
      // The cause in the message: a database that cannot be reached is told apart from a broken schema.
      const reason = error instanceof Error ? `: ${error.message}` : '';
      const what = failed ? `migration ${failed.migrationName}` : 'migrating the database';
      throw new Error(`${what} failed${reason}`, { cause: error });
    }
  });
}
