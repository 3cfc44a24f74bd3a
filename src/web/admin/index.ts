/**
 * The operator console at `/admin` (CONTRACT §13), served only when ADMIN_TOKEN is set: sign-in with the
 * token, then accounts (search, credit, ledger, keys, e-mail), models (on/off, active tasks limit) and
 * channels (states, on/off). A context of its own: cookies scoped to `/admin`, forms, the dashboard's
 * security headers, and a CSRF check on every POST. Everything goes through the services.
 */
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Lang } from '../../i18n/index.ts';
import { clientAddressKey } from '../../lib/index.ts';
import { AttemptLimiter, type ExpiringMarks } from '../../people/index.ts';
import type { Assets } from '../assets.ts';
import {
  cookieOptions,
  field,
  isIssuedCsrf,
  LANG_COOKIE,
  langFrom,
  pageAddress,
  pageLang,
  safeNext,
} from '../context.ts';
import { html } from '../html.ts';
import { FORM_BODY_LIMIT, pageFailure, refusalOf, seeOther, sendHtml, tooManyAttempts } from '../respond.ts';
import { wordsOf } from '../words.ts';
import { accountPages } from './accounts.ts';
import { catalogPages } from './catalog.ts';
import { type ConsoleContext, consolePage } from './layout.ts';
import type { ConsolePort } from './port.ts';
import {
  CONSOLE_COOKIE,
  CONSOLE_CSRF_COOKIE,
  ConsoleKeys,
  consoleCookie,
  csrfMatches,
  freshCsrf,
} from './session.ts';
import { topupPages } from './topups.ts';

export type { ConsoleAccount, ConsoleChannel, ConsoleModel, ConsolePort } from './port.ts';
export { type ConsoleServices, consolePort } from './services.ts';

/** Sign-ins per address: each counted before it is weighed (or refused with a wait), a right one given back. */
export type SignInLimiter = Pick<AttemptLimiter, 'take' | 'giveBack'>;

/** What the console needs. */
export interface ConsoleDeps {
  token: string;
  port: ConsolePort;
  /**
   * Failed sign-ins per client address (the people module's `AttemptLimiter`, shared by every API process
   * on PostgreSQL). (Default: 10 per 15 minutes in this process)
   */
  attempts?: SignInLimiter;
  /**
   * Signed-out sessions, refused until they would have expired (the people module's `ExpiringMarks`, kept
   * in the database: every API process sees them, and a restart forgets none).
   */
  signedOut: Pick<ExpiringMarks, 'mark' | 'marked'>;
  /** Milliseconds now. (Default: Date.now) */
  now?: () => number;
}

/** What the console's page files receive. */
export interface ConsolePageDeps {
  port: ConsolePort;
  assets: Assets;
  /** Whether cookies are `Secure` (PUBLIC_BASE_URL is https). */
  secure: boolean;
}

const HIDE = { schema: { hide: true } } as const;
const PUBLIC = new Set(['/admin/signin', '/admin/language']);
const contexts = new WeakMap<FastifyRequest, ConsoleContext>();

/** The request's console context (set before every console page). */
export function consoleContextOf(request: FastifyRequest): ConsoleContext {
  const found = contexts.get(request);
  if (!found) throw new Error('console context missing');
  return found;
}

function sentCsrf(request: FastifyRequest): string {
  return field(request.body, '_csrf');
}

/**
 * The console's 404 page for an `/admin` address nobody serves, answered from outside the console's context
 * (http/not-found.ts): the header of the operator's state, read from the request's cookies (nothing is set).
 */
export type ConsoleNotFound = (cookies: Readonly<Record<string, string | undefined>>, lang: Lang) => string;

/** Registers the console's pages on `app` in a context of their own; returns its 404 page. */
export async function consoleRoutes(
  app: FastifyInstance,
  deps: ConsoleDeps & { assets: Assets; secure: boolean; helmet: object },
): Promise<ConsoleNotFound> {
  const keys = new ConsoleKeys(deps.token);
  const attempts = deps.attempts ?? new AttemptLimiter('console-address');
  const { signedOut } = deps;
  const now = deps.now ?? Date.now;
  /** Whether a cookie is a live session: signed with the token, not expired, not signed out. */
  const isSession = async (value: string | undefined): Promise<boolean> =>
    value !== undefined && keys.valid(value, now()) && !(await signedOut.marked(value));
  const pageDeps: ConsolePageDeps = { port: deps.port, assets: deps.assets, secure: deps.secure };
  /**
   * The context of a request refused before the hook below ran (a form body too large or of another
   * type), read from its cookies alone, so the page keeps the operator's header and language.
   */
  const cookieContext = async (request: FastifyRequest): Promise<ConsoleContext> => {
    const cookies = request.cookies ?? {};
    const session = cookies[CONSOLE_COOKIE];
    const signedIn = await isSession(session);
    const anon = cookies[CONSOLE_CSRF_COOKIE] ?? '';
    const csrf = signedIn && session ? keys.csrf(session) : isIssuedCsrf(anon) ? anon : '';
    return { signedIn, lang: pageLang(request, cookies), csrf, here: null };
  };

  await app.register(async (web) => {
    await web.register(cookie);
    await web.register(formbody, { bodyLimit: FORM_BODY_LIMIT });
    // The route's own limit is the form's too, so a form sent with `Expect: 100-continue` is asked for its
    // body up to the size the form parser reads (http/body-gate.ts), not refused past the default 16 KB.
    web.addHook('onRoute', (route) => {
      route.bodyLimit ??= FORM_BODY_LIMIT;
    });
    await web.register(helmet, deps.helmet);
    web.addHook('preHandler', async (request, reply) => {
      const session = request.cookies[CONSOLE_COOKIE];
      const signedIn = await isSession(session);
      if (session !== undefined && !signedIn) reply.clearCookie(CONSOLE_COOKIE, { path: '/admin' });
      let csrf = signedIn && session ? keys.csrf(session) : (request.cookies[CONSOLE_CSRF_COOKIE] ?? '');
      if (!signedIn && !isIssuedCsrf(csrf)) {
        csrf = freshCsrf();
        reply.setCookie(CONSOLE_CSRF_COOKIE, csrf, consoleCookie(deps.secure, 12 * 60 * 60));
      }
      const lang = pageLang(request, request.cookies);
      const context: ConsoleContext = {
        signedIn,
        lang,
        csrf,
        here: pageAddress(request),
      };
      contexts.set(request, context);
      request.lang = lang;
      const path = request.url.split('?')[0] ?? '/admin';
      if (request.method === 'POST' && !csrfMatches(sentCsrf(request), csrf)) {
        const w = wordsOf(lang);
        const body = html`<p class="error" role="alert">${w.csrfBody}</p><p><a href="/admin">${w.adminTitle}</a></p>`;
        return sendHtml(reply, 403, consolePage(context, deps.assets, { title: w.csrfTitle, path, body }));
      }
      if (!signedIn && !PUBLIC.has(path)) return seeOther(reply, '/admin/signin');
    });
    web.setErrorHandler(async (error, request, reply) => {
      const context = contexts.get(request) ?? (await cookieContext(request));
      const w = wordsOf(context.lang);
      const { status, refusal } = pageFailure(error, request);
      if (status >= 500) request.log.error({ err: error }, 'console page failed');
      const message = refusal ? refusalOf(refusal, context.lang).message : w.errorTitle;
      const body = html`<p class="error" role="alert">${message}</p><p><a href="/admin">${w.adminTitle}</a></p>`;
      return sendHtml(
        reply,
        status,
        consolePage(context, deps.assets, { title: w.errorTitle, path: '/admin', body }),
      );
    });

    const signInPage = (
      reply: FastifyReply,
      context: ConsoleContext,
      status: number,
      error: string | null,
    ) => {
      const w = wordsOf(context.lang);
      const body = html`<form method="post" action="/admin/signin" class="stack">
        <input type="hidden" name="_csrf" value=${context.csrf} />
        ${error ? html`<p class="error" role="alert">${error}</p>` : null}
        <p class="hint">${w.adminSignInHint}</p>
        <label for="admin-token">${w.adminToken}</label>
        <input id="admin-token" name="token" type="password" autocomplete="current-password" required />
        <button type="submit">${w.signIn}</button>
      </form>`;
      return sendHtml(
        reply,
        status,
        consolePage(context, deps.assets, { title: w.signIn, path: '/admin/signin', body }),
      );
    };

    web.get('/admin', HIDE, async (_request, reply) => seeOther(reply, '/admin/accounts'));

    web.get('/admin/signin', HIDE, async (request, reply) => {
      const context = consoleContextOf(request);
      if (context.signedIn) return seeOther(reply, '/admin/accounts');
      return signInPage(reply, context, 200, null);
    });

    web.post('/admin/signin', HIDE, async (request, reply) => {
      const context = consoleContextOf(request);
      const w = wordsOf(context.lang);
      // Counted before the comparison, in one step with the check: sign-ins sent together cannot all be
      // compared before any of them has failed. A right token gives back its own attempt only: the
      // address's failures stay counted, so a guesser sharing the operator's address (an office, a proxy
      // not trusted) gets no fresh budget each time the operator signs in.
      const wait = await attempts.take(clientAddressKey(request.ip));
      if (wait !== null) {
        reply.header('retry-after', String(wait));
        return signInPage(reply, context, 429, tooManyAttempts(wait, context.lang));
      }
      if (!keys.tokenMatches(field(request.body, 'token')))
        return signInPage(reply, context, 401, w.adminWrongToken);
      await attempts.giveBack(clientAddressKey(request.ip));
      reply.setCookie(CONSOLE_COOKIE, keys.issue(now()), consoleCookie(deps.secure, 12 * 60 * 60));
      reply.clearCookie(CONSOLE_CSRF_COOKIE, { path: '/admin' });
      return seeOther(reply, '/admin/accounts');
    });

    web.post('/admin/signout', HIDE, async (request, reply) => {
      // The cookie is only a signature: a copy of it (another browser, a stolen one) would stay valid
      // until it expires, so the session is marked as ended until then.
      const session = request.cookies[CONSOLE_COOKIE];
      const expires = keys.expiresAt(session);
      if (session !== undefined && expires !== null && expires > now()) {
        await signedOut.mark(session, (expires - now()) / 1000);
      }
      reply.clearCookie(CONSOLE_COOKIE, { path: '/admin' });
      return seeOther(reply, '/admin/signin');
    });

    web.post('/admin/language', HIDE, async (request, reply) => {
      const lang = langFrom(field(request.body, 'lang'));
      if (lang) reply.setCookie(LANG_COOKIE, lang, cookieOptions(deps.secure, 365 * 24 * 60 * 60));
      // Back to the page, its query (a search, a ledger's filters) kept; only a page of the console.
      const next = safeNext(field(request.body, 'next'));
      return seeOther(reply, /^\/admin(?:[/?]|$)/.test(next) ? next : '/admin');
    });

    await accountPages(web, pageDeps);
    await catalogPages(web, pageDeps);
    await topupPages(web, pageDeps);
  });

  return (cookies, lang) => {
    const session = cookies[CONSOLE_COOKIE];
    const signedIn = keys.valid(session, now());
    const anon = cookies[CONSOLE_CSRF_COOKIE] ?? '';
    const csrf = signedIn && session ? keys.csrf(session) : isIssuedCsrf(anon) ? anon : '';
    const w = wordsOf(lang);
    const body = html`<p class="error" role="alert">${w.notFound}</p><p><a href="/admin">${w.adminTitle}</a></p>`;
    const context: ConsoleContext = { signedIn, lang, csrf, here: null };
    return consolePage(context, deps.assets, { title: w.notFoundTitle, path: '/admin', body });
  };
}
