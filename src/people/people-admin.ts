import { sql } from 'kysely';
import { type AccountView, getAccount } from '../accounts/index.ts';
import type { Db, Tx } from '../db/index.ts';
import { isUniqueViolation } from '../db/index.ts';
import { errors } from '../errors.ts';
import { uuidv7 } from '../lib/index.ts';
import { emailKey, normalizeEmail } from './email.ts';

/** An account as the operator finds it: its balances and, when a person holds it, the e-mail. */
export interface AccountWithPerson extends AccountView {
  email: string | null;
  email_confirmed: boolean | null;
}

/** Most accounts one search answers; a narrower query finds the rest. */
export const ACCOUNT_SEARCH_LIMIT = 50;
/** Longest search text (`q`, UTF-16 code units as the API's schema counts them): an e-mail's longest. */
export const ACCOUNT_SEARCH_MAX_LENGTH = 254;

/** `%`, `_` and `\` match themselves in a LIKE pattern. */
const likeEscaped = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Accounts by exact e-mail, or by a part of the name or e-mail (case-insensitive), newest first, at most
 * ACCOUNT_SEARCH_LIMIT (CONTRACT §13). Neither given: the newest accounts.
 */
export async function findAccounts(
  db: Db,
  query: { email?: string; q?: string },
): Promise<AccountWithPerson[]> {
  let select = db.db
    .selectFrom('accounts')
    .leftJoin('people', 'people.account_id', 'accounts.id')
    .select(['accounts.id', 'people.email', 'people.email_confirmed_at', 'people.id as person_id']);
  if (query.email !== undefined) select = select.where('people.email', '=', emailKey(query.email));
  if (query.q !== undefined && query.q.trim() !== '') {
    const pattern = `%${likeEscaped(emailKey(query.q))}%`;
    select = select.where((eb) =>
      eb.or([
        eb(sql`lower(accounts.name)`, 'like', sql`${pattern} escape '\\'`),
        eb(sql`people.email`, 'like', sql`${pattern} escape '\\'`),
      ]),
    );
  }
  const rows = await select.orderBy('accounts.id', 'desc').limit(ACCOUNT_SEARCH_LIMIT).execute();
  return Promise.all(
    rows.map(async (row) => ({
      ...(await getAccount(db.db, row.id)),
      email: row.email ?? null,
      email_confirmed: row.person_id === null ? null : row.email_confirmed_at !== null,
    })),
  );
}

/**
 * Attaches an e-mail to an operator-made account: a person without a password and with the e-mail
 * unconfirmed; the caller mails the returned person a confirmation link. 409 account_has_email when the
 * account has a person already, 409 email_taken when another account has the e-mail.
 */
export async function attachEmail(
  db: Db,
  tx: Tx,
  input: { accountId: string; email: string; at: Date },
): Promise<{ personId: string; email: string }> {
  const email = normalizeEmail(input.email);
  await db.dialect.lockAccount(tx, input.accountId);
  await getAccount(tx, input.accountId);
  const existing = await tx
    .selectFrom('people')
    .select('id')
    .where('account_id', '=', input.accountId)
    .executeTakeFirst();
  if (existing) throw errors.accountHasEmail(input.accountId);
  const taken = await tx.selectFrom('people').select('id').where('email', '=', email).executeTakeFirst();
  if (taken) throw errors.emailTaken();
  const personId = uuidv7(input.at.getTime());
  try {
    await tx
      .insertInto('people')
      .values({
        id: personId,
        account_id: input.accountId,
        email,
        password_hash: null,
        email_confirmed_at: null,
        lang: null,
        created_at: input.at.toISOString(),
      })
      .execute();
  } catch (error) {
    throw isUniqueViolation(error) ? errors.emailTaken() : error;
  }
  return { personId, email };
}
