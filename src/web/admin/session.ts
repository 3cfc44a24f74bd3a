/**
 * The operator console's sign-in (CONTRACT §13): the ADMIN_TOKEN compared in constant time, and a session
 * that is a signed expiry and a random id in an HttpOnly, SameSite=Strict cookie scoped to `/admin`. The
 * signing key is derived from the token, so a new token ends every console session; only signed-out
 * sessions are stored, until they would have expired (`ExpiringMarks`). Forms carry a CSRF token derived
 * from the cookie.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The console's session cookie. */
export const CONSOLE_COOKIE = 'gta_console';
/** The signed-out CSRF cookie of the sign-in form (double submit). */
export const CONSOLE_CSRF_COOKIE = 'gta_console_csrf';
/** How long a console session lasts. */
export const CONSOLE_SESSION_MS = 12 * 60 * 60 * 1000;

/** Cookie options of the console: only `/admin` sees them, never sent from another site. */
export function consoleCookie(secure: boolean, maxAgeSeconds: number) {
  return { path: '/admin', httpOnly: true, sameSite: 'strict' as const, secure, maxAge: maxAgeSeconds };
}

function mac(key: Buffer, text: string): string {
  return createHmac('sha256', key).update(text).digest('base64url');
}

function same(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

/** Signs and checks console sessions with a key derived from the operator token. */
export class ConsoleKeys {
  readonly #key: Buffer;
  readonly #tokenMac: Buffer;

  constructor(token: string) {
    this.#key = createHmac('sha256', token).update('gta operator console session').digest();
    this.#tokenMac = createHmac('sha256', this.#key).update(token).digest();
  }

  /** Whether `sent` is the token: both are hashed first, so the time taken tells nothing of either. */
  tokenMatches(sent: string): boolean {
    const sentMac = createHmac('sha256', this.#key).update(sent).digest();
    return timingSafeEqual(sentMac, this.#tokenMac);
  }

  /**
   * A session cookie's value that expires `CONSOLE_SESSION_MS` after `now`; its random id makes it a
   * session of its own, which signing out ends without ending the others.
   */
  issue(now: number): string {
    const expires = String(now + CONSOLE_SESSION_MS);
    const id = randomBytes(16).toString('base64url');
    return `${expires}.${id}.${mac(this.#key, `session.${expires}.${id}`)}`;
  }

  /** When a session signed with this token expires (milliseconds); null for anything else. */
  expiresAt(value: string | undefined): number | null {
    if (!value) return null;
    const [expires = '', id = '', signature = '', ...rest] = value.split('.');
    if (rest.length > 0 || !/^\d{1,15}$/.test(expires) || !/^[A-Za-z0-9_-]{22}$/.test(id)) return null;
    return same(signature, mac(this.#key, `session.${expires}.${id}`)) ? Number(expires) : null;
  }

  /** Whether a cookie value is a session signed with this token and not expired at `now`. */
  valid(value: string | undefined, now: number): boolean {
    const expires = this.expiresAt(value);
    return expires !== null && expires > now;
  }

  /** The CSRF token of a session's forms. */
  csrf(sessionValue: string): string {
    return mac(this.#key, `csrf.${sessionValue}`);
  }
}

/** Whether a sent CSRF token is the expected one (constant time). */
export function csrfMatches(sent: string, expected: string): boolean {
  return same(sent, expected);
}

/** A fresh value for the sign-in form's CSRF cookie. */
export function freshCsrf(): string {
  return randomBytes(32).toString('base64url');
}
