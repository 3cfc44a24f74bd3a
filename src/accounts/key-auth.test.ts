import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { freshPostgres, openTestDatabase } from '../../test/databases.ts';
import { createDb, type Db, migrateToLatest } from '../db/index.ts';
import { createAccount } from './accounts.ts';
import { KeyAuthenticator } from './key-auth.ts';
import { issueKey, revokeKey } from './keys.ts';

// The key cache (KeyAuthenticator): a known key is served from memory, and a revoked key is refused at
// once by every process: this one (the revoking transaction's notification), another on the same SQLite
// file (the `keys` epoch) and another on PostgreSQL (NOTIFY).

async function newKey(db: Db): Promise<{ id: string; key: string; accountId: string }> {
  const at = new Date();
  return db.dialect.transaction(db.db, async (tx) => {
    const account = await createAccount(tx, { name: 'cache', at });
    const issued = await issueKey(tx, { accountId: account.id, at });
    return { id: issued.id, key: issued.key, accountId: account.id };
  });
}

/**
 * Two handles on one SQLite file, `mine` and `other`: the second plays another process, whose notifications
 * never reach `mine`. Both are closed and the file removed after `body`.
 */
async function withTwoSqliteProcesses(body: (mine: Db, other: Db) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-keycache-'));
  const file = path.join(dir, 'keys.db');
  const mine = createDb(`sqlite:${file}`);
  await migrateToLatest(mine);
  const other = createDb(`sqlite:${file}`);
  try {
    await body(mine, other);
  } finally {
    await other.close();
    await mine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Two pools on one fresh PostgreSQL database of `TEST_DATABASE_URL`, `mine` and `other`: the second plays
 * another process. Skips without the server; the database is dropped after `body`.
 */
async function withTwoPostgresProcesses(
  t: TestContext,
  name: string,
  body: (mine: Db, other: Db) => Promise<void>,
): Promise<void> {
  const server = process.env.TEST_DATABASE_URL;
  if (!server) return t.skip('needs TEST_DATABASE_URL');
  const fresh = await freshPostgres(server, name);
  const mine = createDb(fresh.url);
  await migrateToLatest(mine);
  const other = createDb(fresh.url);
  try {
    await body(mine, other);
  } finally {
    await other.close();
    await mine.close();
    await fresh.drop();
  }
}

/**
 * Takes the key's row away behind the cache's back (no revocation, no epoch, no notification): a key
 * still accepted afterwards was answered from memory.
 */
async function dropRowQuietly(db: Db, keyId: string): Promise<void> {
  await db.db.deleteFrom('api_keys').where('id', '=', keyId).execute();
}

test('a known key is answered from memory; a revoked one is refused at once in the same process', async () => {
  const { db, drop } = await openTestDatabase('gta_keycache');
  const auth = new KeyAuthenticator(db);
  await auth.start();
  try {
    const kept = await newKey(db);
    assert.equal((await auth.authenticate(kept.key))?.keyId, kept.id);
    await dropRowQuietly(db, kept.id);
    assert.equal((await auth.authenticate(kept.key))?.keyId, kept.id, 'answered from the cache');
    const key = await newKey(db);
    // SQLite answers a cached key without waiting; PostgreSQL never does (its epoch takes a query).
    const sqlite = db.dialect.name === 'sqlite';
    assert.equal(auth.cached(key.key), undefined, 'never looked up: not answered without a lookup');
    assert.equal((await auth.authenticate(key.key))?.keyId, key.id);
    assert.equal(auth.cached(key.key)?.keyId, sqlite ? key.id : undefined, 'looked up');
    await db.dialect.transaction(db.db, (tx) => revokeKey(tx, key.id, new Date()));
    assert.equal(auth.cached(key.key), undefined, 'revoked: not answered from memory');
    assert.equal(await auth.authenticate(key.key), null, 'revoked: refused');
  } finally {
    await auth.close();
    await drop();
  }
});

test('one connection presenting different keys in turn gets each key’s own rights', async () => {
  // The synchronous path, SQLite's.
  const db = createDb('sqlite::memory:');
  await migrateToLatest(db);
  const drop = () => db.close();
  const auth = new KeyAuthenticator(db);
  await auth.start();
  try {
    const first = await newKey(db);
    const second = await newKey(db);
    await auth.authenticate(first.key);
    await auth.authenticate(second.key);
    const connection = {};
    for (const key of [first, second, second, first, first, second]) {
      assert.equal(auth.cached(key.key, connection)?.keyId, key.id);
    }
    // Its last character changed, whatever it was (a key ending in x must not come back as itself).
    const wrong = `${first.key.slice(0, -1)}${first.key.endsWith('x') ? 'y' : 'x'}`;
    assert.equal(auth.cached(wrong, connection), undefined, 'a wrong key on it');
    assert.equal(auth.cached(first.key, {})?.keyId, first.id, 'another connection');
    // Each connection keeps its own copy of the key it sent, not the bytes the next request is encoded in.
    const one = {};
    const other = {};
    assert.equal(auth.cached(first.key, one)?.keyId, first.id);
    assert.equal(auth.cached(second.key, other)?.keyId, second.id);
    assert.equal(auth.cached(second.key, one)?.keyId, second.id, 'the first connection, now the second key');
    assert.equal(auth.cached(first.key, other)?.keyId, first.id, 'the second connection, now the first key');
    // A presented key of the longest length, in characters of four UTF-8 bytes, is encoded whole.
    const wide = `${first.key}${'😀'.repeat(80)}`.slice(0, 200);
    assert.equal(auth.cached(wide, one), undefined, 'not a key');
    assert.equal(auth.cached(first.key, one)?.keyId, first.id, 'the key again after it');
  } finally {
    await auth.close();
    await drop();
  }
});

test('SQLite: a key revoked by another process on the same file is refused on the very next request', async () => {
  await withTwoSqliteProcesses(async (mine, other) => {
    const auth = new KeyAuthenticator(mine);
    await auth.start();
    try {
      const key = await newKey(mine);
      assert.equal((await auth.authenticate(key.key))?.keyId, key.id);
      assert.equal((await auth.authenticate(key.key))?.keyId, key.id, 'served from the cache');
      await other.dialect.transaction(other.db, (tx) => revokeKey(tx, key.id, new Date()));
      // The next request arrives after the revocation: in a later turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(auth.cached(key.key), undefined, 'the synchronous path reads the epoch too');
      assert.equal(await auth.authenticate(key.key), null, 'no wait, no notification needed');
    } finally {
      await auth.close();
    }
  });
});

test('PostgreSQL: a key revoked by another process is refused on the very next request', async (t) => {
  await withTwoPostgresProcesses(t, 'gta_keycache_pg', async (db, other) => {
    // A long time to live: only the epoch (or the notification) can make it forget within the test.
    const auth = new KeyAuthenticator(db, { notifiedTtlMs: 600_000 });
    await auth.start();
    try {
      const key = await newKey(db);
      assert.equal((await auth.authenticate(key.key))?.keyId, key.id);
      assert.equal((await auth.authenticate(key.key))?.keyId, key.id, 'cached');
      assert.equal(auth.cached(key.key), undefined, 'never answered without the epoch’s query');
      await other.dialect.transaction(other.db, (tx) => revokeKey(tx, key.id, new Date()));
      // No wait for the NOTIFY, which may land after the client's next request: the epoch read by the
      // request's turn already tells.
      assert.equal(await auth.authenticate(key.key), null, 'refused at once');
      // Many requests of one turn share one read of the epoch, and all are refused.
      const turn = await Promise.all(Array.from({ length: 20 }, () => auth.authenticate(key.key)));
      assert.deepEqual(new Set(turn), new Set([null]));
    } finally {
      await auth.close();
    }
  });
});

test('a lookup that a revocation overtook is not cached; entries expire after their time to live', async () => {
  const db = createDb('sqlite::memory:');
  await migrateToLatest(db);
  let now = 0;
  const auth = new KeyAuthenticator(db, { epochTtlMs: 1000, now: () => now });
  await auth.start();
  try {
    const overtaken = await newKey(db);
    const pending = auth.authenticate(overtaken.key);
    auth.forget();
    assert.equal((await pending)?.keyId, overtaken.id);
    await dropRowQuietly(db, overtaken.id);
    assert.equal(await auth.authenticate(overtaken.key), null, 'the overtaken lookup was not kept');

    const key = await newKey(db);
    assert.equal((await auth.authenticate(key.key))?.keyId, key.id);
    await dropRowQuietly(db, key.id);
    now = 900;
    assert.equal((await auth.authenticate(key.key))?.keyId, key.id, 'still within its time to live');
    now = 1500;
    assert.equal(await auth.authenticate(key.key), null, 'expired: looked up again');
  } finally {
    await auth.close();
    await db.close();
  }
});

// `whenRevoked`: the signal that ends a key's long-polls and event streams when the key is revoked (issue
// 18), heard in this process at once, from another process on SQLite through the `keys` epoch, and from
// another process on PostgreSQL through NOTIFY.

/** Resolves with the time it took the signal to abort; rejects after `ms`. */
function aborted(signal: AbortSignal, ms = 5_000): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    if (signal.aborted) return resolve(0);
    const timer = setTimeout(() => reject(new Error(`not aborted within ${ms} ms`)), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(performance.now() - started);
    });
  });
}

test('whenRevoked aborts when the key is revoked in this process, and for a key revoked before it', async () => {
  const { db, drop } = await openTestDatabase('gta_keywatch');
  const auth = new KeyAuthenticator(db);
  await auth.start();
  try {
    const key = await newKey(db);
    const other = await newKey(db);
    const watched = auth.whenRevoked(key.id);
    const bystander = auth.whenRevoked(other.id);
    const again = auth.whenRevoked(key.id);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(watched.signal.aborted, false, 'an active key: nothing ends');
    await db.dialect.transaction(db.db, (tx) => revokeKey(tx, key.id, new Date()));
    await aborted(watched.signal);
    await aborted(again.signal);
    assert.equal(bystander.signal.aborted, false, "another key's calls go on");
    // Revoked between a request's authentication and its watch: no notification comes again.
    const late = auth.whenRevoked(key.id);
    await aborted(late.signal);
    for (const w of [watched, again, bystander, late]) w.close();
  } finally {
    await auth.close();
    await drop();
  }
});

/** `auth` (on `mine`) ends a watch of a key that `other`, another process, revokes. */
async function revokedElsewhere(auth: KeyAuthenticator, mine: Db, other: Db): Promise<void> {
  await auth.start();
  try {
    const key = await newKey(mine);
    const watched = auth.whenRevoked(key.id);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(watched.signal.aborted, false);
    await other.dialect.transaction(other.db, (tx) => revokeKey(tx, key.id, new Date()));
    const ms = await aborted(watched.signal, 2_000);
    assert.ok(ms < 2_000, `aborted ${ms} ms after the revocation`);
    watched.close();
  } finally {
    await auth.close();
  }
}

test('SQLite: whenRevoked aborts for a key revoked by another process on the same file', async () => {
  await withTwoSqliteProcesses((mine, other) =>
    revokedElsewhere(new KeyAuthenticator(mine, { revocationCheckMs: 50 }), mine, other),
  );
});

test('PostgreSQL: whenRevoked aborts for a key revoked by another process', async (t) => {
  await withTwoPostgresProcesses(t, 'gta_keywatch_pg', (mine, other) =>
    revokedElsewhere(new KeyAuthenticator(mine), mine, other),
  );
});
