/**
 * What every dashboard request knows before its page runs: the session (from the HttpOnly cookie), the
 * language (the person's saved choice, then the `lang` cookie, then Accept-Language), the CSRF token its
 * forms carry, and a one-time flash message. Every POST is refused with a 403 page unless its `_csrf`
 * field (or `X-CSRF-Token` header) equals the session's token, or, signed out, the random value of the
 * `gta_csrf` cookie (a double-submit token, so sign-in and sign-up forms cannot be posted from elsewhere).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Lang, negotiateLang } from '../i18n/index.ts';
import { sessionPrincipal } from '../people/index.ts';
import { CSRF_FIELD, CSRF_HEADER, type PeoplePort, SESSION_COOKIE, type WebSession } from './people-port.ts';
import { type FlashKey, isFlashKey } from './words.ts';

/** The signed-out CSRF cookie (double submit). */
export const ANON_CSRF_COOKIE = 'gta_csrf';
/** The language chosen before signing in. */
export const LANG_COOKIE = 'lang';
/** A message for the next page, after a redirect. */
export const FLASH_COOKIE = 'gta_flash';

export interface WebContext {
  session: WebSession | null;
  /** The session cookie's value, when a session was found. */
  sessionToken: string | null;
  lang: Lang;
  /** The token every form of this page carries in `_csrf`. */
  csrf: string;
  flash: FlashKey | null;
  /** The address of a GET page, where the `Language` control comes back to; null for a post's answer. */
  here: string | null;
}

const contexts = new WeakMap<FastifyRequest, WebContext>();

/** The request's context; set by the `preHandler` hook of the dashboard's routes. */
export function contextOf(request: FastifyRequest): WebContext {
  const found = contexts.get(request);
  if (!found) throw new Error('dashboard context missing');
  return found;
}

/** Cookie options shared by the dashboard's cookies. */
export function cookieOptions(secure: boolean, maxAgeSeconds?: number) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure,
    ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }),
  };
}

function parseLang(value: unknown): Lang | null {
  return value === 'en' || value === 'ru' ? value : null;
}

export function langFrom(value: unknown): Lang | null {
  return parseLang(value);
}

/** Whether a signed-out CSRF cookie holds a value of the kind this site issues (32 random bytes, base64url). */
export function isIssuedCsrf(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value);
}

/**
 * The address of a page being read, where its `Language` control (and a signed-out visit's sign-in) comes
 * back to: a GET's, or a HEAD's, which is the GET without its body and must answer its headers (RFC 9110
 * §9.3.2: the same Content-Length and Location). Null for a post, whose answer is no address to return to.
 */
export function pageAddress(request: FastifyRequest): string | null {
  return request.method === 'GET' || request.method === 'HEAD' ? request.url : null;
}

/** The language of a page: the person's own, else the `lang` cookie's, else the browser's Accept-Language. */
export function pageLang(
  request: FastifyRequest,
  cookies: Readonly<Record<string, string | undefined>>,
  own?: Lang | null,
): Lang {
  return (
    own ?? parseLang(cookies[LANG_COOKIE]) ?? negotiateLang(undefined, request.headers['accept-language'])
  );
}

function sameToken(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

/** The CSRF token a POST carried: the form field, else the header. */
function sentToken(request: FastifyRequest): string | null {
  const body = request.body;
  if (body && typeof body === 'object' && CSRF_FIELD in body) {
    const value = (body as Record<string, unknown>)[CSRF_FIELD];
    return typeof value === 'string' ? value : null;
  }
  const header = request.headers[CSRF_HEADER];
  return typeof header === 'string' ? header : null;
}

/**
 * Builds the context of a request: reads the session and the language, issues the signed-out CSRF
 * cookie when missing, and takes the flash message (cleared so it shows once).
 */
export async function loadContext(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: { people: PeoplePort; secure: boolean },
): Promise<WebContext> {
  const token = request.cookies[SESSION_COOKIE] ?? null;
  const session = token ? await deps.people.session(token) : null;
  if (token && !session) reply.clearCookie(SESSION_COOKIE, { path: '/' });
  // The session's account, as on /v1 with the cookie: the request's log line names it (CONTRACT §15).
  if (session) request.principal = sessionPrincipal(session);
  let csrf = session?.csrf ?? request.cookies[ANON_CSRF_COOKIE] ?? '';
  if (!session && !isIssuedCsrf(csrf)) {
    csrf = randomBytes(32).toString('base64url');
    reply.setCookie(ANON_CSRF_COOKIE, csrf, cookieOptions(deps.secure));
  }
  const flashValue = request.cookies[FLASH_COOKIE];
  const flash = isFlashKey(flashValue) ? flashValue : null;
  if (flashValue !== undefined) reply.clearCookie(FLASH_COOKIE, { path: '/' });
  const lang = pageLang(request, request.cookies, session?.lang);
  const here = pageAddress(request);
  const context: WebContext = { session, sessionToken: session ? token : null, lang, csrf, flash, here };
  contexts.set(request, context);
  request.lang = lang;
  return context;
}

/** Whether a POST carries the CSRF token of its session (or of the signed-out cookie). */
export function csrfValid(request: FastifyRequest, context: WebContext): boolean {
  const sent = sentToken(request);
  return sent !== null && sameToken(sent, context.csrf);
}

/** Sets the message shown once by the next page. */
export function setFlash(reply: FastifyReply, key: FlashKey, secure: boolean): void {
  reply.setCookie(FLASH_COOKIE, key, cookieOptions(secure, 60));
}

/**
 * A `next` target that stays on this site, fit for a `Location` header: a path starting with one `/`
 * (not `//` or `/\`, which browsers read as another host), without control characters; anything else
 * gives `/`.
 */
export function safeNext(value: unknown): string {
  if (typeof value !== 'string' || value.length > 2000) return '/';
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return '/';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  if (/[\u0000-\u001f\u007f\\]/.test(value)) return '/';
  // A header carries ASCII only: anything else (`/ключи`, a space) goes percent-encoded, as a browser
  // sends it; text that is not Unicode (a lone surrogate) gives `/`.
  try {
    return value.replace(/[^\x21-\x7e]+/gu, (text) => encodeURIComponent(text));
  } catch {
    return '/';
  }
}

/** A string field of a posted form ('' when absent or repeated). */
export function field(body: unknown, name: string): string {
  if (!body || typeof body !== 'object') return '';
  const value = (body as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : '';
}

/** Every value of a repeatable form field (checkboxes). */
export function fields(body: unknown, name: string): string[] {
  if (!body || typeof body !== 'object') return [];
  const value = (body as Record<string, unknown>)[name];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
