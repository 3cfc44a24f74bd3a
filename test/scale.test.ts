/**
 * Scale-out on one PostgreSQL (issue: two API processes, two workers). Runs only when TEST_DATABASE_URL
 * names a PostgreSQL server (`.ci/run` starts one); skipped on the embedded SQLite run.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { createDb, type Db } from '../src/db/index.ts';
import { exited, freePort, type Server, startServer, startWorker } from './processes.ts';

const SERVER = process.env.TEST_DATABASE_URL;
const ADMIN = 'scale-admin-token-0123456789';
const ACCOUNTS = 20;
const TASKS_PER_ACCOUNT = 10;

describe('two API processes and two workers on one PostgreSQL', {
  skip: !SERVER && 'needs TEST_DATABASE_URL',
}, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-scale-'));
  const name = `gta_scale_${Date.now().toString(36)}`;
  const callLog = path.join(dir, 'calls.log');
  const apis: Server[] = [];
  const workers: Server[] = [];
  let db: Db;
  let env: Record<string, string> = {};

  before(async () => {
    const admin = new pg.Client({ connectionString: SERVER });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(SERVER!);
    url.pathname = `/${name}`;
    env = {
      DATABASE_URL: url.toString(),
      DATA_DIR: dir,
      STORAGE_URL: process.env.TEST_STORAGE_URL?.replace('?', `/${name}?`) ?? `file://${dir}/files`,
      ADMIN_TOKEN: ADMIN,
      SIM_SPEED: '500',
      // Long enough that a CPU-starved worker (2 cores, four processes) keeps its leases; short enough
      // that the killed worker's tasks move on within the test.
      JOB_LEASE: '10s',
      LOG_LEVEL: 'warn',
      SIM_CALL_LOG: callLog,
    };
    // The first API process migrates; the rest start on the migrated database.
    apis.push(await startServer({ ...env, PORT: String(await freePort()), WORKER: 'off' }));
    apis.push(await startServer({ ...env, PORT: String(await freePort()), WORKER: 'off' }));
    workers.push(await startWorker(env), await startWorker(env));
    db = createDb(url.toString());
  });

  after(async () => {
    for (const p of [...apis, ...workers]) {
      if (p.child.exitCode === null) p.child.kill('SIGTERM');
      const forced = setTimeout(() => p.child.kill('SIGKILL'), 5_000);
      await exited(p.child);
      clearTimeout(forced);
    }
    await db?.close();
    const admin = new pg.Client({ connectionString: SERVER });
    await admin.connect();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const adminCall = async (
    api: Server,
    method: string,
    url: string,
    body?: unknown,
  ): Promise<Record<string, unknown>> => {
    const res = await fetch(`${api.base}${url}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    assert.ok(res.status < 300, `${method} ${url}: ${res.status}`);
    return (await res.json()) as Record<string, unknown>;
  };

  async function makeAccounts(count: number): Promise<Array<{ id: string; key: string }>> {
    const made = [];
    for (let i = 0; i < count; i++) {
      const api = apis[i % 2]!;
      const account = await adminCall(api, 'POST', '/admin/v1/accounts', { name: `load ${i}` });
      await adminCall(api, 'POST', `/admin/v1/accounts/${String(account.id)}/credits`, {
        amount_minor: 1_000_000,
        reference: 'start',
      });
      const key = await adminCall(api, 'POST', `/admin/v1/accounts/${String(account.id)}/keys`, {});
      made.push({ id: account.id as string, key: key.key as string });
    }
    return made;
  }

  async function createTasks(
    accounts: Array<{ key: string }>,
    perAccount: number,
    prompt: string,
  ): Promise<string[]> {
    const requests = accounts.flatMap((account, a) =>
      Array.from({ length: perAccount }, async (_, i) => {
        const api = apis[(a + i) % 2]!;
        const res = await fetch(`${api.base}/v1/tasks`, {
          method: 'POST',
          headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'model-3d',
            settings: { task_type: 'text_to_model', prompt: `${prompt} ${a}-${i}` },
          }),
        });
        const body = (await res.json()) as { id: string };
        assert.equal(res.status, 202, JSON.stringify(body));
        return body.id;
      }),
    );
    return Promise.all(requests);
  }

  /** Most unfinished tasks of one model any account has right now. */
  async function maxActivePerAccount(): Promise<number> {
    const rows = await db.db
      .selectFrom('tasks')
      .select(['account_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('status', 'in', ['queued', 'running'])
      .groupBy(['account_id', 'model'])
      .execute();
    return Math.max(0, ...rows.map((r) => Number(r.n)));
  }

  async function failures(ids: string[]): Promise<string> {
    const rows = await db.db
      .selectFrom('tasks')
      .select(['error_code', 'error_message'])
      .where('id', 'in', ids)
      .where('status', '=', 'failed')
      .execute();
    return JSON.stringify(rows.slice(0, 5));
  }

  async function waitAllFinal(ids: string[], onTick?: () => Promise<void>): Promise<Map<string, string>> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      await onTick?.();
      const rows = await db.db.selectFrom('tasks').select(['id', 'status']).where('id', 'in', ids).execute();
      const statuses = new Map(rows.map((r) => [r.id, r.status]));
      if ([...statuses.values()].every((s) => s === 'succeeded' || s === 'failed' || s === 'canceled'))
        return statuses;
      if (Date.now() > deadline)
        throw new Error(
          `tasks still unfinished: ${[...statuses.values()].filter((s) => s === 'queued' || s === 'running').length}`,
        );
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async function assertMoneyWhole(): Promise<void> {
    const accounts = await db.db.selectFrom('accounts').selectAll().execute();
    for (const a of accounts) {
      const entries = await db.db
        .selectFrom('ledger_entries')
        .selectAll()
        .where('account_id', '=', a.id)
        .execute();
      const sum = (type: string): number =>
        entries.filter((e) => e.type === type).reduce((t, e) => t + Number(e.amount_minor), 0);
      assert.equal(Number(a.credited_minor), sum('credit'));
      assert.equal(Number(a.captured_minor), sum('capture'));
      assert.equal(Number(a.held_minor), sum('hold') - sum('capture') - sum('void'));
      assert.equal(Number(a.held_minor), 0, 'nothing stays held once every task is final');
    }
  }

  function runsPerTask(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const id of fs.readFileSync(callLog, 'utf8').split('\n').filter(Boolean))
      counts.set(id, (counts.get(id) ?? 0) + 1);
    return counts;
  }

  test('200 tasks from 20 accounts through both APIs: all final, none run twice, limits and ledger hold', async () => {
    const accounts = await makeAccounts(ACCOUNTS);
    const ids = await createTasks(accounts, TASKS_PER_ACCOUNT, 'a chair');
    assert.equal(new Set(ids).size, ACCOUNTS * TASKS_PER_ACCOUNT);
    let peak = 0;
    const statuses = await waitAllFinal(ids, async () => {
      peak = Math.max(peak, await maxActivePerAccount());
    });
    assert.deepEqual(new Set(statuses.values()), new Set(['succeeded']), await failures(ids));
    assert.ok(peak <= 10, `an account had ${peak} unfinished tasks (limit 10)`);
    const runs = runsPerTask();
    for (const id of ids) assert.equal(runs.get(id), 1, `task ${id} ran ${runs.get(id) ?? 0} times`);
    await assertMoneyWhole();
  });

  test('kill -9 of one worker mid-run: the other finishes its tasks', async () => {
    const accounts = await makeAccounts(4);
    const ids = await createTasks(accounts, 10, '[sim:slow] a table');
    // Wait until the first worker holds some of them, then kill it without warning.
    const victim = workers[0]!;
    for (let i = 0; i < 200; i++) {
      const running = await db.db
        .selectFrom('jobs')
        .select('locked_by')
        .where('locked_by', 'is not', null)
        .execute();
      if (running.length >= 10) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    victim.child.kill('SIGKILL');
    await exited(victim.child);
    const statuses = await waitAllFinal(ids);
    assert.deepEqual(new Set(statuses.values()), new Set(['succeeded']));
    await assertMoneyWhole();
  });

  test('the request limit of an account holds across both API processes (shared PostgreSQL store)', async () => {
    const [account] = await makeAccounts(1);
    const codes = await Promise.all(
      Array.from({ length: 130 }, async (_, i) => {
        const res = await fetch(`${apis[i % 2]!.base}/v1/me`, {
          headers: { authorization: `Bearer ${account!.key}` },
        });
        await res.arrayBuffer();
        return res.status;
      }),
    );
    assert.equal(codes.filter((c) => c === 200).length, 120);
    assert.equal(codes.filter((c) => c === 429).length, 10);
  });
});
