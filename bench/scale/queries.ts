import { createHash } from 'node:crypto';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { uuidv7 } from '../../src/lib/index.ts';
import type { FilledDatabase } from './fill.ts';

/**
 * The hot queries of polling, listing and creation, timed one by one straight on the database (no HTTP,
 * no Kysely), with the plan each engine picks. On a shared machine these per-query figures are steadier
 * than request rates, and they say which query, if any, grows with the table.
 */

export interface QueryTiming {
  name: string;
  /** Mean time of one execution, microseconds. */
  micros: number;
  /** The engine's plan, on one line. */
  plan: string;
}

interface HotQuery {
  name: string;
  sql: string;
  /** The statement on PostgreSQL where the service asks it otherwise there. */
  pgSql?: string;
  params: unknown[];
}

function hotQueries(filled: FilledDatabase, accountId: string, keyHash: string): HotQuery[] {
  const ids = filled.heavy.taskIds;
  const deep = ids[Math.floor(ids.length * 0.8)] ?? ids[0] ?? '';
  const polled = ids[Math.floor(ids.length / 2)] ?? '';
  return [
    {
      name: 'key lookup (every request)',
      sql: 'select * from api_keys where key_hash = $1',
      params: [keyHash],
    },
    {
      name: 'task by id (poll)',
      sql: 'select * from tasks where id = $1 and account_id = $2',
      params: [polled, accountId],
    },
    {
      name: 'list page, 80 % deep (list)',
      // As the service asks it (tasks/task-reader.ts): on PostgreSQL the bound also as a row comparison.
      sql: 'select * from tasks where account_id = $1 and id < $2 order by id desc limit 21',
      pgSql:
        'select * from tasks where account_id = $1 and id < $2 and (account_id, id) < ($1, $2) order by id desc limit 21',
      params: [accountId, deep],
    },
    {
      name: 'active-task count (create)',
      sql: 'select active from active_task_counts where account_id = $1 and model = $2',
      params: [accountId, 'model-3d'],
    },
    {
      name: 'idempotency lookup (create)',
      sql: 'select * from idempotency_keys where account_id = $1 and key = $2',
      params: [accountId, 'bench-missing'],
    },
    { name: 'balances (create)', sql: 'select * from accounts where id = $1', params: [accountId] },
  ];
}

const ROUNDS = 2000;

/** Times the hot queries on the database of `url` for the heavy account of `filled`. */
export async function timeHotQueries(url: string, filled: FilledDatabase): Promise<QueryTiming[]> {
  const keyHash = createHash('sha256').update(filled.heavy.key).digest('hex');
  if (url.startsWith('sqlite:')) {
    const db = new SqliteDatabase(url.slice('sqlite:'.length), { readonly: true });
    try {
      const accountId = (
        db.prepare('select account_id from api_keys where key_hash = ?').get(keyHash) as {
          account_id: string;
        }
      ).account_id;
      return hotQueries(filled, accountId, keyHash).map((q) => {
        const sql = q.sql.replace(/\$\d+/g, '?');
        const statement = db.prepare(sql);
        const plan = (db.prepare(`explain query plan ${sql}`).all(...q.params) as Array<{ detail: string }>)
          .map((r) => r.detail)
          .join('; ');
        for (let i = 0; i < 50; i++) statement.all(...q.params);
        const start = process.hrtime.bigint();
        for (let i = 0; i < ROUNDS; i++) statement.all(...q.params);
        return { name: q.name, micros: Number(process.hrtime.bigint() - start) / 1000 / ROUNDS, plan };
      });
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const row = await client.query<{ account_id: string }>(
      'select account_id from api_keys where key_hash = $1',
      [keyHash],
    );
    const accountId = row.rows[0]?.account_id ?? '';
    const timings: QueryTiming[] = [];
    for (const q of hotQueries(filled, accountId, keyHash)) {
      const sql = q.pgSql ?? q.sql;
      const explained = await client.query<{ 'QUERY PLAN': string }>(`explain ${sql}`, q.params);
      // Costs and literal values left out, so the plan fits a table cell.
      const plan = explained.rows
        .map((r) =>
          r['QUERY PLAN']
            .trim()
            .replace(/\s*\(cost=[^)]*\)/g, '')
            .replace(/'[^']*'::text(\[\])?/g, '?'),
        )
        .join('; ');
      // Named: prepared once per connection, as pg's pool does for the service's repeated statements.
      const query = { name: `hot-${timings.length}`, text: sql, values: q.params };
      for (let i = 0; i < 50; i++) await client.query(query);
      const rounds = ROUNDS / 4;
      const start = process.hrtime.bigint();
      for (let i = 0; i < rounds; i++) await client.query(query);
      timings.push({ name: q.name, micros: Number(process.hrtime.bigint() - start) / 1000 / rounds, plan });
    }
    return timings;
  } finally {
    await client.end();
  }
}

/** The timings of both sizes side by side, as a Markdown table. */
export function queryTable(
  small: readonly QueryTiming[],
  large: readonly QueryTiming[],
  sizes: string[],
): string {
  const lines = [
    `| Hot query (heavy account) | ${sizes[0]}: µs | ${sizes[1]}: µs | ratio | plan at ${sizes[1]} |`,
    '|---|---:|---:|---:|---|',
  ];
  small.forEach((s, i) => {
    const l = large[i];
    if (!l) return;
    lines.push(
      `| ${s.name} | ${s.micros.toFixed(1)} | ${l.micros.toFixed(1)} | ${(l.micros / s.micros).toFixed(2)} | ${l.plan} |`,
    );
  });
  return lines.join('\n');
}

/** One creation's identities. */
interface Creation {
  taskId: string;
  accountId: string;
  at: string;
  entryId: string;
}

/**
 * Five of the writes of one creation (hold, task, job), as `TaskService` makes them, each with its
 * parameters. The upserts of the kept counts (`active_task_counts`, `key_day_spend`) are not among them.
 */
const CREATION_WRITES: ReadonlyArray<{ sql: string; params: (c: Creation) => unknown[] }> = [
  {
    sql: `insert into transfers (id, account_id, key_id, amount_minor, status, created_at, settled_at)
     values ($1, $2, null, 1500, 'pending', $3, null)`,
    params: (c) => [c.taskId, c.accountId, c.at],
  },
  {
    sql: 'update accounts set held_minor = held_minor + 1500 where id = $1',
    params: (c) => [c.accountId],
  },
  {
    sql: `insert into ledger_entries (id, account_id, type, amount_minor, task_id, key_id, reference, created_at)
     values ($1, $2, 'hold', 1500, $3, null, null, $4)`,
    params: (c) => [c.entryId, c.accountId, c.taskId, c.at],
  },
  {
    sql: `insert into tasks (id, account_id, key_id, model, mode, status, settings, inputs, price_minor, currency,
     progress, created_at, files_expired, revision)
     values ($1, $2, null, 'model-3d', 'text_to_model', 'queued', '{}', '{}', 1500, 'RUB', 0, $3, 0, 0)`,
    params: (c) => [c.taskId, c.accountId, c.at],
  },
  {
    sql: `insert into jobs (id, task_id, run_at, locked_by, locked_until, attempts)
     values ($1, $2, $3, null, null, 0)`,
    params: (c) => [`run-task:${c.taskId}`, c.taskId, c.at],
  },
];

const CREATIONS = 300;

/**
 * Times the writes of a creation in their own transaction, rotating over 200 accounts: the part of
 * creation whose cost can grow with the table, since every insert goes into indexes as large as it is.
 * SQLite runs as the service opens it (WAL, synchronous NORMAL). The rows stay (the database is the
 * bench's own).
 */
export async function timeCreationWrites(url: string): Promise<QueryTiming> {
  const name = `creation writes, one transaction (${CREATION_WRITES.length} statements)`;
  const plan = 'inserts into transfers, ledger_entries, tasks, jobs; update of accounts';
  const creationOf = (i: number, accounts: readonly string[]): Creation => {
    const now = Date.now();
    return {
      taskId: uuidv7(now),
      accountId: accounts[i % accounts.length] ?? '',
      at: new Date(now).toISOString(),
      entryId: uuidv7(now),
    };
  };
  if (url.startsWith('sqlite:')) {
    const db = new SqliteDatabase(url.slice('sqlite:'.length));
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      const accounts = (
        db.prepare('select id from accounts order by id limit 200').all() as Array<{ id: string }>
      ).map((r) => r.id);
      const statements = CREATION_WRITES.map((w) => ({
        statement: db.prepare(w.sql.replace(/\$\d/g, '?')),
        params: w.params,
      }));
      const create = db.transaction((c: Creation) => {
        for (const { statement, params } of statements) statement.run(...params(c));
      });
      const start = process.hrtime.bigint();
      for (let i = 0; i < CREATIONS; i++) create(creationOf(i, accounts));
      return { name, micros: Number(process.hrtime.bigint() - start) / 1000 / CREATIONS, plan };
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const accounts = (
      await client.query<{ id: string }>('select id from accounts order by id limit 200')
    ).rows.map((r) => r.id);
    const start = process.hrtime.bigint();
    for (let i = 0; i < CREATIONS; i++) {
      const c = creationOf(i, accounts);
      await client.query('begin');
      for (const [k, w] of CREATION_WRITES.entries()) {
        await client.query({ name: `create-${k}`, text: w.sql, values: w.params(c) });
      }
      await client.query('commit');
    }
    return { name, micros: Number(process.hrtime.bigint() - start) / 1000 / CREATIONS, plan };
  } finally {
    await client.end();
  }
}
