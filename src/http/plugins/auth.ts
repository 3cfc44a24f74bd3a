import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isKeyActive } from '../../accounts/index.ts';
import { errors } from '../../errors.ts';
import { bearerToken } from '../../lib/index.ts';
import { CSRF_HEADER, SESSION_COOKIE, type Session, sessionPrincipal } from '../../people/index.ts';
import type { AppDeps } from '../types.ts';
import type { RequestLimiter } from './rate-limit.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Authenticates every request of the encapsulated context with `Authorization: Bearer <API_KEY>`:
 * missing, malformed, unknown or revoked keys are 401 invalid_api_key, and past 30 unknown or revoked
 * keys a minute from one address those are 429 rate_limited (a request with no key still gets its 401).
 * A valid key is never slowed by others' wrong attempts.
 *
 * Without an Authorization header, the dashboard's session cookie opens the API as its account, with
 * every model and no daily limit (CONTRACT §13); its unsafe requests must carry the session's
 * `X-CSRF-Token`, else 403 csrf_failed. A Bearer header always wins over a cookie.
 */
export function installApiKeyAuth(app: FastifyInstance, deps: AppDeps, limiter: RequestLimiter): void {
  // A callback, not an async function: a key whose rights are cached, counted by the limiter in memory (a
  // poll's usual case on SQLite), passes without a promise or a wait; the rest takes `authenticateRequest`.
  app.addHook('onRequest', (request, reply, done) => {
    // An account's answers are its own: no cache keeps them, a shared one keyed on the address alone least
    // of all (a session's calls carry no Authorization, which would keep them out of one). Downloads and
    // event streams set their own policy.
    reply.header('cache-control', 'no-store');
    const plain = bearerToken(request.raw);
    const principal = plain === undefined ? undefined : deps.services.keys.cached(plain, request.raw.socket);
    if (principal !== undefined) {
      request.principal = principal;
      try {
        if (limiter.takeAccountRequestHere(principal.accountId, reply)) return done();
      } catch (error) {
        return done(error as Error);
      }
    }
    authenticateRequest(request, reply, deps, limiter).then(() => done(), done);
  });
}

async function authenticateRequest(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: AppDeps,
  limiter: RequestLimiter,
): Promise<void> {
  const header = request.headers.authorization;
  const session = header === undefined ? await sessionOf(request, deps) : null;
  if (session) {
    // A page of another site can make the browser send the cookie, never this header (CONTRACT §13).
    if (!SAFE_METHODS.has(request.method) && !csrfMatches(request.headers[CSRF_HEADER], session.csrf)) {
      throw errors.csrfFailed();
    }
    request.principal = sessionPrincipal(session);
    await limiter.takeAccountRequest(session.accountId, reply);
    return;
  }
  const token = bearerToken(request.raw);
  // RFC 6750 §3.1: only a Bearer token that was sent is `invalid_token`; no header, an empty one or
  // another scheme (Basic, Token) brought no token, and its challenge names the scheme alone. Such a
  // request guesses no key: it is neither counted among the address's wrong keys nor refused for them.
  // Nor does one with two Authorization lines (`bearerToken`), whichever of them holds a valid key.
  if (!token) throw errors.invalidApiKey(false);
  const principal = await deps.services.keys.authenticate(token);
  if (!principal) {
    const wait = await limiter.takeWrongKeyAttempt(request.ip);
    throw wait === null ? errors.invalidApiKey(true) : errors.rateLimited(wait);
  }
  request.principal = principal;
  await limiter.takeAccountRequest(principal.accountId, reply);
}

/** The session the request's cookie names, if it is still open. */
export async function sessionOf(request: FastifyRequest, deps: AppDeps): Promise<Session | null> {
  const token = cookieValue(request.headers.cookie, SESSION_COOKIE);
  return token === null ? null : deps.services.people.session(token);
}

/**
 * Whether what authenticated the request still would: its key not revoked, its session not ended. Asked
 * by calls that answer long after they were authenticated (an event stream, a `?wait=` long-poll), so that
 * a key revoked meanwhile gets nothing more from them.
 */
export async function stillAuthenticated(request: FastifyRequest, deps: AppDeps): Promise<boolean> {
  const principal = request.principal;
  if (!principal) return false;
  return principal.keyId === null
    ? (await sessionOf(request, deps)) !== null
    : isKeyActive(deps.db.db, principal.keyId);
}

/**
 * Aborts when the key that authenticated the request is revoked, in this process or another
 * (`KeyAuthenticator.whenRevoked`): a long-poll or an event stream of that key ends at once and gives its
 * place back. A dashboard session has no key: its signal never aborts (its calls ask `stillAuthenticated`).
 * `close` when the call ends.
 */
export function keyRevocation(
  request: FastifyRequest,
  deps: AppDeps,
): { signal: AbortSignal; close: () => void } {
  const keyId = request.principal?.keyId;
  if (keyId == null) return { signal: new AbortController().signal, close: () => {} };
  return deps.services.keys.whenRevoked(keyId);
}

/** One cookie's value from a Cookie header, or null. */
export function cookieValue(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

function csrfMatches(sent: string | string[] | undefined, expected: string): boolean {
  if (typeof sent !== 'string') return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
