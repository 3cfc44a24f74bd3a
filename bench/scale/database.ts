import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { createDb, migrateToLatest } from '../../src/db/index.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import { type FilledDatabase, type FillPlan, fillRows, type RowSink } from './fill.ts';

export type Engine = 'sqlite' | 'pg';

/** A throw-away database of the bench: its DATABASE_URL and how to remove it. */
export interface ScaleDatabase {
  url: string;
  drop(): Promise<void>;
}

async function onServer<T>(serverUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** An empty database: a SQLite file in `dir`, or a new database on the PostgreSQL server. */
export async function createScaleDatabase(
  engine: Engine,
  label: string,
  dir: string,
  pgUrl: string | null,
): Promise<ScaleDatabase> {
  if (engine === 'sqlite') {
    const file = path.join(dir, `${label}.db`);
    return {
      url: `sqlite:${file}`,
      drop: async () => {
        for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true });
      },
    };
  }
  if (pgUrl === null) throw new Error('no PostgreSQL server');
  const name = `gta_bench_scale_${label}_${process.pid}`;
  await onServer(pgUrl, async (client) => {
    await client.query(`drop database if exists ${name} with (force)`);
    await client.query(`create database ${name}`);
  });
  const url = new URL(pgUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    // `with (force)` ends the sessions of servers that did not close their pools in time.
    drop: async () => {
      await onServer(pgUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}

/**
 * Runs the project's migrations (so tables and indexes are the real ones), then writes the rows of
 * `plan` directly: SQLite in one transaction with a prepared statement per table, PostgreSQL in
 * batches of 5,000 rows, each one `INSERT … SELECT FROM json_populate_recordset`. PostgreSQL then gets
 * the VACUUM and ANALYZE its autovacuum runs on a table that grew this large, before the measurement
 * instead of in it: left to autovacuum, every large table was vacuumed during the rounds at 1,000,000 tasks
 * (docs/performance.md, "A thirtieth session"). A clone of the template keeps what it did (the visibility
 * map, the rows' hint bits, the statistics). SQLite gets none, as the service never runs one.
 */
export async function fillDatabase(url: string, plan: FillPlan): Promise<FilledDatabase> {
  const db = createDb(url);
  try {
    await migrateToLatest(db);
  } finally {
    await db.close();
  }
  if (url.startsWith('sqlite:')) {
    const sqlite = new SqliteDatabase(url.slice('sqlite:'.length));
    // A throw-away database: its rollback journal in memory and no syncs while it is filled (one big
    // transaction through WAL would write every page twice), a large page cache for the random inserts
    // into the account indexes; it goes back to WAL, as the service opens it. Out of WAL through DELETE
    // (better-sqlite3's defensive mode refuses journal_mode = off).
    sqlite.pragma('journal_mode = delete');
    sqlite.pragma('journal_mode = memory');
    sqlite.pragma('synchronous = off');
    sqlite.pragma('cache_size = -524288');
    try {
      const statements = new Map<string, SqliteDatabase.Statement>();
      const sink: RowSink = async (table, rows) => {
        const first = rows[0];
        if (!first) return;
        let statement = statements.get(table);
        if (!statement) {
          const columns = Object.keys(first);
          statement = sqlite.prepare(
            `insert into ${table} (${columns.join(', ')}) values (${columns.map((c) => `@${c}`).join(', ')})`,
          );
          statements.set(table, statement);
        }
        for (const row of rows) statement.run(row);
      };
      sqlite.exec('begin');
      const filled = await fillRows(plan, sink);
      sqlite.exec('commit');
      sqlite.pragma('journal_mode = wal');
      return filled;
    } finally {
      sqlite.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const sink: RowSink = async (table, rows) => {
      const first = rows[0];
      if (!first) return;
      const columns = Object.keys(first).join(', ');
      await client.query(
        `insert into ${table} (${columns}) select ${columns} from json_populate_recordset(null::${table}, $1)`,
        [JSON.stringify(rows)],
      );
    };
    await client.query('begin');
    const filled = await fillRows(plan, sink);
    await client.query('commit');
    await client.query('vacuum (analyze)');
    return filled;
  } finally {
    await client.end();
  }
}

/** A database ready for the bench, and how it was made. */
export interface PreparedDatabase {
  database: ScaleDatabase;
  filled: FilledDatabase;
  /** Seconds the fill took (when cloned: the fill that made the cached copy). */
  fillSeconds: number;
  /** Seconds the clone of the cached copy took, or null when filled now. */
  cloneSeconds: number | null;
}

interface CacheEntry {
  filled: FilledDatabase;
  fillSeconds: number;
}

/** What a kept template was made by: the migrations' names and the fill's source. */
function templateDigest(): string {
  return createHash('sha256')
    .update(Object.keys(migrations).join('\n'))
    .update(fs.readFileSync(new URL('./fill.ts', import.meta.url)))
    .digest('hex')
    .slice(0, 12);
}

/**
 * A filled database of `plan.size` tasks. With `cacheDir` (BENCH_SCALE_CACHE), the first fill is kept as
 * a template (a file copy on SQLite, a template database on PostgreSQL, named after a digest of the
 * migrations' names and of the fill's code, so a new or renamed migration or another fill makes a new one)
 * and later runs clone it: the bench changes its database (creations, the worker), the template stays as
 * filled.
 */
export async function prepareDatabase(
  engine: Engine,
  plan: FillPlan,
  dir: string,
  pgUrl: string | null,
  cacheDir: string | null,
): Promise<PreparedDatabase> {
  const label = `${engine}${plan.size}`;
  const database = await createScaleDatabase(engine, label, dir, pgUrl);
  const version = `${label}_${templateDigest()}`;
  const meta = cacheDir === null ? null : path.join(cacheDir, `${version}.json`);
  const templateFile = cacheDir === null ? null : path.join(cacheDir, `${version}.db`);
  const templateDb = `gta_bench_scale_tpl_${version}`;
  if (meta !== null && fs.existsSync(meta)) {
    const entry = JSON.parse(fs.readFileSync(meta, 'utf8')) as CacheEntry;
    const t0 = Date.now();
    if (engine === 'sqlite' && templateFile !== null && fs.existsSync(templateFile)) {
      fs.copyFileSync(templateFile, database.url.slice('sqlite:'.length));
      return {
        database,
        filled: entry.filled,
        fillSeconds: entry.fillSeconds,
        cloneSeconds: (Date.now() - t0) / 1000,
      };
    }
    if (engine === 'pg' && pgUrl !== null) {
      const name = new URL(database.url).pathname.slice(1);
      const cloned = await onServer(pgUrl, async (client) => {
        const found = await client.query('select 1 from pg_database where datname = $1', [templateDb]);
        if (found.rowCount === 0) return false;
        await client.query(`drop database if exists ${name} with (force)`);
        await client.query(`create database ${name} template ${templateDb}`);
        return true;
      });
      if (cloned)
        return {
          database,
          filled: entry.filled,
          fillSeconds: entry.fillSeconds,
          cloneSeconds: (Date.now() - t0) / 1000,
        };
    }
  }
  const t0 = Date.now();
  const filled = await fillDatabase(database.url, plan);
  const fillSeconds = (Date.now() - t0) / 1000;
  if (meta !== null && cacheDir !== null) {
    fs.mkdirSync(cacheDir, { recursive: true });
    if (engine === 'sqlite' && templateFile !== null) {
      fs.copyFileSync(database.url.slice('sqlite:'.length), templateFile);
    } else if (pgUrl !== null) {
      const name = new URL(database.url).pathname.slice(1);
      await onServer(pgUrl, async (client) => {
        await client.query(`drop database if exists ${templateDb} with (force)`);
        await client.query(`create database ${templateDb} template ${name}`);
      });
    }
    const entry: CacheEntry = { filled, fillSeconds };
    fs.writeFileSync(meta, JSON.stringify(entry));
  }
  return { database, filled, fillSeconds, cloneSeconds: null };
}
