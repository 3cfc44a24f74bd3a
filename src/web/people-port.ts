/**
 * The part of the people service (accounts of people: sign-up, sessions, keys) the dashboard's pages
 * use, declared here so the pages depend on what they call and tests can pass a small fake
 * (STYLE: declare only the part you use). The people module's `PeopleService` fits it.
 */
import type { IssuedKey, KeyView } from '../accounts/index.ts';
import type { Lang } from '../i18n/index.ts';
import type { PeopleService, Session } from '../people/index.ts';

/** The cookie's, header's and field's names are the people module's. */
export { CSRF_FIELD, CSRF_HEADER, SESSION_COOKIE } from '../people/index.ts';

/** A signed-in person, as read from their session cookie (the people module's `Session`). */
export type WebSession = Session;

/** A key as the keys page lists it (the plain key is never listed). */
export type WebKey = KeyView;

/** A key just made: the plain `key` is shown once. */
export type WebIssuedKey = IssuedKey;

/** What a successful sign-in gives: the session's cookie value and its CSRF token. */
export type WebSignIn = Awaited<ReturnType<PeopleService['signIn']>>;

/** People's accounts as the pages use them; failures are `ApiError`s with a code and a status. */
export interface PeoplePort {
  signUp(input: {
    email: string;
    password: string;
    lang: Lang;
  }): Promise<{ personId: string; accountId: string; session: WebSignIn }>;
  /** Whose e-mail the link confirmed. */
  confirmEmail(token: string): Promise<{ personId: string }>;
  resendConfirmation(personId: string): Promise<void>;
  signIn(input: { email: string; password: string; address: string }): Promise<WebSignIn>;
  session(token: string): Promise<WebSession | null>;
  signOut(token: string): Promise<void>;
  requestPasswordReset(email: string): Promise<void>;
  /** The e-mail whose password a reset link would still set, null when it would not; not used up. */
  resetLinkEmail(token: string): Promise<string | null>;
  resetPassword(token: string, password: string): Promise<void>;
  changePassword(
    personId: string,
    current: string,
    next: string,
    from: { sessionToken: string; address: string },
  ): Promise<void>;
  setLanguage(personId: string, lang: Lang): Promise<void>;
  keys(personId: string): Promise<WebKey[]>;
  createKey(
    personId: string,
    input: { name: string; models: string[] | null; dailyLimitMinor: number | null },
  ): Promise<WebIssuedKey>;
  revokeKey(personId: string, keyId: string): Promise<void>;
}
