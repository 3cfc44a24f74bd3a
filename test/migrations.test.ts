/**
 * Migrations are append-only (issue 10.6): a database made by the first release upgrades to the current
 * schema and serves tasks, and no shipped migration file ever changes. Runs on SQLite, and on PostgreSQL
 * when TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { hashKey } from '../src/accounts/keys.ts';
import { createDb, type Db, migrateToLatest } from '../src/db/index.ts';
import { migrations } from '../src/db/migrations/index.ts';
import { spentToday } from '../src/ledger/index.ts';
import { moscowDay } from '../src/lib/index.ts';
import { freshPostgres } from './databases.ts';
import * as shipped0001 from './fixtures/migrations/0001-initial.shipped.ts';
import { startTestApp, waitForFinal } from './helpers.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * SHA-256 of every migration as it shipped. A migration that has run somewhere is history: change the
 * schema with a new numbered file and add its hash here when it ships, never edit an old one.
 */
const SHIPPED_MIGRATIONS: Record<string, string> = {
  'src/db/migrations/0001-initial.ts': '1d240ccc1eaafc602db625e6f0b74b95faf5b155e972630572ba10de7bc226b8',
  'src/db/migrations/0002-libraries.ts': '99b3bdca28cbbb07aadc0a0abc169045c0340820edffe4032578d12dad839f60',
  'src/db/migrations/0003-uploads.ts': '02d8a952dfeb88fbc363fab5732c1cb02ebba7fbe703466e513c7f2088dbe696',
  'src/db/migrations/0004-rate-limits.ts': '2294b1dd8d123ef4b65a4c949cc6d9e1d96e5e66bdeacf0dc38b0d4e4eeb1926',
  'src/db/migrations/0005-first-release-tasks.ts':
    'a265e117469a7e47710ca41ee9307256c9f5a6d54a8f70727d48dbe4e71791fe',
  'src/db/migrations/0006-run-intent.ts': 'cf325c01ef4d0e5bb0c6fea1d082873084c962906a3617c64f321bcf64860a02',
  'src/db/migrations/0007-idempotency-claims.ts':
    'd6903b64b79696c4c4bb7c8975aa657dba6eb752e72694ddc0b6753f8c88ef51',
  'src/db/migrations/0008-uploads-by-account.ts':
    'beaec0cbd85b2bc306e673ba1e2916040a9bbacf7ab9a1e24ddb21253a4fbda5',
  'src/db/migrations/0009-channels.ts': '16fac20f478197dc49b64d12eae3a5f7fa0b5a3b27acad5f5c968ddfe622ac59',
  'src/db/migrations/0010-run-callbacks.ts':
    '73894f88418b91ef627092139d305e6d8cc43202368072c078e3591cc7d3b7a3',
  'src/db/migrations/0011-artifact-upstream-ids.ts':
    '7b332703807dade800472beed3efad997a5476c638241152026eee4ff4f539da',
  'src/db/migrations/0012-webhooks.ts': '8c69374bc8b7557e2ed1e8ddf69aedeb078438597bc9c0ae51e0be8bf5715367',
  'src/db/migrations/0013-people.ts': '39c03413d9ada72919cd6ca8796b4459acf51fb17575257632238b84c613f6a3',
  'src/db/migrations/0014-topups.ts': '6403cca344bec66b42da2c13cff5e9fb7302d8bb467383988e6ef6abcbdd4d11',
  'src/db/migrations/0015-tasks-by-account-id.ts':
    '305e4a757764bf0c495f31a82e65d639d9b0a4acbbc33b68502130830b7014be',
  'src/db/migrations/0016-epochs.ts': '7097e30d7186c8da4cf189f77e7e88f9899d5436c879addef724dedaf37972a3',
  'src/db/migrations/0017-drop-tasks-account-created.ts':
    'f3c88e884c6562f755c554accac9275bcc6d1f1c494332ecafd5092f1d6b534c',
  'src/db/migrations/0018-active-task-counts.ts':
    'b7fc97b1c7727a815d3d681b4a61ebc61984a06442e277242865aef01c093ef2',
  'src/db/migrations/0019-partial-indexes.ts':
    '7ae579fffce243fe909cc9bc6ad03dbdd6349e7d9a3f199481cf6d67fbd0b98b',
  'src/db/migrations/0020-upstream-deletes.ts':
    '6a9aa36f91b7c8079acc5c75e1a58d7d3f043b024f47bbf88588bd5bbe748451',
  'src/db/migrations/0021-jobs-due.ts': '7bddf0660dae7bb9f559ff7ecec6e491a75f89c96bd692a867c5ea51559fa0ab',
  'src/db/migrations/0022-drop-tasks-account-model-status.ts':
    '076a0b2786f6b3301462d431a1d32520902e332f5e0353f9704a7ad416e7961f',
  'src/db/migrations/0023-lent-artifact-links.ts':
    'f542697360754e4cde8a86dda887fffadedb47c0a34ea706f834ecdba41e9708',
  'src/db/migrations/0024-key-day-spend.ts':
    '9e1aa70a2685ef064ccae15e1445e195de07a70a39648d2836a464aa3c6322c4',
  'src/db/migrations/0025-upstream-cancels.ts':
    '1f95d598d6d9528c1138fbd686c8aec6fd88c805cb90b03bbc9abb8c8eada7fd',
  'src/db/migrations/0026-library-uploads.ts':
    'f2f86da82b97770a174669af371dec128c467df22b7839a80f6efca03417d32b',
  'src/db/migrations/0027-task-artifact-views.ts':
    '35bee6d0d1099d8c8d72312a256cbf7595ba8929943e645d31878442e6cbdbba',
  'src/db/migrations/0028-people-email-nfc.ts':
    'ff4de3a79f0e03d88529e49102bb49d038fda2a91862130de37a1d5860c9a795',
  'src/db/migrations/0029-delivery-receivers.ts':
    '0b895e20168420d8f2f31a820faaf1c11844c823b2441aa2a3e9ebdad24e80df',
  'src/db/migrations/0030-ended-task-folders.ts':
    '7ec9d45fb1befcc529377706cebd21b01f30f30baecb2b54aa2b5bd292d23591',
  'src/db/migrations/0031-people-expiry.ts':
    '8cb326b7d6b11b1741164a09968e7fa6011ebc7732e25388e12c82e958e451c4',
  'src/db/migrations/0032-account-names-nfc.ts':
    '8c2405625399c34f328ed309711482d0127c8ca936c936fbefe16e01cd6a790f',
  'src/db/migrations/0033-topups-needs-operator.ts':
    '2bf2506a427d8ec2b9e3037f3d239c7af6aab110ffa42536cde470bb53dfa8a9',
  // 0001 as the first release ran it (with tasks.attempts, without tasks.provider_ref).
  'test/fixtures/migrations/0001-initial.shipped.ts':
    '63e543e86e04d59da530861cd42c4460fa56c9d8824e2d9afacaa99a1ac1164c',
};

/** An empty database of the dialect under test, and how to remove it. */
async function emptyDatabase(dir: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const server = process.env.TEST_DATABASE_URL;
  if (!server) return { url: `sqlite:${path.join(dir, 'old.db')}`, drop: async () => {} };
  return freshPostgres(server, 'gta_old');
}

/**
 * A database of the dialect under test migrated up to, not including, migration `name` (`db`, to fill as
 * that version would have); `upgrade` closes it and runs every migration from `name` on; `drop` closes what
 * is open and removes the database.
 */
async function databaseBefore(name: string): Promise<{
  db: Kysely<unknown>;
  upgrade: () => Promise<Db>;
  drop: () => Promise<void>;
}> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gta-${name}-`));
  const old = await emptyDatabase(dir);
  const before = createDb(old.url);
  const earlier = Object.fromEntries(Object.entries(migrations).filter(([migration]) => migration < name));
  const { error } = await new Migrator({
    db: before.db,
    provider: { getMigrations: async () => earlier },
  }).migrateToLatest();
  assert.equal(error, undefined);
  let open: Db | null = before;
  return {
    db: before.db as Kysely<unknown>,
    async upgrade() {
      await before.close();
      const after = createDb(old.url);
      open = after;
      await migrateToLatest(after);
      return after;
    },
    async drop() {
      await open?.close();
      await old.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Column names and nullability of every service table, comparable across databases. */
async function schemaOf(db: Kysely<unknown>): Promise<Record<string, string[]>> {
  const tables = await db.introspection.getTables();
  const shape: Record<string, string[]> = {};
  for (const table of tables) {
    if (table.name.startsWith('kysely_')) continue;
    shape[table.name] = table.columns
      .map((c) => `${c.name}${c.isNullable ? '?' : ''}${c.hasDefaultValue ? '=' : ''}`)
      .sort();
  }
  return shape;
}

test('[10.6] a database made by the first release upgrades and creates tasks', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-upgrade-'));
  const old = await emptyDatabase(dir);
  const key = `gta_${'A1b2C3d4'.repeat(4)}`;
  const accountId = randomUUID();
  try {
    // The first release: only its own 0001, with an account, a key and a credit in it.
    const first = createDb(old.url);
    const migrator = new Migrator({
      db: first.db,
      provider: { getMigrations: async () => ({ '0001-initial': shipped0001 }) },
    });
    const { error } = await migrator.migrateToLatest();
    assert.equal(error, undefined);
    const at = new Date().toISOString();
    await sql`insert into accounts (id, name, credited_minor, captured_minor, held_minor, created_at)
      values (${accountId}, 'Old', 500000, 0, 0, ${at})`.execute(first.db);
    await sql`insert into ledger_entries (id, account_id, type, amount_minor, task_id, key_id, reference, created_at)
      values (${randomUUID()}, ${accountId}, 'credit', 500000, null, null, 'old-start', ${at})`.execute(
      first.db,
    );
    await sql`insert into api_keys (id, account_id, name, prefix, key_hash, models, daily_limit_minor, created_at, revoked_at)
      values (${randomUUID()}, ${accountId}, 'old', ${key.slice(0, 12)}, ${hashKey(key)}, null, null, ${at}, null)`.execute(
      first.db,
    );
    await first.close();

    // The current code upgrades it on start and serves a task from start to end.
    const t = await startTestApp({ env: { DATABASE_URL: old.url } });
    try {
      const created = await t.call(key, 'POST', '/v1/tasks', {
        model: 'model-3d',
        settings: { task_type: 'text_to_model', prompt: 'an old chair' },
      });
      assert.equal(created.statusCode, 202, created.body);
      const task = await waitForFinal(t, key, created.json().id);
      assert.equal(task.status, 'succeeded', JSON.stringify(task));
    } finally {
      await t.close();
    }

    // And its schema is the one a fresh database gets.
    const fresh = createDb(`sqlite:${path.join(dir, 'fresh.db')}`);
    const upgraded = createDb(old.url);
    try {
      await migrateToLatest(fresh);
      const want = await schemaOf(fresh.db as Kysely<unknown>);
      const got = await schemaOf(upgraded.db as Kysely<unknown>);
      // Dialects differ in how they report defaults, so compare names only across them.
      const names = (shape: Record<string, string[]>): Record<string, string[]> =>
        Object.fromEntries(
          Object.entries(shape).map(([t, cols]) => [t, cols.map((c) => c.replace(/[?=]+$/, ''))]),
        );
      if (process.env.TEST_DATABASE_URL) assert.deepEqual(names(got), names(want));
      else assert.deepEqual(got, want);
    } finally {
      await fresh.close();
      await upgraded.close();
    }
  } finally {
    await old.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('0024: each key’s spend of the Moscow day is filled from that day’s pending and posted transfers', async () => {
  const old = await databaseBefore('0024');
  try {
    const accountId = randomUUID();
    const [keyA, keyB] = [randomUUID(), randomUUID()];
    const today = moscowDay(new Date());
    const inToday = new Date(today.start.getTime() + 1_000).toISOString();
    const yesterday = new Date(today.start.getTime() - 1_000).toISOString();
    await sql`insert into accounts (id, name, credited_minor, captured_minor, held_minor, created_at)
      values (${accountId}, 'Old', 100000, 0, 0, ${yesterday})`.execute(old.db);
    const transfers: Array<[string | null, number, string, string]> = [
      [keyA, 100, 'pending', inToday],
      [keyA, 200, 'posted', inToday],
      [keyA, 400, 'voided', inToday],
      [keyA, 800, 'posted', yesterday],
      [keyB, 1600, 'pending', inToday],
      [null, 3200, 'posted', inToday],
    ];
    for (const [keyId, amount, status, at] of transfers) {
      await sql`insert into transfers (id, account_id, key_id, amount_minor, status, created_at, settled_at)
        values (${randomUUID()}, ${accountId}, ${keyId}, ${amount}, ${status}, ${at}, null)`.execute(old.db);
    }
    const after = await old.upgrade();
    assert.equal(await spentToday(after.db, keyA, today.start), 300);
    assert.equal(await spentToday(after.db, keyB, today.start), 1600);
    const rows = await sql<{ n: number }>`select count(*) as n from key_day_spend`.execute(after.db);
    assert.equal(Number(rows.rows[0]?.n), 2, 'one row per key, today only');
  } finally {
    await old.drop();
  }
});

test('0026: live records hold the live uploads of their account whose links they kept', async () => {
  const old = await databaseBefore('0026');
  try {
    const at = new Date().toISOString();
    const [mine, theirs] = [randomUUID(), randomUUID()];
    for (const account of [mine, theirs]) {
      await sql`insert into accounts (id, name, credited_minor, captured_minor, held_minor, created_at)
        values (${account}, 'Old', 0, 0, 0, ${at})`.execute(old.db);
    }
    const token = (c: string): string => c.repeat(32);
    const uploads: Array<[string, string, string, string | null]> = [
      ['kept', mine, token('a'), null],
      ['swept', mine, token('b'), at],
      ['foreign', theirs, token('c'), null],
      ['unnamed', mine, token('d'), null],
    ];
    for (const [id, account, tok, deletedAt] of uploads) {
      await sql`insert into uploads (id, account_id, token, filename, content_type, format, kind, size_bytes,
          storage_key, created_at, expires_at, deleted_at)
        values (${id}, ${account}, ${tok}, 'a.png', 'image/png', 'png', 'image', 1, ${`uploads/${id}`}, ${at},
          ${at}, ${deletedAt})`.execute(old.db);
    }
    const links = (...tokens: string[]): string[] => tokens.map((t) => `http://api.test/files/${t}/a.png`);
    // An element keeps its links in `private.sources`, a Seedance character inside its upstream id.
    const records: Array<[string, string, object, string | null]> = [
      ['element', mine, { sources: links(token('a'), token('b'), token('c')) }, null],
      ['character', mine, { upstream_id: JSON.stringify({ images: links(token('a')) }) }, null],
      ['deleted', mine, { sources: links(token('a')) }, at],
    ];
    for (const [id, account, priv, deletedAt] of records) {
      await sql`insert into library_records (id, account_id, model, library, name, status, data, private,
          created_at, updated_at, deleted_at)
        values (${id}, ${account}, 'video-elements', 'elements', ${id}, 'ready', '{}', ${JSON.stringify(priv)},
          ${at}, ${at}, ${deletedAt})`.execute(old.db);
    }
    const after = await old.upgrade();
    const held = await after.db
      .selectFrom('library_uploads')
      .select(['record_id', 'upload_id'])
      .orderBy('record_id')
      .execute();
    assert.deepEqual(held, [
      { record_id: 'character', upload_id: 'kept' },
      { record_id: 'element', upload_id: 'kept' },
    ]);
  } finally {
    await old.drop();
  }
});

test('0028: addresses stored before NFC take the stored form, unless it is another person’s', async () => {
  const old = await databaseBefore('0028');
  try {
    const people: Array<[string, string]> = [
      ['decomposed', 'cafe\u0301@example.ru'],
      ['composed', 'am\u00e9lie@example.ru'],
      ['twin', 'ame\u0301lie@example.ru'],
      ['plain', 'ann@example.ru'],
    ];
    for (const [i, [id, email]] of people.entries()) {
      const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
      await sql`insert into people (id, account_id, email, password_hash, created_at)
        values (${id}, ${`acct-${id}`}, ${email}, null, ${at})`.execute(old.db);
    }
    const after = await old.upgrade();
    const rows = await sql<{ id: string; email: string }>`select id, email from people order by id`.execute(
      after.db,
    );
    assert.deepEqual(Object.fromEntries(rows.rows.map((r) => [r.id, r.email])), {
      composed: 'am\u00e9lie@example.ru',
      decomposed: 'caf\u00e9@example.ru',
      plain: 'ann@example.ru',
      twin: 'ame\u0301lie@example.ru',
    });
  } finally {
    await old.drop();
  }
});

test('0030: tasks that failed or were canceled before it have their folders due at their end', async () => {
  const old = await databaseBefore('0030');
  try {
    const accountId = randomUUID();
    const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
    await sql`insert into accounts (id, name, credited_minor, captured_minor, held_minor, created_at)
      values (${accountId}, 'Old', 100000, 0, 0, ${at(0)})`.execute(old.db);
    const tasks: Array<[string, string, string | null, string | null]> = [
      ['failed', 'failed', at(10), null],
      ['canceled', 'canceled', at(20), null],
      ['succeeded', 'succeeded', at(30), at(40)],
      ['running', 'running', null, null],
      ['failed-dated', 'failed', at(50), at(60)],
    ];
    for (const [id, status, finished, expires] of tasks) {
      await sql`insert into tasks (id, account_id, key_id, model, mode, status, settings, inputs, price_minor,
          currency, progress, created_at, finished_at, files_expire_at, files_expired, revision)
        values (${id}, ${accountId}, null, 'image', 'generate', ${status}, '{}', '[]', 100, 'RUB', 0, ${at(0)},
          ${finished}, ${expires}, 0, 0)`.execute(old.db);
    }
    const after = await old.upgrade();
    const rows = await sql<{ id: string; files_expire_at: string | null }>`
      select id, files_expire_at from tasks`.execute(after.db);
    assert.deepEqual(Object.fromEntries(rows.rows.map((r) => [r.id, r.files_expire_at])), {
      failed: at(10),
      canceled: at(20),
      succeeded: at(40),
      running: null,
      'failed-dated': at(60),
    });
  } finally {
    await old.drop();
  }
});

test('0032: account names stored before NFC take it', async () => {
  const old = await databaseBefore('0032');
  try {
    const accounts: Array<[string, string]> = [
      ['decomposed', 'ООО Зайка'.normalize('NFD')],
      ['composed', 'ООО Зайка'],
      ['plain', 'Acme'],
    ];
    for (const [i, [id, name]] of accounts.entries()) {
      const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
      await sql`insert into accounts (id, name, credited_minor, captured_minor, held_minor, created_at)
        values (${id}, ${name}, 0, 0, 0, ${at})`.execute(old.db);
    }
    const after = await old.upgrade();
    const rows = await sql<{ id: string; name: string }>`select id, name from accounts`.execute(after.db);
    assert.deepEqual(Object.fromEntries(rows.rows.map((r) => [r.id, r.name])), {
      decomposed: 'ООО Зайка'.normalize('NFC'),
      composed: 'ООО Зайка',
      plain: 'Acme',
    });
  } finally {
    await old.drop();
  }
});

test('[10.6] shipped migration files never change', () => {
  const migrationsDir = path.join(ROOT, 'src/db/migrations');
  const files = fs
    .readdirSync(migrationsDir)
    .filter((f) => /^\d{4}-.+\.ts$/.test(f) && !f.endsWith('.test.ts'))
    .map((f) => `src/db/migrations/${f}`);
  for (const file of Object.keys(SHIPPED_MIGRATIONS)) {
    const digest = createHash('sha256')
      .update(fs.readFileSync(path.join(ROOT, file)))
      .digest('hex');
    assert.equal(digest, SHIPPED_MIGRATIONS[file], `${file} changed after it shipped: add a new migration`);
  }
  for (const file of files) {
    assert.ok(file in SHIPPED_MIGRATIONS, `${file} has no recorded hash: record it in this test`);
  }
});
