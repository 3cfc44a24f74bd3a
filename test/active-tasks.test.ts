/**
 * The active-task limit (reference: 429 too_many_active; CONTRACT §5) is kept as a count per account and
 * model (`active_task_counts`, migration 0018). These tests hold that count to the tasks themselves:
 * after every move in and out of `queued`/`running`, after creations refused later in their transaction,
 * under concurrent creations and cancels from two API processes, and when the migration fills it from an
 * existing database. Runs on SQLite, and on PostgreSQL when TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { createDb, type Db, migrateToLatest } from '../src/db/index.ts';
import { migrationProvider } from '../src/db/migrations/index.ts';
import { freshPostgres } from './databases.ts';
import { ADMIN_TOKEN, balances, expectError, startTestApp, type TestApp, waitForFinal } from './helpers.ts';
import { exited, freePort, type Server, startServer } from './processes.ts';

const MODEL = 'model-3d';
const PRICE = 1500; // the 3D text minimum
const body = (prompt: string) => ({
  model: MODEL,
  settings: { task_type: 'text_to_model', prompt, texture: false, pbr: false },
});

/** The kept count and the real number of unfinished tasks of an account's model. */
async function counts(db: Db, accountId: string): Promise<{ kept: number; real: number }> {
  const kept = await db.db
    .selectFrom('active_task_counts')
    .select('active')
    .where('account_id', '=', accountId)
    .where('model', '=', MODEL)
    .executeTakeFirst();
  const real = await db.db
    .selectFrom('tasks')
    .select('id')
    .where('account_id', '=', accountId)
    .where('model', '=', MODEL)
    .where('status', 'in', ['queued', 'running'])
    .execute();
  return { kept: Number(kept?.active ?? 0), real: real.length };
}

async function expectCount(db: Db, accountId: string, n: number): Promise<void> {
  assert.deepEqual(await counts(db, accountId), { kept: n, real: n });
}

describe('the active-task count', () => {
  test('follows creation, success, failure, refusal and cancel; a creation refused for money keeps no place', async () => {
    const t = await startTestApp();
    try {
      await t.admin('PATCH', `/admin/v1/models/${MODEL}`, { max_active: 3 });
      const acct = await t.account({ balanceMinor: PRICE * 2 });
      const call = (prompt: string) => t.call(acct.key, 'POST', '/v1/tasks', body(prompt));
      const a = await call('a [sim:slow]');
      const b = await call('b [sim:slow]');
      assert.deepEqual([a.statusCode, b.statusCode], [202, 202]);
      await expectCount(t.container.db, acct.id, 2);
      // Under the limit but out of money: the place it took is rolled back with the hold.
      expectError(await call('c [sim:slow]'), 402, 'insufficient_funds');
      await expectCount(t.container.db, acct.id, 2);
      const credit = await t.admin('POST', `/admin/v1/accounts/${acct.id}/credits`, {
        amount_minor: PRICE * 20,
        reference: `more-${acct.id}`,
      });
      assert.equal(credit.statusCode, 201, credit.body);
      // Had the refused creation kept its place, this would be the fourth and refused.
      const c = await call('c [sim:slow]');
      assert.equal(c.statusCode, 202, c.body);
      await expectCount(t.container.db, acct.id, 3);
      expectError(await call('d'), 429, 'too_many_active');
      await expectCount(t.container.db, acct.id, 3);
      // Cancel gives a place back; success, failure and refusal by the generator too.
      assert.equal((await t.call(acct.key, 'POST', `/v1/tasks/${a.json().id}/cancel`)).statusCode, 200);
      await expectCount(t.container.db, acct.id, 2);
      for (const [prompt, status] of [
        ['e', 'succeeded'],
        ['f [sim:fail]', 'failed'],
        ['g [sim:refuse]', 'failed'],
      ] as const) {
        const created = await call(prompt);
        assert.equal(created.statusCode, 202, created.body);
        assert.equal((await waitForFinal(t, acct.key, created.json().id)).status, status);
        await expectCount(t.container.db, acct.id, 2);
      }
      // A second cancel of a final task changes nothing.
      await t.call(acct.key, 'POST', `/v1/tasks/${a.json().id}/cancel`);
      await expectCount(t.container.db, acct.id, 2);
      for (const r of [b, c]) await t.call(acct.key, 'POST', `/v1/tasks/${r.json().id}/cancel`);
      await expectCount(t.container.db, acct.id, 0);
      assert.equal((await balances(t, acct.id)).held_minor, 0);
    } finally {
      await t.close();
    }
  });

  test('a limit lowered below the unfinished tasks refuses the next, without understating them', async () => {
    const t = await startTestApp({ worker: false });
    try {
      const acct = await t.account({ balanceMinor: PRICE * 10 });
      for (const prompt of ['a', 'b', 'c']) {
        const created = await t.call(acct.key, 'POST', '/v1/tasks', body(prompt));
        assert.equal(created.statusCode, 202, created.body);
      }
      await t.admin('PATCH', `/admin/v1/models/${MODEL}`, { max_active: 1 });
      const refused = await t.call(acct.key, 'POST', '/v1/tasks', body('d'));
      expectError(refused, 429, 'too_many_active');
      // Three are unfinished: the message must not say the account has one.
      const message = refused.json().error.message as string;
      assert.doesNotMatch(message, /have 1 unfinished/);
      assert.match(message, /at most 1 unfinished task of/);
      await expectCount(t.container.db, acct.id, 3);
    } finally {
      await t.close();
    }
  });

  test('two API processes creating and canceling at once never pass the limit', async () => {
    let t: TestApp | null = null;
    const servers: Server[] = [];
    try {
      t = await startTestApp({ worker: false });
      const env = (port: number) => ({
        DATABASE_URL: t?.container.config.databaseUrl ?? '',
        STORAGE_URL: t?.container.config.storageUrl ?? '',
        DATA_DIR: t?.dir ?? '',
        ADMIN_TOKEN,
        PORT: String(port),
        WORKER: 'off',
        LOG_LEVEL: 'warn',
      });
      servers.push(await startServer(env(await freePort())));
      servers.push(await startServer(env(await freePort())));
      const acct = await t.account({ balanceMinor: PRICE * 1000 });
      const create = (n: number, prompt: string) =>
        fetch(`${servers[n % 2]?.base}/v1/tasks`, {
          method: 'POST',
          headers: { authorization: `Bearer ${acct.key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body(prompt)),
        }).then(async (r) => ({ status: r.status, json: (await r.json()) as { id: string } }));
      // The default limit is 10 unfinished tasks per model.
      const first = await Promise.all(Array.from({ length: 30 }, (_, n) => create(n, `race ${n}`)));
      const accepted = first.filter((r) => r.status === 202);
      assert.equal(accepted.length, 10, JSON.stringify(first.map((r) => r.status)));
      assert.ok(first.every((r) => r.status === 202 || r.status === 429));
      await expectCount(t.container.db, acct.id, 10);
      // Five cancels (each sent twice, to both processes) and twenty creations, all at once: five places
      // come free, so exactly five creations get in.
      const cancels = accepted.slice(0, 5).flatMap((r) =>
        [0, 1].map((n) =>
          fetch(`${servers[n]?.base}/v1/tasks/${r.json.id}/cancel`, {
            method: 'POST',
            headers: { authorization: `Bearer ${acct.key}` },
          }).then((x) => x.status),
        ),
      );
      await Promise.all(cancels);
      const second = await Promise.all(Array.from({ length: 20 }, (_, n) => create(n, `again ${n}`)));
      assert.equal(
        second.filter((r) => r.status === 202).length,
        5,
        JSON.stringify(second.map((r) => r.status)),
      );
      await expectCount(t.container.db, acct.id, 10);
      assert.equal((await balances(t, acct.id)).held_minor, PRICE * 10);
    } finally {
      for (const s of servers) s.child.kill('SIGTERM');
      for (const s of servers) await exited(s.child);
      await t?.close();
    }
  });

  test('migration 0018 counts the unfinished tasks a database already has', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-active-'));
    const server = process.env.TEST_DATABASE_URL;
    const pg = server ? await freshPostgres(server, 'gta_active') : null;
    const db = createDb(pg?.url ?? `sqlite:${path.join(dir, 'old.db')}`);
    try {
      const migrator = new Migrator({ db: db.db, provider: migrationProvider });
      const before = await migrator.migrateTo('0017-drop-tasks-account-created');
      assert.equal(before.error, undefined);
      const at = new Date().toISOString();
      const accounts = [randomUUID(), randomUUID()];
      for (const id of accounts) {
        await sql`insert into accounts (id, name, credited_minor, captured_minor, held_minor, created_at)
          values (${id}, 'Old', 0, 0, 0, ${at})`.execute(db.db);
      }
      const statuses = ['queued', 'running', 'running', 'succeeded', 'failed', 'canceled'];
      const models = [MODEL, 'image'];
      for (const [a, account] of accounts.entries()) {
        for (const [m, model] of models.entries()) {
          // Account 0: 3 unfinished of each model; account 1: only its model-3d ones, the images all done.
          for (const status of a === 1 && m === 1 ? ['succeeded'] : statuses) {
            await sql`insert into tasks (id, account_id, key_id, model, mode, status, settings, inputs,
              price_minor, currency, progress, created_at, files_expired, revision)
              values (${randomUUID()}, ${account}, null, ${model}, 'x', ${status}, '{}', '{}', 0, 'RUB', 0,
              ${at}, 0, 0)`.execute(db.db);
          }
        }
      }
      await migrateToLatest(db);
      const rows = await db.db
        .selectFrom('active_task_counts')
        .selectAll()
        .orderBy('account_id')
        .orderBy('model')
        .execute();
      const want = [
        { account_id: accounts[0], model: 'image', active: 3 },
        { account_id: accounts[0], model: MODEL, active: 3 },
        { account_id: accounts[1], model: MODEL, active: 3 },
      ].sort((x, y) => String(x.account_id).localeCompare(String(y.account_id)));
      assert.deepEqual(
        rows.map((r) => ({ ...r, active: Number(r.active) })),
        want,
      );
    } finally {
      await db.close();
      await pg?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
