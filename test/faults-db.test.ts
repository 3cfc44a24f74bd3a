/**
 * PostgreSQL going away and misbehaving (issue 10: LISTEN after an outage, timeouts on the pool). SQLite
 * cannot go away, so these run only when TEST_DATABASE_URL names a PostgreSQL server.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { createDb } from '../src/db/index.ts';
import { FaultProxy, targetOf } from './fault-proxy.ts';
import { startTestApp, waitForFinal } from './helpers.ts';

const SERVER = process.env.TEST_DATABASE_URL;

/** How long the database is away in the outage test (issue 10, fault injection). */
const OUTAGE_MS = 10_000;
/** A request still unanswered after this long counts as hanging. */
const HANG_MS = 20_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `promise`'s value, or null when it has not settled within `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until `check` holds, polling; false when `timeoutMs` passes first. */
async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(50);
  }
  return check();
}

describe('PostgreSQL faults', { skip: !SERVER && 'needs TEST_DATABASE_URL' }, () => {
  let url = '';
  const name = `gta_faults_${randomUUID().replaceAll('-', '').slice(0, 16)}`;

  before(async () => {
    const admin = new pg.Client({ connectionString: SERVER });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const parsed = new URL(SERVER!);
    parsed.pathname = `/${name}`;
    url = parsed.toString();
  });

  after(async () => {
    const admin = new pg.Client({ connectionString: SERVER });
    await admin.connect();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  });

  test('[10.10] LISTEN comes back after an outage longer than a second', async () => {
    const proxy = await FaultProxy.start(targetOf(url));
    const db = createDb(proxy.rewrite(url));
    let notified = 0;
    const stop = await db.listen('gta_fault_test', () => {
      notified += 1;
    });
    const notify = async (): Promise<void> => {
      const direct = new pg.Client({ connectionString: url });
      await direct.connect();
      await direct.query(`notify gta_fault_test`);
      await direct.end();
    };
    try {
      await notify();
      assert.ok(await eventually(() => notified > 0, 5_000), 'LISTEN works before the outage');
      await proxy.cut('refuse');
      await sleep(3_000);
      await proxy.restore();
      // Notifications sent after the server is back reach the listener again.
      const before = notified;
      assert.ok(
        await eventually(async () => {
          await notify();
          return notified > before;
        }, 15_000),
        'LISTEN was not restored after the outage',
      );
    } finally {
      await stop();
      await db.close();
      await proxy.close();
    }
  });

  test('[10.13] the pool bounds statements, idle transactions and connecting', async () => {
    const db = createDb(url);
    try {
      const settings = await sql<{ statement: string; idle: string }>`select
          current_setting('statement_timeout') as statement,
          current_setting('idle_in_transaction_session_timeout') as idle`.execute(db.db);
      const row = settings.rows[0]!;
      assert.notEqual(row.statement, '0', 'statement_timeout is set');
      assert.notEqual(row.idle, '0', 'idle_in_transaction_session_timeout is set');
    } finally {
      await db.close();
    }

    // A stuck statement is ended by the server; the pool's connection stays usable.
    const short = createDb(url, { statementTimeoutMs: 300 });
    try {
      await assert.rejects(sql`select pg_sleep(30)`.execute(short.db), { code: '57014' });
      const ok = await sql<{ one: number }>`select 1 as one`.execute(short.db);
      assert.equal(ok.rows[0]?.one, 1);
    } finally {
      await short.close();
    }

    // A server that accepts but never answers: connecting gives up instead of waiting forever.
    const proxy = await FaultProxy.start(targetOf(url));
    await proxy.cut('blackhole');
    const hung = createDb(proxy.rewrite(url), { connectTimeoutMs: 500 });
    try {
      await assert.rejects(sql`select 1`.execute(hung.db));
    } finally {
      await hung.close();
      await proxy.close();
    }
  });

  test('[10 faults] the database away for 10 s: errors meanwhile, then every task final and the ledger whole', async () => {
    const proxy = await FaultProxy.start(targetOf(url));
    // Runs of a few seconds, so some are under way when the database goes; a short lease, so a run whose
    // worker lost track of it during the outage is taken over within the test.
    const t = await startTestApp({
      env: { DATABASE_URL: proxy.rewrite(url), SIM_SPEED: '40', JOB_LEASE: '3s' },
    });
    try {
      const { key } = await t.account({ balanceMinor: 10_000_000 });
      const create = (prompt: string) =>
        t.call(key, 'POST', '/v1/tasks', {
          model: 'model-3d',
          settings: { task_type: 'text_to_model', prompt },
        });
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await create(`before the outage ${i}`);
        assert.equal(res.statusCode, 202, res.body);
        ids.push(res.json().id);
      }

      await proxy.cut('refuse');
      const outageEnds = Date.now() + OUTAGE_MS;
      let errorsSeen = 0;
      while (Date.now() < outageEnds) {
        const answers = await Promise.all(
          [
            create('during the outage'),
            t.call(key, 'GET', `/v1/tasks/${ids[0]}`),
            t.call(key, 'GET', '/v1/me'),
          ].map((call) => within(call, HANG_MS)),
        );
        for (const res of answers) {
          assert.ok(res, 'a request hung while the database was away');
          if (res.statusCode < 500) continue;
          // The usual error shape, never a bare 500 or a driver message.
          assert.ok([500, 503].includes(res.statusCode), res.body);
          const body = res.json() as { error?: { code?: unknown; message?: unknown } };
          assert.equal(typeof body.error?.code, 'string', res.body);
          assert.equal(typeof body.error?.message, 'string', res.body);
          errorsSeen += 1;
        }
        await sleep(500);
      }
      assert.ok(errorsSeen > 0, 'the outage was seen');
      await proxy.restore();

      // The API recovers, and every task, those cut off mid-run included, ends final.
      assert.ok(
        await eventually(async () => (await t.call(key, 'GET', '/v1/me')).statusCode === 200, 15_000),
        'the API did not recover',
      );
      const after = await create('after the outage');
      assert.equal(after.statusCode, 202, after.body);
      ids.push(after.json().id);
      for (const id of ids) {
        const task = await waitForFinal(t, key, id, 30_000);
        assert.ok(['succeeded', 'failed'].includes(task.status), `task ${id} is ${task.status}`);
      }
      const last = await waitForFinal(t, key, after.json().id);
      assert.equal(last.status, 'succeeded');
    } finally {
      // close() also checks the ledger of every account.
      await t.close();
      await proxy.close();
    }
  });
});
