import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_PREPARED_PER_CONNECTION, preparingPool } from './pg-statements.ts';

// PostgreSQL only (TEST_DATABASE_URL): one pooled connection, so every call below runs on it.
const url = process.env.TEST_DATABASE_URL;
const skip = !url;

async function withPool(fn: (pool: ReturnType<typeof preparingPool>, table: string) => Promise<void>) {
  const pool = preparingPool({ connectionString: url, max: 1 });
  const table = `gta_prepared_${process.pid}_${Date.now()}`;
  await pool.query(`create table ${table} (id int primary key, name text)`);
  try {
    await pool.query(`insert into ${table} values (1, 'one'), (2, 'two')`);
    await fn(pool, table);
  } finally {
    await pool.query(`drop table if exists ${table}`);
    await pool.end();
  }
}

const preparedTexts = async (pool: ReturnType<typeof preparingPool>): Promise<string[]> =>
  (await pool.query<{ statement: string }>('select statement from pg_prepared_statements')).rows.map(
    (r) => r.statement,
  );

test('a statement with parameters is prepared once per connection', { skip }, async () => {
  await withPool(async (pool, table) => {
    const text = `select name from ${table} where id = $1`;
    assert.deepEqual((await pool.query(text, [1])).rows, [{ name: 'one' }]);
    assert.deepEqual((await pool.query(text, [2])).rows, [{ name: 'two' }]);
    const prepared = await preparedTexts(pool);
    assert.equal(prepared.filter((s) => s === text).length, 1, 'prepared once, used twice');
    // Without parameters (BEGIN, COMMIT, DDL) nothing is prepared.
    await pool.query(`select count(*) from ${table}`, []);
    assert.equal((await preparedTexts(pool)).length, prepared.length);
  });
});

test('a prepared select * survives its table gaining a column', { skip }, async () => {
  await withPool(async (pool, table) => {
    const text = `select * from ${table} where id = $1`;
    assert.deepEqual((await pool.query(text, [1])).rows, [{ id: 1, name: 'one' }]);
    await pool.query(`alter table ${table} add column extra text default 'x'`);
    // PostgreSQL refuses the old plan once; the next call prepares the statement afresh.
    await assert.rejects(pool.query(text, [1]), (error: { code?: string }) => error.code === '0A000');
    assert.deepEqual((await pool.query(text, [1])).rows, [{ id: 1, name: 'one', extra: 'x' }]);
  });
});

test('a connection keeps a bounded number of statements prepared', { skip }, async () => {
  await withPool(async (pool, table) => {
    const before = (await preparedTexts(pool)).length;
    for (let i = 0; i < MAX_PREPARED_PER_CONNECTION + 20; i++)
      await pool.query(`select ${i} as n, name from ${table} where id = $1`, [1]);
    const after = (await preparedTexts(pool)).length;
    assert.equal(after - before, MAX_PREPARED_PER_CONNECTION - before);
    // Past the bound, statements still run, unnamed.
    const { rows } = await pool.query(`select 9999 as n from ${table} where id = $1`, [2]);
    assert.deepEqual(rows, [{ n: 9999 }]);
  });
});
