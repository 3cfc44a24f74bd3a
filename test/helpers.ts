import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { type Kysely, sql } from 'kysely';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { type Container, type ContainerOverrides, createContainer } from '../src/container.ts';
import type { Database } from '../src/db/schema.ts';
import type { AdapterFactory, Channel, ProviderName } from '../src/generators/adapters/index.ts';
import type { Generator } from '../src/generators/index.ts';
import { type OpenApiDocument, operatorDocument, publicDocument } from '../src/http/index.ts';
import type { RequestLimits } from '../src/http/types.ts';
import { type Clock, moscowDay, systemClock } from '../src/lib/clock.ts';
import type { InputResolver } from '../src/libraries/index.ts';
import type { PeoplePort } from '../src/web/index.ts';
import { freshPostgres } from './databases.ts';
import { ResponseValidator } from './openapi-validator.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

/**
 * The environment of another process of the service on `t`'s database, storage and data folder (a second
 * API process, a worker): the operator token, no render threads, warnings only. Add PORT, WORKER and the rest.
 */
export function sharedProcessEnv(t: Pick<TestApp, 'container' | 'dir'>): Record<string, string> {
  return {
    DATABASE_URL: t.container.config.databaseUrl,
    STORAGE_URL: t.container.config.storageUrl,
    DATA_DIR: t.dir,
    ADMIN_TOKEN,
    RENDER_THREADS: '0',
    LOG_LEVEL: 'warn',
  };
}

export interface TestApp {
  app: FastifyInstance;
  container: Container;
  clock: Clock;
  dir: string;
  /** Operator call with the admin token. */
  admin(
    method: 'GET' | 'POST' | 'DELETE' | 'PATCH',
    url: string,
    payload?: unknown,
  ): Promise<LightMyRequestResponse>;
  /** A fresh account with a balance and one key. */
  account(options?: {
    balanceMinor?: number;
    models?: string[];
    dailyLimitMinor?: number;
  }): Promise<TestAccount>;
  /** Request with an API key. */
  call(
    key: string,
    method: 'GET' | 'POST' | 'DELETE' | 'PATCH' | 'PUT',
    url: string,
    payload?: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface TestAccount {
  id: string;
  key: string;
  keyId: string;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** The request limits; null: the configuration's (RATE_LIMIT_*). (Default: too high to reach) */
  limits?: RequestLimits | null;
  clock?: Clock;
  generator?: Generator;
  /** Channels instead of GENERATORS_FILE's, served by `adapters` (in-memory test adapters). */
  channels?: readonly Channel[];
  adapters?: Partial<Record<ProviderName, AdapterFactory>>;
  /** Smaller limits of the real adapters' upstream calls and output downloads. */
  adapterLimits?: ContainerOverrides['adapterLimits'];
  /** Start the in-process worker. (Default: true) */
  worker?: boolean;
  /** Probe of the files library bodies link. (Default: the real download and probe) */
  resolveLibraryInput?: InputResolver;
  /** Where log lines go (with `env: { LOG_LEVEL: 'info' }`). (Default: standard output) */
  logDestination?: Writable;
  /** People's accounts for the dashboard, made from the container (the dashboard is served when given). */
  people?: (container: Container) => PeoplePort;
}

/**
 * The backends under test. Unset: SQLite and local files in a temporary folder. `TEST_DATABASE_URL`
 * (a PostgreSQL server URL) gives every test app a fresh database of its own; `TEST_STORAGE_URL`
 * (`s3://bucket?…`) a fresh key prefix in that bucket. `.ci/run` runs the suite both ways.
 */
async function backends(): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  const suffix = randomUUID().replaceAll('-', '').slice(0, 16);
  const env: Record<string, string> = {};
  let drop = async (): Promise<void> => {};
  const server = process.env.TEST_DATABASE_URL;
  if (server) {
    const fresh = await freshPostgres(server, 'gta_test');
    env.DATABASE_URL = fresh.url;
    drop = fresh.drop;
  }
  const storage = process.env.TEST_STORAGE_URL;
  if (storage) {
    const url = new URL(storage);
    url.pathname = `${url.pathname.replace(/\/$/, '')}/${suffix}`;
    env.STORAGE_URL = url.toString();
  }
  return { env, drop };
}

/** Builds the real app on fresh backends (no port). */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-test-'));
  const chosen = await backends();
  const config = loadConfig({
    ...chosen.env,
    DATA_DIR: dir,
    ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    SIM_SPEED: '1000',
    PUBLIC_BASE_URL: 'http://api.test',
    ...options.env,
  });
  const clock = options.clock ?? systemClock;
  const container = await createContainer(config, {
    clock,
    worker: { pollIntervalMs: 50 },
    ...(options.generator ? { generator: options.generator } : {}),
    ...(options.channels ? { channels: options.channels } : {}),
    ...(options.adapters ? { adapters: options.adapters } : {}),
    ...(options.adapterLimits ? { adapterLimits: options.adapterLimits } : {}),
    ...(options.resolveLibraryInput ? { resolveLibraryInput: options.resolveLibraryInput } : {}),
    ...(options.logDestination ? { logDestination: options.logDestination } : {}),
  });
  if (options.worker !== false) container.worker.start();
  const app = await buildApp({
    ...container,
    ...(options.limits === null
      ? {}
      : {
          limits: options.limits ?? { accountRequests: 10_000, wrongKeyAttempts: 10_000, windowSeconds: 60 },
        }),
    ...(options.people ? { people: options.people(container) } : {}),
  });
  validateResponses(app);
  const admin: TestApp['admin'] = (method, url, payload) =>
    app.inject({
      method,
      url,
      payload: payload as object,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
  const call: TestApp['call'] = (key, method, url, payload, headers = {}) =>
    app.inject({
      method,
      url,
      payload: payload as object,
      headers: { authorization: `Bearer ${key}`, ...headers },
    });
  return {
    app,
    container,
    clock,
    dir,
    admin,
    call,
    async account(opts = {}) {
      const created = await admin('POST', '/admin/v1/accounts', { name: 'Test' });
      assert.equal(created.statusCode, 201, created.body);
      const id = created.json().id as string;
      if (opts.balanceMinor) {
        const credit = await admin('POST', `/admin/v1/accounts/${id}/credits`, {
          amount_minor: opts.balanceMinor,
          reference: `start-${id}`,
        });
        assert.equal(credit.statusCode, 201, credit.body);
      }
      const key = await admin('POST', `/admin/v1/accounts/${id}/keys`, {
        ...(opts.models ? { models: opts.models } : {}),
        ...(opts.dailyLimitMinor === undefined ? {} : { daily_limit_minor: opts.dailyLimitMinor }),
      });
      assert.equal(key.statusCode, 201, key.body);
      return { id, key: key.json().key as string, keyId: key.json().id as string };
    },
    async close() {
      // The worker stops first, so the check reads a still ledger; the rest is torn down even when the
      // check fails, so a failing test can never leave handles that keep its file's process alive.
      try {
        await container.worker.stop();
        await assertLedgerInvariant(container);
      } finally {
        await app.close();
        await container.close();
        await chosen.drop();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Every answer injected into the app (through `call`, `admin` or `app.inject`) is checked against the
 * public and the operator OpenAPI documents (test/openapi-validator.ts); a violation fails the request's
 * test. The documents are cut once the app is ready, at the first answer.
 */
function validateResponses(app: FastifyInstance): void {
  let validator: ResponseValidator | undefined;
  const inject = app.inject.bind(app);
  const checked = async (options: InjectOptions | string): Promise<LightMyRequestResponse> => {
    const res = await inject(options);
    if (!validator) {
      const whole = app.swagger() as unknown as OpenApiDocument;
      validator = new ResponseValidator({ public: publicDocument(whole), operator: operatorDocument(whole) });
    }
    const asked = typeof options === 'string' ? { url: options } : options;
    const url = typeof asked.url === 'string' ? asked.url : typeof asked.path === 'string' ? asked.path : '/';
    const violation = validator.check({
      method: asked.method ?? 'GET',
      url,
      status: res.statusCode,
      contentType: res.headers['content-type'] as string | undefined,
      body: res.body,
      headers: Object.keys(res.headers),
    });
    if (violation) throw new assert.AssertionError({ message: `OpenAPI document violated: ${violation}` });
    return res;
  };
  // Only the promise form is checked; the chained and callback forms of inject are passed through.
  app.inject = ((options?: InjectOptions | string, callback?: unknown) =>
    options === undefined || callback !== undefined
      ? (inject as (...args: unknown[]) => unknown)(options, callback)
      : checked(options)) as FastifyInstance['inject'];
}

/**
 * For every account: the balance counters equal the sums of its ledger entries and of its transfers,
 * and available = credited − captured − held (issue 3: checked after every test); and the kept
 * active-task counts equal its unfinished tasks of each model (migration 0018).
 */
export async function assertLedgerInvariant(container: Container): Promise<void> {
  // One snapshot (SQLite's transactions always are; PostgreSQL's need repeatable read): read separately,
  // a capture committed between two reads would look like a broken ledger.
  await container.db.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (db) => {
      await checkLedger(db);
      await checkActiveCounts(db);
      await checkKeySpend(db);
    });
}

/** The kept spend of each key and Moscow day equals its pending and posted transfers of that day (0024). */
async function checkKeySpend(db: Kysely<Database>): Promise<void> {
  const transfers = await db
    .selectFrom('transfers')
    .select(['key_id', 'amount_minor', 'created_at'])
    .where('key_id', 'is not', null)
    .where('status', 'in', ['pending', 'posted'])
    .execute();
  const summed: Record<string, number> = {};
  for (const t of transfers) {
    const day = `${t.key_id} ${moscowDay(new Date(t.created_at)).start.toISOString()}`;
    summed[day] = (summed[day] ?? 0) + Number(t.amount_minor);
  }
  const kept = await db.selectFrom('key_day_spend').selectAll().where('spent_minor', '<>', 0).execute();
  assert.deepEqual(
    Object.fromEntries(kept.map((r) => [`${r.key_id} ${r.day_start}`, Number(r.spent_minor)])),
    summed,
    'key_day_spend equals the pending and posted transfers of each key and day',
  );
}

async function checkActiveCounts(db: Kysely<Database>): Promise<void> {
  const counted = await db
    .selectFrom('tasks')
    .select((eb) => ['account_id', 'model', eb.fn.countAll<number | string>().as('n')])
    .where('status', 'in', ['queued', 'running'])
    .groupBy(['account_id', 'model'])
    .execute();
  const kept = await db.selectFrom('active_task_counts').selectAll().where('active', '<>', 0).execute();
  const key = (r: { account_id: string; model: string }): string => `${r.account_id} ${r.model}`;
  assert.deepEqual(
    Object.fromEntries(kept.map((r) => [key(r), Number(r.active)])),
    Object.fromEntries(counted.map((r) => [key(r), Number(r.n)])),
    'active_task_counts equal the unfinished tasks',
  );
}

async function checkLedger(db: Kysely<Database>): Promise<void> {
  const accounts = await db.selectFrom('accounts').selectAll().execute();
  for (const account of accounts) {
    const entries = await db
      .selectFrom('ledger_entries')
      .selectAll()
      .where('account_id', '=', account.id)
      .execute();
    const sum = (type: string): number =>
      entries.filter((e) => e.type === type).reduce((total, e) => total + Number(e.amount_minor), 0);
    const transfers = await db
      .selectFrom('transfers')
      .selectAll()
      .where('account_id', '=', account.id)
      .execute();
    const transferSum = (status: string): number =>
      transfers.filter((t) => t.status === status).reduce((total, t) => total + Number(t.amount_minor), 0);
    assert.equal(Number(account.credited_minor), sum('credit'), `credited of ${account.id}`);
    assert.equal(Number(account.captured_minor), sum('capture'), `captured of ${account.id}`);
    assert.equal(
      Number(account.held_minor),
      sum('hold') - sum('capture') - sum('void'),
      `held of ${account.id}`,
    );
    assert.equal(Number(account.held_minor), transferSum('pending'), `pending transfers of ${account.id}`);
    assert.equal(Number(account.captured_minor), transferSum('posted'), `posted transfers of ${account.id}`);
    assert.ok(
      Number(account.credited_minor) - Number(account.captured_minor) - Number(account.held_minor) >= 0,
    );
  }
}

/** The error object of a refusal, with its status. */
export function errorOf(res: LightMyRequestResponse): { status: number; code: string; message: string } {
  const body = res.json() as { error?: { code?: string; message?: string } };
  assert.ok(body.error, `expected an error body, got ${res.body}`);
  return { status: res.statusCode, code: body.error.code ?? '', message: body.error.message ?? '' };
}

export function expectError(res: LightMyRequestResponse, status: number, code: string): void {
  const error = errorOf(res);
  assert.deepEqual({ status: error.status, code: error.code }, { status, code }, res.body);
  assert.match(String(res.headers['content-type']), /application\/json/);
  assert.ok(error.message.length > 0);
}

const FINAL = ['succeeded', 'failed', 'canceled'];

/** Polls a task until it is final (or the time runs out) and returns its last view. */
export async function waitForFinal(
  t: TestApp,
  key: string,
  taskId: string,
  timeoutMs = 20_000,
): Promise<Record<string, unknown> & { status: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.call(key, 'GET', `/v1/tasks/${taskId}`);
    const task = res.json();
    if (FINAL.includes(task.status) || Date.now() > deadline) return task;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Balances of an account as the operator sees them. */
export async function balances(
  t: TestApp,
  accountId: string,
): Promise<{ balance_minor: number; held_minor: number; available_minor: number }> {
  return (await t.admin('GET', `/admin/v1/accounts/${accountId}`)).json();
}

/**
 * Resolves once a statement of another connection waits for a row lock (PostgreSQL), so a race test knows
 * its second actor is blocked behind the first; SQLite has one writer, so a short pause stands for it.
 */
export async function someoneWaitsForALock(t: TestApp): Promise<void> {
  const { db, dialect } = t.container.db;
  if (dialect.name !== 'postgres') {
    await new Promise((resolve) => setTimeout(resolve, 100));
    return;
  }
  for (;;) {
    const { rows } = await sql<{ n: string }>`
      select count(*) as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(db);
    if (Number(rows[0]?.n ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
