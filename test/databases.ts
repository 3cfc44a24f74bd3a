/**
 * Fresh databases for tests: a database of its own on the PostgreSQL server of TEST_DATABASE_URL, dropped
 * afterwards, or SQLite in memory when it is unset.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createDb, type Db, migrateToLatest } from '../src/db/index.ts';

async function onServer(server: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A new, empty database named `<prefix>_<random>` on `server`; `drop` removes it, connections and all. */
export async function freshPostgres(
  server: string,
  prefix: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  await onServer(server, `create database ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => onServer(server, `drop database if exists ${name} with (force)`),
  };
}

/** A migrated database: fresh on TEST_DATABASE_URL's server, or SQLite in memory. */
export async function openTestDatabase(prefix: string): Promise<{ db: Db; drop: () => Promise<void> }> {
  const server = process.env.TEST_DATABASE_URL;
  if (!server) {
    const db = createDb('sqlite::memory:');
    await migrateToLatest(db);
    return { db, drop: () => db.close() };
  }
  const fresh = await freshPostgres(server, prefix);
  const db = createDb(fresh.url);
  await migrateToLatest(db);
  return {
    db,
    drop: async () => {
      await db.close();
      await fresh.drop();
    },
  };
}
