import { createHash, randomBytes } from 'node:crypto';
import type { Tx } from '../db/index.ts';
import { errors } from '../errors.ts';

/** What an e-mail link is for: confirming the e-mail, or resetting the password. */
export type TokenPurpose = 'confirm' | 'reset';

const HOUR_MS = 3_600_000;
/** How long e-mail links work (docs/people.md). */
export const TOKEN_TTL_MS: Record<TokenPurpose, number> = { confirm: 48 * HOUR_MS, reset: HOUR_MS };

/** A new secret token: 32 random bytes, base64url (43 characters). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What is stored of a token: its SHA-256 (hex). 256 random bits need no slow hash. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Whether a presented value could be a token at all, before any lookup. */
export function isTokenShaped(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value);
}

/** Stores a new single-use token of a person and returns its value, to be mailed. */
export async function issueToken(tx: Tx, personId: string, purpose: TokenPurpose, at: Date): Promise<string> {
  const token = newToken();
  await tx
    .insertInto('person_tokens')
    .values({
      token_hash: hashToken(token),
      person_id: personId,
      purpose,
      expires_at: new Date(at.getTime() + TOKEN_TTL_MS[purpose]).toISOString(),
      used_at: null,
      created_at: at.toISOString(),
    })
    .execute();
  return token;
}

/**
 * Marks a token used and returns its person; 422 invalid_token when unknown, used or expired. One
 * conditional UPDATE, so two clicks at once cannot both use it.
 */
export async function useToken(tx: Tx, token: string, purpose: TokenPurpose, at: Date): Promise<string> {
  if (!isTokenShaped(token)) throw errors.invalidToken();
  const now = at.toISOString();
  const row = await tx
    .updateTable('person_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', hashToken(token))
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('person_id')
    .executeTakeFirst();
  if (!row) throw errors.invalidToken();
  return row.person_id;
}

/**
 * The person of a token that would be accepted now (known, of this purpose, unused, unexpired), without
 * using it; null for any other: a page asks before it offers a form that needs the token.
 */
export async function openTokenPerson(
  db: Tx,
  token: string,
  purpose: TokenPurpose,
  at: Date,
): Promise<string | null> {
  if (!isTokenShaped(token)) return null;
  const row = await db
    .selectFrom('person_tokens')
    .select('person_id')
    .where('token_hash', '=', hashToken(token))
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', at.toISOString())
    .executeTakeFirst();
  return row?.person_id ?? null;
}

/**
 * Removes the sessions or e-mail links expired at `now`, at most `batch` of them (by the expiry's index,
 * migration 0031); resolves with how many. An expired one opens nothing (`findSession`, `useToken`,
 * `openTokenPerson`), but its row was only ever deleted by signing out or a password change: every
 * sign-in, sign-up and reset left one for good (the sweeper's pass calls this).
 */
export async function deleteExpired(
  db: Tx,
  table: 'sessions' | 'person_tokens',
  now: Date,
  batch = 500,
): Promise<number> {
  const result = await db
    .deleteFrom(table)
    .where('token_hash', 'in', (eb) =>
      eb.selectFrom(table).select('token_hash').where('expires_at', '<=', now.toISOString()).limit(batch),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Marks every reset link of the person still open as used: a new password closes the older links. */
export async function endResetLinks(tx: Tx, personId: string, at: Date): Promise<void> {
  await tx
    .updateTable('person_tokens')
    .set({ used_at: at.toISOString() })
    .where('person_id', '=', personId)
    .where('purpose', '=', 'reset')
    .where('used_at', 'is', null)
    .execute();
}
