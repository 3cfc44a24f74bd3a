import type { Kysely } from 'kysely';
import type { KeyPrincipal } from '../accounts/index.ts';
import type { Database } from '../db/index.ts';
import type { Lang } from '../i18n/index.ts';
import { hashToken, isTokenShaped, newToken } from './tokens.ts';

/** A signed-in person, as every dashboard request and cookie-authenticated /v1 call sees it. */
export interface Session {
  personId: string;
  accountId: string;
  email: string;
  emailConfirmed: boolean;
  lang: Lang | null;
  /** The session's CSRF token: unsafe cookie-authenticated requests must carry it. */
  csrf: string;
}

export const asLang = (value: string | null): Lang | null =>
  value === 'en' || value === 'ru' ? value : null;

/** A new session of a person: the cookie's value and the CSRF token; only the value's hash is stored. */
/** A session just opened: the cookie's value and its CSRF token (neither is stored as it is). */
export interface SignedIn {
  token: string;
  csrf: string;
  expiresAt: Date;
  personId: string;
}

export async function createSession(
  db: Kysely<Database>,
  personId: string,
  at: Date,
  ttlMs: number,
): Promise<SignedIn> {
  const token = newToken();
  const csrf = newToken();
  const expiresAt = new Date(at.getTime() + ttlMs);
  await db
    .insertInto('sessions')
    .values({
      token_hash: hashToken(token),
      person_id: personId,
      csrf,
      expires_at: expiresAt.toISOString(),
      created_at: at.toISOString(),
    })
    .execute();
  return { token, csrf, expiresAt, personId };
}

/** The session of a cookie's value at `now`, or null when it is unknown, ended or expired. */
export async function findSession(db: Kysely<Database>, token: string, now: Date): Promise<Session | null> {
  if (!isTokenShaped(token)) return null;
  const row = await db
    .selectFrom('sessions')
    .innerJoin('people', 'people.id', 'sessions.person_id')
    .select([
      'people.id',
      'people.account_id',
      'people.email',
      'people.email_confirmed_at',
      'people.lang',
      'sessions.csrf',
      'sessions.expires_at',
    ])
    .where('sessions.token_hash', '=', hashToken(token))
    .executeTakeFirst();
  if (!row || row.expires_at <= now.toISOString()) return null;
  return {
    personId: row.id,
    accountId: row.account_id,
    email: row.email,
    emailConfirmed: row.email_confirmed_at !== null,
    lang: asLang(row.lang),
    csrf: row.csrf,
  };
}

/**
 * The rights of a session: the whole account, as its owner has them (every model, no daily limit). `/v1`
 * with the session cookie and the dashboard's pages call the services with it.
 */
export function sessionPrincipal(session: Pick<Session, 'accountId'>): KeyPrincipal {
  return { keyId: null, accountId: session.accountId, prefix: '', models: null, dailyLimitMinor: null };
}
