import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type SqliteDialectConfig } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import { type DialectCapabilities, postgresCapabilities, sqliteCapabilities } from './dialect.ts';
import { migrationProvider } from './migrations/index.ts';
import type { Database } from './schema.ts';

export interface Db {
  db: Kysely<Database>;
  dialect: DialectCapabilities;
  /** The PostgreSQL pool, for libraries that keep shared state in the database (rate limits); null on SQLite. */
  pgPool: pg.Pool | null;
  /**
   * Calls `onNotify` whenever any process notifies `channel` (PostgreSQL LISTEN/NOTIFY), so workers wake
   * without busy polling. SQLite has no such thing: the in-process wake-up covers a single process.
   * Resolves to a function that stops listening.
   */
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

// PostgreSQL bigint (int8) and count() come back as strings; money fits in a double exactly up to 2^53.
pg.types.setTypeParser(20, (value) => Number(value));

/** Prepared statements kept per connection; the service issues a few dozen distinct SQL texts. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * better-sqlite3 compiles a statement on every `prepare`, which Kysely calls for every query: measured at
 * about 40 µs of a 3 µs lookup (bench/, docs/performance.md). Reusing statements by SQL text is safe here
 * because Kysely runs one query at a time on the single connection.
 */
function withStatementCache(sqlite: SqliteDatabase.Database): SqliteDialectConfig['database'] {
  const cache = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(query: string) {
      let statement = cache.get(query);
      if (statement === undefined) {
        statement = sqlite.prepare(query);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
        cache.set(query, statement);
      }
      return statement;
    },
  } as SqliteDialectConfig['database'];
}

/** Opens the database named by DATABASE_URL (`sqlite:<file>` or `postgres://…`). */
export function createDb(databaseUrl: string): Db {
  if (databaseUrl.startsWith('sqlite:')) {
    const file = databaseUrl.slice('sqlite:'.length);
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const sqlite = new SqliteDatabase(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
    return {
      db,
      dialect: sqliteCapabilities,
      pgPool: null,
      listen: async () => async () => {},
      close: () => db.destroy(),
    };
  }
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  // An idle connection dropped by the server (restart, failover) is replaced on next use; unhandled, the
  // pool's 'error' event would end the process.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: postgresCapabilities,
    pgPool: pool,
    listen: (channel, onNotify) => listenPostgres(databaseUrl, channel, onNotify),
    close: () => db.destroy(),
  };
}

/** A dedicated connection that LISTENs on a channel; reconnects after losing the server. */
async function listenPostgres(
  databaseUrl: string,
  channel: string,
  onNotify: () => void,
): Promise<() => Promise<void>> {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`bad channel name ${channel}`);
  let client: pg.Client | null = null;
  let stopped = false;
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: databaseUrl });
    next.on('notification', () => onNotify());
    next.on('error', () => {
      client = null;
      // Notifications missed while reconnecting are covered by the worker's periodic poll.
      if (!stopped) setTimeout(() => void connect().catch(() => {}), 1_000).unref();
    });
    await next.connect();
    await next.query(`LISTEN ${channel}`);
    client = next;
  };
  await connect();
  return async () => {
    stopped = true;
    await client?.end().catch(() => {});
  };
}

/**
 * Brings the schema up to date; fails loudly with the migration's own error. Processes starting together
 * on one database take turns (`DialectCapabilities.migrationSession`), so none runs a migration twice.
 */
export async function migrateToLatest(db: Db): Promise<void> {
  await db.dialect.migrationSession(db.db, async (session) => {
    const migrator = new Migrator({ db: session, provider: migrationProvider });
    const { error, results } = await migrator.migrateToLatest();
    const failed = results?.find((r) => r.status === 'Error');
    if (error || failed) {
      // Thrown inside the session, so SQLite rolls back what the failed run did.
      throw new Error(`migration ${failed?.migrationName ?? ''} failed`, { cause: error });
    }
  });
}
