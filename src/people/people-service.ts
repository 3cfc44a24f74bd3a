import type { Logger } from 'pino';
import {
  createAccount,
  type IssuedKey,
  issueKey,
  type KeyView,
  keyAccount,
  listKeys,
  revokeKey,
} from '../accounts/index.ts';
import type { Db, Tx } from '../db/index.ts';
import { isUniqueViolation } from '../db/index.ts';
import { errors } from '../errors.ts';
import type { Lang } from '../i18n/index.ts';
import { credit } from '../ledger/index.ts';
import type { Clock } from '../lib/index.ts';
import { uuidv7 } from '../lib/index.ts';
import { type Mailer, type MailKind, mailOf } from '../mail/index.ts';
import type { ModelService } from '../models/index.ts';
import { EMAIL_MAX, emailKey, normalizeEmail } from './email.ts';
import type { LoginLimiter } from './login-limiter.ts';
import {
  DUMMY_HASH,
  hashPassword,
  PASSWORD_MAX,
  PASSWORD_MIN,
  passwordFits,
  verifyPassword,
} from './password.ts';
import { type AccountWithPerson, attachEmail, findAccounts } from './people-admin.ts';
import { asLang, createSession, findSession, type Session, type SignedIn } from './sessions.ts';
import {
  deleteExpired,
  endResetLinks,
  hashToken,
  issueToken,
  isTokenShaped,
  openTokenPerson,
  useToken,
} from './tokens.ts';

export interface PeopleServiceDeps {
  db: Db;
  clock: Clock;
  mailer: Mailer;
  models: ModelService;
  limiter: LoginLimiter;
  /** Base of the links in mails. */
  publicBaseUrl: string;
  /** Credited to each account made by sign-up (kopecks). */
  signupCreditMinor: number;
  /** Lifetime of a session (milliseconds). */
  sessionTtlMs: number;
  log?: Logger;
  /** Runs once a key revocation has committed, so this process's key cache forgets it at once. */
  onKeyRevoked?: () => void;
  /**
   * Longest a request waits for its mail to go out (milliseconds); a slower mail goes on after the
   * answer. (Default: MAIL_WAIT_MS)
   */
  mailWaitMs?: number;
}

/**
 * How long a sign-up, a resend or the operator's attach waits for the mail it sends: long enough for
 * any working SMTP server, so the mail is there when the answer is, and short beside SMTP_TIMEOUT_MS, so
 * a server that stops answering does not hold the person's request for 15 seconds.
 */
export const MAIL_WAIT_MS = 3_000;

function mustBeGoodPassword(password: string): void {
  if (!passwordFits(password, PASSWORD_MIN)) {
    throw errors.invalidRequest({
      en: `password: from ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`,
      ru: `password: от ${PASSWORD_MIN} до ${PASSWORD_MAX} символов.`,
    });
  }
}

/**
 * Accounts for people (CONTRACT §13): sign-up with a confirmation mail, sign-in with limits, sessions,
 * password reset, and the person's keys. The dashboard's pages and the operator API call it; money goes
 * through the ledger, keys through the accounts module, with the same rules as the operator's.
 */
export class PeopleService {
  readonly #d: PeopleServiceDeps;
  /** Mails still going out after their request was answered. */
  readonly #sending = new Set<Promise<void>>();

  constructor(deps: PeopleServiceDeps) {
    this.#d = deps;
  }

  #tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.#d.db.dialect.transaction(this.#d.db.db, fn);
  }

  /**
   * A new account with its person, the sign-up credit (once, reference `signup:<account id>`), the person's
   * first session and a confirmation mail. A taken e-mail is 409 email_taken: the whole transaction, credit
   * included, is undone. The session is opened here rather than by a sign-in: the person has just set the
   * password, and the sign-in limits of the address (other people's failures behind one office's address)
   * must not keep a new account out.
   */
  async signUp(input: {
    email: string;
    password: string;
    lang: Lang | null;
  }): Promise<{ personId: string; accountId: string; session: SignedIn }> {
    const email = normalizeEmail(input.email);
    mustBeGoodPassword(input.password);
    const passwordHash = await hashPassword(input.password);
    const at = this.#d.clock.now();
    const made = await this.#tx(async (tx) => {
      const taken = await tx.selectFrom('people').select('id').where('email', '=', email).executeTakeFirst();
      if (taken) throw errors.emailTaken();
      const account = await createAccount(tx, { name: email, at });
      const personId = uuidv7(at.getTime());
      await tx
        .insertInto('people')
        .values({
          id: personId,
          account_id: account.id,
          email,
          password_hash: passwordHash,
          email_confirmed_at: null,
          lang: input.lang,
          created_at: at.toISOString(),
        })
        .execute();
      if (this.#d.signupCreditMinor > 0) {
        await credit(tx, {
          accountId: account.id,
          amountMinor: this.#d.signupCreditMinor,
          reference: `signup:${account.id}`,
          at,
        });
      }
      const token = await issueToken(tx, personId, 'confirm', at);
      const session = await createSession(tx, personId, at, this.#d.sessionTtlMs);
      return { personId, accountId: account.id, token, session };
    }).catch((error: unknown) => {
      // Two sign-ups racing with one e-mail: the unique index refuses the second.
      throw isUniqueViolation(error) ? errors.emailTaken() : error;
    });
    await this.#mail('confirm', input.lang ?? 'en', email, made.token);
    return { personId: made.personId, accountId: made.accountId, session: made.session };
  }

  /**
   * Confirms the e-mail of the link's person; the token works once, for 48 hours. Answers whose it was:
   * the link may be opened in a browser signed in as someone else.
   */
  async confirmEmail(token: string): Promise<{ personId: string }> {
    return this.#tx(async (tx) => {
      const personId = await useToken(tx, token, 'confirm', this.#d.clock.now());
      await tx
        .updateTable('people')
        .set({ email_confirmed_at: this.#d.clock.now().toISOString() })
        .where('id', '=', personId)
        .where('email_confirmed_at', 'is', null)
        .execute();
      return { personId };
    });
  }

  /**
   * Mails a new confirmation link; nothing when the e-mail is confirmed already. Past the address's mails
   * for the hour (reset links count too), 429 rate_limited with Retry-After.
   */
  async resendConfirmation(personId: string): Promise<void> {
    const person = await this.#person(personId);
    if (person.email_confirmed_at !== null) return;
    const wait = await this.#d.limiter.takeMail(person.email);
    if (wait !== null) throw errors.rateLimited(wait);
    const token = await this.#tx((tx) => issueToken(tx, personId, 'confirm', this.#d.clock.now()));
    await this.#mail('confirm', asLang(person.lang) ?? 'en', person.email, token);
  }

  /**
   * A new session. Wrong e-mail or password is 401 invalid_credentials (which one is never said); past
   * the failures allowed per address or per e-mail, 429 rate_limited with Retry-After.
   */
  async signIn(input: { email: string; password: string; address: string }): Promise<SignedIn> {
    const email = emailKey(input.email).slice(0, EMAIL_MAX);
    const wait = await this.#d.limiter.begin(input.address, email);
    if (wait !== null) throw errors.rateLimited(wait);
    const person = await this.#d.db.db
      .selectFrom('people')
      .select(['id', 'password_hash'])
      .where('email', '=', email)
      .executeTakeFirst();
    // Unknown e-mails are hashed too, so the answer's time does not tell which e-mails exist.
    // Longer than any stored password can be: never hashed (no 1 MB scrypt input), never right.
    const fits = passwordFits(input.password);
    const ok = await verifyPassword(fits ? input.password : '', person?.password_hash ?? DUMMY_HASH);
    if (!person || person.password_hash === null || !ok || !fits) throw errors.invalidCredentials();
    await this.#d.limiter.succeeded(input.address, email);
    const compared = person.password_hash;
    // Only while the password is still the one compared: a reset or a change that committed meanwhile
    // ended every session, and one made after it from the old password would outlive them. The update
    // locks the person's row, so a new password committed after it ends this session too.
    const signed = await this.#tx(async (tx) => {
      const same = await tx
        .updateTable('people')
        .set({ password_hash: compared })
        .where('id', '=', person.id)
        .where('password_hash', '=', compared)
        .executeTakeFirst();
      if (Number(same.numUpdatedRows) === 0) return null;
      return createSession(tx, person.id, this.#d.clock.now(), this.#d.sessionTtlMs);
    });
    if (!signed) throw errors.invalidCredentials();
    return signed;
  }

  /** The session of a cookie's value, or null when it is unknown, ended or expired. */
  session(token: string): Promise<Session | null> {
    return findSession(this.#d.db.db, token, this.#d.clock.now());
  }

  /** Removes expired sessions and e-mail links (the sweeper's pass); resolves with how many. */
  async sweepExpired(): Promise<number> {
    const now = this.#d.clock.now();
    const db = this.#d.db.db;
    return (await deleteExpired(db, 'sessions', now)) + (await deleteExpired(db, 'person_tokens', now));
  }

  /** Ends one session. */
  async signOut(token: string): Promise<void> {
    if (!isTokenShaped(token)) return;
    await this.#d.db.db.deleteFrom('sessions').where('token_hash', '=', hashToken(token)).execute();
  }

  /** Mails a reset link; silent for unknown e-mails, so it tells no one who has an account. */
  async requestPasswordReset(emailInput: string): Promise<void> {
    const email = emailKey(emailInput);
    const person = await this.#d.db.db
      .selectFrom('people')
      .select(['id', 'lang'])
      .where('email', '=', email)
      .executeTakeFirst();
    // Past the address's mails for the hour, the answer is the same and no mail goes out.
    if (!person || (await this.#d.limiter.takeMail(email)) !== null) return;
    const token = await this.#tx((tx) => issueToken(tx, person.id, 'reset', this.#d.clock.now()));
    await this.#mail('reset', asLang(person.lang) ?? 'en', email, token);
  }

  /** Resolves once every mail still going out after its answer has gone or failed (tests, shutdown). */
  async mailsSent(): Promise<void> {
    while (this.#sending.size > 0) await Promise.all([...this.#sending]);
  }

  /**
   * The e-mail whose password a reset link would still set (known, unused, within its hour), without using
   * it; null when it would not. The dashboard asks before it shows the `New password` form, and names the
   * e-mail on it: a link mailed to someone else and passed on (to have a person set a password they may
   * use elsewhere on the sender's account) says whose it is.
   */
  async resetLinkEmail(token: string): Promise<string | null> {
    const personId = await openTokenPerson(this.#d.db.db, token, 'reset', this.#d.clock.now());
    if (personId === null) return null;
    const person = await this.#d.db.db
      .selectFrom('people')
      .select('email')
      .where('id', '=', personId)
      .executeTakeFirst();
    return person?.email ?? null;
  }

  /**
   * Sets a new password from a reset link (once, within 1 hour) and ends every session of the person and
   * every other reset link still open. Opening the link proves the mailbox, so it confirms the e-mail too.
   */
  async resetPassword(token: string, password: string): Promise<void> {
    mustBeGoodPassword(password);
    const passwordHash = await hashPassword(password);
    await this.#tx(async (tx) => {
      const personId = await useToken(tx, token, 'reset', this.#d.clock.now());
      const person = await tx
        .selectFrom('people')
        .select('email_confirmed_at')
        .where('id', '=', personId)
        .executeTakeFirstOrThrow();
      await tx
        .updateTable('people')
        .set({
          password_hash: passwordHash,
          email_confirmed_at: person.email_confirmed_at ?? this.#d.clock.now().toISOString(),
        })
        .where('id', '=', personId)
        .execute();
      await tx.deleteFrom('sessions').where('person_id', '=', personId).execute();
      await endResetLinks(tx, personId, this.#d.clock.now());
    });
  }

  /**
   * Changes the password after checking the current one: 401 invalid_credentials when wrong, counted like
   * a failed sign-in of the person's e-mail and of `from.address` (429 rate_limited past either budget, the
   * password then not compared). The new password ends every other session of the person
   * (`from.sessionToken` stays signed in) and every reset link still open.
   */
  async changePassword(
    personId: string,
    current: string,
    next: string,
    from: { sessionToken: string; address: string },
  ): Promise<void> {
    mustBeGoodPassword(next);
    const person = await this.#person(personId);
    const wait = await this.#d.limiter.begin(from.address, person.email);
    if (wait !== null) throw errors.rateLimited(wait);
    if (
      person.password_hash === null ||
      !passwordFits(current) ||
      !(await verifyPassword(current, person.password_hash))
    )
      throw errors.invalidCredentials();
    await this.#d.limiter.succeeded(from.address, person.email);
    const passwordHash = await hashPassword(next);
    await this.#tx(async (tx) => {
      await tx
        .updateTable('people')
        .set({ password_hash: passwordHash })
        .where('id', '=', personId)
        .execute();
      await tx
        .deleteFrom('sessions')
        .where('person_id', '=', personId)
        .where('token_hash', '!=', hashToken(from.sessionToken))
        .execute();
      await endResetLinks(tx, personId, this.#d.clock.now());
    });
  }

  /** Saves the interface language; null follows the browser again. */
  async setLanguage(personId: string, lang: Lang | null): Promise<void> {
    await this.#d.db.db.updateTable('people').set({ lang }).where('id', '=', personId).execute();
  }

  /** The keys of the person's account, newest first, revoked ones included. */
  async keys(personId: string): Promise<KeyView[]> {
    const person = await this.#person(personId);
    return listKeys(this.#d.db.db, person.account_id);
  }

  /**
   * A key of the person's account, shown once: 403 email_not_confirmed until the e-mail is confirmed,
   * 409 too_many_keys past 10 active keys, 404 model_not_found for unknown models.
   */
  async createKey(
    personId: string,
    input: { name: string | null; models: string[] | null; dailyLimitMinor: number | null },
  ): Promise<IssuedKey> {
    const person = await this.#person(personId);
    if (person.email_confirmed_at === null) throw errors.emailNotConfirmed();
    for (const model of input.models ?? []) {
      if (!this.#d.models.find(model)) throw errors.modelNotFound(model);
    }
    return this.#tx(async (tx) => {
      await this.#d.db.dialect.lockAccount(tx, person.account_id);
      return issueKey(tx, { accountId: person.account_id, ...input, at: this.#d.clock.now() });
    });
  }

  /** Revokes a key of the person's own account; another account's key is 404 key_not_found. */
  async revokeKey(personId: string, keyId: string): Promise<void> {
    const person = await this.#person(personId);
    await this.#tx(async (tx) => {
      if ((await keyAccount(tx, keyId)) !== person.account_id) throw errors.keyNotFound(keyId);
      await revokeKey(tx, keyId, this.#d.clock.now());
    });
    this.#d.onKeyRevoked?.();
  }

  /** The person holding an account, or null for operator-made accounts without an e-mail. */
  async personOfAccount(accountId: string): Promise<{ email: string; emailConfirmed: boolean } | null> {
    const row = await this.#d.db.db
      .selectFrom('people')
      .select(['email', 'email_confirmed_at'])
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row ? { email: row.email, emailConfirmed: row.email_confirmed_at !== null } : null;
  }

  /** The operator's search (CONTRACT §13): `email` exact, `q` a part of the name or e-mail. */
  async findAccounts(query: { email?: string; q?: string }): Promise<AccountWithPerson[]> {
    // The API's bound, here so the command line refuses it too rather than answering no accounts.
    for (const name of ['email', 'q'] as const) {
      if ((query[name]?.length ?? 0) > EMAIL_MAX) {
        throw errors.invalidRequest({
          en: `${name}: at most ${EMAIL_MAX} characters.`,
          ru: `${name}: не больше ${EMAIL_MAX} символов.`,
        });
      }
    }
    return findAccounts(this.#d.db, query);
  }

  /** The operator attaches an e-mail to an account; a confirmation mail goes out, the password comes by reset. */
  async attachEmail(accountId: string, email: string): Promise<AccountWithPerson> {
    const at = this.#d.clock.now();
    const made = await this.#tx(async (tx) => {
      const person = await attachEmail(this.#d.db, tx, { accountId, email, at });
      return { ...person, token: await issueToken(tx, person.personId, 'confirm', at) };
    });
    await this.#mail('confirm', 'en', made.email, made.token);
    const [view] = await findAccounts(this.#d.db, { email: made.email });
    return view as AccountWithPerson;
  }

  async #person(personId: string) {
    const person = await this.#d.db.db
      .selectFrom('people')
      .selectAll()
      .where('id', '=', personId)
      .executeTakeFirst();
    if (!person) throw errors.invalidCredentials();
    return person;
  }

  /**
   * Sends after the commit and waits for it up to `mailWaitMs`; a slower mail goes on after the answer.
   * A mail that fails is logged, and the person can ask for another.
   */
  async #mail(kind: MailKind, lang: Lang, to: string, token: string): Promise<void> {
    const sent = this.#track(this.#send(kind, lang, to, token));
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.#d.mailWaitMs ?? MAIL_WAIT_MS);
    });
    await Promise.race([sent, waited]).finally(() => clearTimeout(timer));
  }

  async #send(kind: MailKind, lang: Lang, to: string, token: string): Promise<void> {
    const link = `${this.#d.publicBaseUrl}/${kind === 'confirm' ? 'confirm' : 'reset/new'}?token=${token}`;
    try {
      await this.#d.mailer.send(mailOf(kind, lang, to, link));
    } catch (error) {
      this.#d.log?.warn({ err: error, mail: kind }, 'sending a mail failed');
    }
  }

  /** Keeps `sending` (which never rejects) among the mails going out until it settles. */
  #track(sending: Promise<void>): Promise<void> {
    this.#sending.add(sending);
    void sending.finally(() => this.#sending.delete(sending));
    return sending;
  }
}
