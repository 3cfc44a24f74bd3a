/**
 * The dashboard's test kit over `app.inject`: a browser-like cookie jar, form posts that carry the page's
 * CSRF token, small HTML readers (labels, buttons, hidden fields), and an in-memory people service with
 * the people module's interface, whose keys are real keys of the service (made and revoked through the
 * operator's service), so they work on /v1.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type { Container } from '../src/container.ts';
import { ApiError, errors } from '../src/errors.ts';
import type { Lang } from '../src/i18n/index.ts';
import type { PeoplePort, WebIssuedKey, WebKey, WebSession } from '../src/web/index.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp, type TestAppOptions } from './helpers.ts';

interface Person {
  id: string;
  accountId: string;
  email: string;
  password: string;
  confirmed: boolean;
  lang: Lang | null;
}

const refused = (status: 'invalid' | 'taken' | 'short') =>
  status === 'invalid'
    ? new ApiError('invalid_credentials', {
        detail: { en: 'Wrong e-mail or password.', ru: 'Неверная эл. почта или пароль.' },
      })
    : status === 'taken'
      ? new ApiError('idempotency_conflict', {
          detail: { en: 'This e-mail is taken.', ru: 'Эта эл. почта уже занята.' },
        })
      : new ApiError('invalid_request', {
          detail: { en: 'The password is too short.', ru: 'Пароль слишком короткий.' },
        });

/** A test app whose people service is a `FakePeople`, and that fake (whose mail the tests read). */
export async function startWithFakePeople(
  options: Omit<TestAppOptions, 'people'> = {},
): Promise<{ t: TestApp; people: FakePeople }> {
  let people: FakePeople | null = null;
  const t = await startTestApp({
    ...options,
    people: (container) => {
      people = new FakePeople(container);
      return people;
    },
  });
  if (people === null) throw new Error('the app was built without its people service');
  return { t, people };
}

/** An in-memory people service; tests read the tokens it would have mailed. */
export class FakePeople implements PeoplePort {
  readonly persons = new Map<string, Person>();
  readonly sessions = new Map<string, { personId: string; csrf: string }>();
  readonly confirmTokens = new Map<string, string>();
  readonly resetTokens = new Map<string, string>();
  readonly keyList = new Map<string, WebKey[]>();
  /** What sending a reset mail waits for (a slow mail server); resolved by default. */
  mailSent: Promise<void> = Promise.resolve();
  /** Sign-in attempts refused with 429 after this many wrong passwords. */
  wrongLimit = 1_000;
  wrong = 0;
  readonly #container: Container;

  constructor(container: Container) {
    this.#container = container;
  }

  #byId(personId: string): Person {
    const found = [...this.persons.values()].find((p) => p.id === personId);
    if (!found) throw new Error('no person');
    return found;
  }

  async signUp(input: { email: string; password: string; lang: Lang }) {
    if (this.persons.has(input.email)) throw refused('taken');
    if (input.password.length < 8) throw refused('short');
    const account = await this.#container.services.admin.createAccount(input.email);
    const person = {
      id: randomBytes(8).toString('hex'),
      accountId: account.id,
      email: input.email,
      password: input.password,
      confirmed: false,
      lang: input.lang,
    };
    this.persons.set(input.email, person);
    this.confirmTokens.set(randomBytes(32).toString('base64url'), person.id);
    return { personId: person.id, accountId: account.id, session: this.#open(person.id) };
  }

  async confirmEmail(token: string) {
    const personId = this.confirmTokens.get(token);
    if (!personId) throw new ApiError('not_found');
    this.confirmTokens.delete(token);
    this.#byId(personId).confirmed = true;
    return { personId };
  }

  async resendConfirmation(personId: string) {
    this.confirmTokens.set(randomBytes(32).toString('base64url'), personId);
  }

  async signIn(input: { email: string; password: string; address: string }) {
    if (this.wrong >= this.wrongLimit) throw errors.rateLimited(30);
    const person = this.persons.get(input.email);
    if (!person || person.password !== input.password) {
      this.wrong += 1;
      throw refused('invalid');
    }
    return this.#open(person.id);
  }

  /** A new session of the person. */
  #open(personId: string) {
    const token = randomBytes(32).toString('base64url');
    const csrf = randomBytes(32).toString('base64url');
    this.sessions.set(token, { personId, csrf });
    return { token, csrf, expiresAt: new Date(Date.now() + 3_600_000), personId };
  }

  async session(token: string): Promise<WebSession | null> {
    const found = this.sessions.get(token);
    if (!found) return null;
    const p = this.#byId(found.personId);
    return {
      personId: p.id,
      accountId: p.accountId,
      email: p.email,
      emailConfirmed: p.confirmed,
      lang: p.lang,
      csrf: found.csrf,
    };
  }

  async signOut(token: string) {
    this.sessions.delete(token);
  }

  async requestPasswordReset(email: string) {
    const person = this.persons.get(email);
    if (!person) return;
    this.resetTokens.set(randomBytes(32).toString('base64url'), person.id);
    // The mail goes out only for a known e-mail: a slow mail server slows only its requests.
    await this.mailSent;
  }

  async resetLinkEmail(token: string) {
    const personId = this.resetTokens.get(token);
    return personId === undefined ? null : this.#byId(personId).email;
  }

  async resetPassword(token: string, password: string) {
    const personId = this.resetTokens.get(token);
    // As the service does: an unknown or used link is 422 invalid_token.
    if (!personId) throw errors.invalidToken();
    if (password.length < 8) throw refused('short');
    this.resetTokens.delete(token);
    this.#byId(personId).password = password;
    for (const [t, s] of this.sessions) if (s.personId === personId) this.sessions.delete(t);
  }

  async changePassword(
    personId: string,
    current: string,
    next: string,
    from: { sessionToken: string; address: string },
  ) {
    const person = this.#byId(personId);
    if (person.password !== current) throw refused('invalid');
    if (next.length < 8) throw refused('short');
    person.password = next;
    // As the service does: every other session of the person ends.
    for (const [t, s] of this.sessions)
      if (s.personId === personId && t !== from.sessionToken) this.sessions.delete(t);
  }

  async setLanguage(personId: string, lang: Lang) {
    this.#byId(personId).lang = lang;
  }

  async keys(personId: string): Promise<WebKey[]> {
    return this.keyList.get(personId) ?? [];
  }

  async createKey(
    personId: string,
    input: { name: string; models: string[] | null; dailyLimitMinor: number | null },
  ): Promise<WebIssuedKey> {
    const person = this.#byId(personId);
    if (!person.confirmed) {
      throw new ApiError('model_not_allowed_for_key', {
        detail: { en: 'Confirm your e-mail first.', ru: 'Сначала подтвердите эл. почту.' },
      });
    }
    const issued = await this.#container.services.admin.issueKey(person.accountId, input);
    const { key: _plain, ...listed } = issued;
    this.keyList.set(personId, [...(this.keyList.get(personId) ?? []), { ...listed, revoked_at: null }]);
    return issued;
  }

  async revokeKey(personId: string, keyId: string) {
    const list = this.keyList.get(personId) ?? [];
    if (!list.some((k) => k.id === keyId)) throw new ApiError('key_not_found');
    await this.#container.services.admin.revokeKey(keyId);
    // As the people service does: revoked keys stay listed with their time.
    const at = new Date().toISOString();
    this.keyList.set(
      personId,
      list.map((k) => (k.id === keyId ? { ...k, revoked_at: at } : k)),
    );
  }
}

/** The first token of a map (what the e-mail would carry). */
export function lastToken(tokens: Map<string, string>): string {
  const all = [...tokens.keys()];
  const last = all.at(-1);
  if (!last) throw new Error('no token was mailed');
  return last;
}

/** A cookie as the browser keeps it. */
export interface JarCookie {
  value: string;
  attributes: string;
}

/** A browser signed in to the operator console with the test app's ADMIN_TOKEN. */
export async function operatorSignedIn(t: TestApp): Promise<Browser> {
  const browser = new Browser(t);
  await browser.get('/admin/signin');
  const res = await browser.post('/admin/signin', { token: ADMIN_TOKEN });
  assert.equal(res.statusCode, 303, res.body);
  assert.equal(res.headers.location, '/admin/accounts');
  return browser;
}

/** A browser over `app.inject`: keeps cookies, posts forms with the current page's CSRF token. */
export class Browser {
  readonly cookies = new Map<string, JarCookie>();
  readonly #t: TestApp;
  readonly #headers: Record<string, string>;
  /** The last page's CSRF field. */
  csrf = '';
  /** The last answer's body. */
  lastBody = '';

  constructor(t: TestApp, headers: Record<string, string> = {}) {
    this.#t = t;
    this.#headers = headers;
  }

  #cookieHeader(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { cookie: [...this.cookies].map(([k, v]) => `${k}=${v.value}`).join('; ') };
  }

  #keep(res: LightMyRequestResponse): void {
    const raw = res.headers['set-cookie'];
    for (const line of raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]) {
      const [pair = '', ...rest] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const attributes = rest.join(';');
      const expired = /max-age=0/i.test(attributes) || /expires=Thu, 01 Jan 1970/i.test(attributes);
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, { value, attributes });
    }
    this.lastBody = res.body;
    const field = /name="_csrf" value="([^"]*)"/.exec(res.body);
    if (field?.[1]) this.csrf = field[1];
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const res = await this.#t.app.inject({
      method: 'GET',
      url,
      headers: { ...this.#headers, ...this.#cookieHeader(), ...headers },
    });
    this.#keep(res);
    return res;
  }

  /** A HEAD of `url` with the jar's cookies; its answer is not kept (nothing changes the jar). */
  async head(url: string): Promise<LightMyRequestResponse> {
    return this.#t.app.inject({
      method: 'HEAD',
      url,
      headers: { ...this.#headers, ...this.#cookieHeader() },
    });
  }

  /** Posts a form; the CSRF field is the last page's unless `form` names its own. */
  async post(url: string, form: Record<string, string | string[]>): Promise<LightMyRequestResponse> {
    const body = new URLSearchParams();
    if (!('_csrf' in form)) body.append('_csrf', this.csrf);
    for (const [k, v] of Object.entries(form)) for (const one of [v].flat()) body.append(k, one);
    const res = await this.#t.app.inject({
      method: 'POST',
      url,
      payload: body.toString(),
      headers: {
        ...this.#headers,
        ...this.#cookieHeader(),
        'content-type': 'application/x-www-form-urlencoded',
      },
    });
    this.#keep(res);
    return res;
  }

  /** Signs up and signs in (the page does both) with a fresh e-mail; returns it. */
  async signUp(
    email = `p${randomBytes(4).toString('hex')}@example.com`,
    password = 'correct horse 1',
  ): Promise<string> {
    await this.get('/signup');
    const res = await this.post('/signup', { email, password });
    if (res.statusCode !== 303) throw new Error(`sign-up answered ${res.statusCode}: ${res.body}`);
    // As a browser follows the redirect: the next page carries the session's CSRF token.
    await this.get(String(res.headers.location));
    return email;
  }
}

/** Text content of the first element matching a tag with an attribute, tags stripped. */
export function textOf(body: string): string {
  return body
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/\s+/g, ' ');
}

/** The labels' texts (a label's own text before its control). */
export function labels(body: string): string[] {
  return [...body.matchAll(/<label[^>]*>([^<]*)/g)].map((m) => (m[1] ?? '').trim());
}

/** The buttons' visible texts. */
export function buttons(body: string): string[] {
  return [...body.matchAll(/<button[^>]*>([^<]*)<\/button>/g)].map((m) => (m[1] ?? '').trim());
}
