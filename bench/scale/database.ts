import pg from 'pg';

/** The server URL `bash scripts/test-services.sh start` prints (its default port and trust auth). */
const DEFAULT_SERVER_URL = 'postgres://postgres@127.0.0.1:55432/postgres';

/** A throw-away database on the PostgreSQL server of TEST_DATABASE_URL. */
export interface BenchDatabase {
  /** URL of the new database, for DATABASE_URL of the API processes. */
  url: string;
  drop(): Promise<void>;
}

async function onServer<T>(serverUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `cannot reach PostgreSQL at ${serverUrl} (run: bash scripts/test-services.sh start): ${String(error)}`,
    );
  }
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates an empty database named after this process, so that two benches on one server cannot collide
 * and nothing of the tests' databases is touched. The API process started first runs the migrations.
 */
export async function createBenchDatabase(env: NodeJS.ProcessEnv): Promise<BenchDatabase> {
  const serverUrl = env.TEST_DATABASE_URL?.trim() || DEFAULT_SERVER_URL;
  const name = `gta_bench_scale_${process.pid}_${Date.now()}`;
  await onServer(serverUrl, async (client) => {
    await client.query(`create database ${name}`);
  });
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    // `with (force)` ends the sessions of API processes that did not close their pools in time.
    async drop() {
      await onServer(serverUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}
