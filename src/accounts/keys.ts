import { hash } from 'node:crypto';
import type { CompiledQuery } from 'kysely';
import { type ApiKeysTable, bumpEpoch, notifyOnCommit, type Tx } from '../db/index.ts';
import { errors } from '../errors.ts';
import { randomBase62, uuidv7 } from '../lib/index.ts';

/** Active keys an account may hold at once (reference "Authentication" 4). */
export const MAX_ACTIVE_KEYS = 10;
const KEY_PREFIX = 'gta_';

/** What an authenticated request may do: the key's rights. */
export interface KeyPrincipal {
  /** The key's id; null for a dashboard session, which acts for the whole account (CONTRACT §13). */
  keyId: string | null;
  accountId: string;
  /** First characters of the key, to tell keys apart. */
  prefix: string;
  /** Allowed model keys, or null for every model. */
  models: string[] | null;
  dailyLimitMinor: number | null;
}

export interface IssuedKey {
  id: string;
  /** The plain key: shown once, never stored. */
  key: string;
  prefix: string;
  name: string | null;
  models: string[] | null;
  daily_limit_minor: number | null;
  created_at: string;
}

/**
 * Keys carry 190 random bits, so a single SHA-256 is enough to store them safely: unlike passwords they
 * cannot be guessed from a dictionary, and the hash stays a fast indexed lookup on every request.
 * `crypto.hash` digests in one call, without the Hash object `createHash` makes for every request.
 */
export function hashKey(plain: string): string {
  return hash('sha256', plain, 'hex');
}

function randomKey(): string {
  return KEY_PREFIX + randomBase62(32);
}

/** Issues a key; the 11th active key of an account is 409 too_many_keys. Caller holds the account lock. */
export async function issueKey(
  tx: Tx,
  input: {
    accountId: string;
    name?: string | null;
    models?: string[] | null;
    dailyLimitMinor?: number | null;
    at: Date;
  },
): Promise<IssuedKey> {
  const active = await tx
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('account_id', '=', input.accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (Number(active?.n ?? 0) >= MAX_ACTIVE_KEYS) throw errors.tooManyKeys(MAX_ACTIVE_KEYS);
  const key = randomKey();
  const row = {
    id: uuidv7(input.at.getTime()),
    account_id: input.accountId,
    name: input.name ?? null,
    prefix: key.slice(0, 12),
    key_hash: hashKey(key),
    models: input.models ? JSON.stringify(input.models) : null,
    daily_limit_minor: input.dailyLimitMinor ?? null,
    created_at: input.at.toISOString(),
    revoked_at: null,
  };
  await tx.insertInto('api_keys').values(row).execute();
  return {
    id: row.id,
    key,
    prefix: row.prefix,
    name: row.name,
    models: input.models ?? null,
    daily_limit_minor: row.daily_limit_minor,
    created_at: row.created_at,
  };
}

/** Where key revocations are announced to every process's key cache (payload: the key's id). */
export const KEYS_CHANNEL = 'gta_keys';

/**
 * Revokes a key; from then on it answers 401 in every process: the same transaction moves the `keys`
 * epoch (read by processes on the same SQLite file) and notifies KEYS_CHANNEL on commit (heard by every
 * process on PostgreSQL), so no key cache keeps it (`KeyAuthenticator`). False when there is no such
 * active key.
 */
export async function revokeKey(tx: Tx, keyId: string, at: Date): Promise<boolean> {
  const result = await tx
    .updateTable('api_keys')
    .set({ revoked_at: at.toISOString() })
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) > 0) {
    await bumpEpoch(tx, 'keys');
    await notifyOnCommit(tx, KEYS_CHANNEL, keyId);
    return true;
  }
  const exists = await tx.selectFrom('api_keys').select('id').where('id', '=', keyId).executeTakeFirst();
  if (!exists) throw errors.keyNotFound(keyId);
  return false;
}

type KeyRow = Pick<
  ApiKeysTable,
  'id' | 'account_id' | 'prefix' | 'models' | 'daily_limit_minor' | 'revoked_at'
>;

/**
 * The key lookup runs on every request; it is built and compiled once per database handle and then only
 * given its parameter (the query builder was about a fifth of a poll's CPU, docs/performance.md).
 */
const keyLookups = new WeakMap<Tx, CompiledQuery<KeyRow>>();

function keyLookup(tx: Tx): CompiledQuery<KeyRow> {
  let compiled = keyLookups.get(tx);
  if (!compiled) {
    compiled = tx
      .selectFrom('api_keys')
      .select(['id', 'account_id', 'prefix', 'models', 'daily_limit_minor', 'revoked_at'])
      .where('key_hash', '=', '')
      .compile();
    keyLookups.set(tx, compiled);
  }
  return compiled;
}

/** Longest string taken as a presented key (UTF-16 code units); a longer one is refused unhashed. */
export const KEY_MAX_LENGTH = 200;

/** Whether a presented string can be a key at all (checked before any hashing or lookup). */
export function looksLikeKey(plain: string): boolean {
  return plain.startsWith(KEY_PREFIX) && plain.length <= KEY_MAX_LENGTH;
}

/** The rights of the key with this SHA-256, or null when there is none or it is revoked. */
export async function principalOfHash(tx: Tx, keyHash: string): Promise<KeyPrincipal | null> {
  const lookup = keyLookup(tx);
  const { rows } = await tx.executeQuery<KeyRow>({ ...lookup, parameters: [keyHash] });
  const row = rows[0];
  if (!row || row.revoked_at !== null) return null;
  return {
    keyId: row.id,
    accountId: row.account_id,
    prefix: row.prefix,
    models: row.models === null ? null : (JSON.parse(row.models) as string[]),
    dailyLimitMinor: row.daily_limit_minor === null ? null : Number(row.daily_limit_minor),
  };
}

/** Whether the key still opens the API: an open stream asks, so a revoked key's stream ends. */
export async function isKeyActive(db: Tx, keyId: string): Promise<boolean> {
  const row = await db
    .selectFrom('api_keys')
    .select('id')
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

/** Keys looked up per query by `revokedAmong`, well under either engine's limit of bound parameters. */
const REVOKED_CHUNK = 500;

/** Which of these keys are revoked (a key that does not exist is not listed). */
export async function revokedAmong(db: Tx, keyIds: readonly string[]): Promise<string[]> {
  const revoked: string[] = [];
  for (let i = 0; i < keyIds.length; i += REVOKED_CHUNK) {
    const rows = await db
      .selectFrom('api_keys')
      .select('id')
      .where('id', 'in', keyIds.slice(i, i + REVOKED_CHUNK))
      .where('revoked_at', 'is not', null)
      .execute();
    for (const row of rows) revoked.push(row.id);
  }
  return revoked;
}

export function mayUseModel(principal: KeyPrincipal, model: string): boolean {
  return principal.models === null || principal.models.includes(model);
}

/** A key as its owner sees it later: never the key itself. */
export interface KeyView {
  id: string;
  prefix: string;
  name: string | null;
  models: string[] | null;
  daily_limit_minor: number | null;
  created_at: string;
  revoked_at: string | null;
}

/** The account's keys, newest first, revoked ones included. */
export async function listKeys(tx: Tx, accountId: string): Promise<KeyView[]> {
  const rows = await tx
    .selectFrom('api_keys')
    .select(['id', 'prefix', 'name', 'models', 'daily_limit_minor', 'created_at', 'revoked_at'])
    .where('account_id', '=', accountId)
    .orderBy('id', 'desc')
    .execute();
  return rows.map((row) => ({
    ...row,
    models: row.models === null ? null : (JSON.parse(row.models) as string[]),
    daily_limit_minor: row.daily_limit_minor === null ? null : Number(row.daily_limit_minor),
  }));
}

/** The account a key belongs to, or null when there is no such key. */
export async function keyAccount(tx: Tx, keyId: string): Promise<string | null> {
  const row = await tx.selectFrom('api_keys').select('account_id').where('id', '=', keyId).executeTakeFirst();
  return row?.account_id ?? null;
}
