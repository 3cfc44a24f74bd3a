/**
 * The dashboard (CONTRACT §13), served by the API's process at `/`. Everything here lives in one
 * encapsulated context, so its plugins touch only its routes: cookies (@fastify/cookie), urlencoded forms
 * (@fastify/formbody) and the security headers (@fastify/helmet: a Content-Security-Policy without inline
 * scripts, `frame-ancestors 'none'`, `Referrer-Policy: no-referrer`). `/v1` keeps its own headers and
 * never reads a cookie.
 */
import cookie, { fastifyCookie } from '@fastify/cookie';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import helmetHeaders from 'helmet';
import type { NotFoundPage } from '../http/index.ts';
import type { Lang } from '../i18n/index.ts';
import type { WalletOverview } from '../ledger/index.ts';
import { type ConsoleDeps, type ConsoleNotFound, consoleRoutes } from './admin/index.ts';
import { type Asset, Assets } from './assets.ts';
import {
  ANON_CSRF_COOKIE,
  contextOf,
  csrfValid,
  isIssuedCsrf,
  loadContext,
  pageAddress,
  pageLang,
  setFlash,
  type WebContext,
} from './context.ts';
import { html } from './html.ts';
import { page } from './layout.ts';
import type { LibrariesPort } from './libraries-port.ts';
import { authPages } from './pages/auth.ts';
import { keysPages } from './pages/keys.ts';
import { type LedgerPort, ledgerPages } from './pages/ledger.ts';
import { librariesPages } from './pages/libraries.ts';
import { type NewTaskCatalog, newTaskPage } from './pages/new-task.ts';
import { overviewPage } from './pages/overview.ts';
import { settingsPages } from './pages/settings.ts';
import { taskDetailPages } from './pages/task-detail.ts';
import { tasksPages } from './pages/tasks.ts';
import { type TopupPort, topupPages } from './pages/topup.ts';
import { uploadsPages } from './pages/uploads.ts';
import { type PeoplePort, SESSION_COOKIE, type WebSession } from './people-port.ts';
import { csrfRefused, FORM_BODY_LIMIT, pageFailure, refusalOf, sendHtml } from './respond.ts';
import type { TasksPort } from './tasks-port.ts';
import type { UploadsPort } from './uploads-port.ts';
import { wordsOf } from './words.ts';

/** What the dashboard needs from the rest of the service. */
export interface WebDeps {
  people: PeoplePort;
  /** Balances and spend of an account (the ledger's `WalletReader`). */
  wallet: { overview(accountId: string, days?: number): Promise<WalletOverview | null> };
  /** The catalog, for the keys page's model checkboxes. */
  models: { list(allowed: readonly string[] | null): Promise<Array<{ key: string; name: string }>> };
  /** The models with their settings schemas, as GET /v1/models lists them (the new-task page). */
  catalog: NewTaskCatalog;
  /** The account's tasks, for the tasks pages (the task service). */
  tasks: TasksPort;
  /** The ledger's entries (the ledger's `EntriesReader`), for the ledger page. */
  ledger: LedgerPort;
  /** The operator console at `/admin`; null (ADMIN_TOKEN unset) leaves every /admin page 404. */
  console?: ConsoleDeps | null;
  /** The service's public address: cookies are `Secure` when it is https. */
  publicBaseUrl: string;
  /** Wallet top-ups (the payments module's `TopupService`); without it the top-up pages are not served. */
  topups?: TopupPort;
  /** Library records, for the libraries pages (the libraries module's `LibraryService`). */
  libraries: LibrariesPort;
  /** Own uploads, for the uploads page (the files module's `UploadService`). */
  uploads: UploadsPort;
}

/** What the page files receive. */
export interface PageDeps extends Omit<WebDeps, 'publicBaseUrl' | 'console'> {
  assets: Assets;
  secure: boolean;
}

/**
 * Pages open without a session; every other page of this context needs one, and a signed-out visit goes
 * to `/signin?next=…`.
 */
const PUBLIC = new Set(['/signin', '/signup', '/signout', '/confirm', '/reset', '/reset/new', '/language']);
/** A year: asset links carry their content hash, so a changed file has a new link. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** The security headers of every dashboard answer. */
export const CONTENT_SECURITY_POLICY = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:', 'blob:'],
  connectSrc: ["'self'"],
  fontSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  upgradeInsecureRequests: null,
};

/** helmet's options: the policy above, no Referer anywhere, never framed (old browsers read X-Frame-Options). */
const HELMET = {
  contentSecurityPolicy: { directives: CONTENT_SECURITY_POLICY },
  referrerPolicy: { policy: 'no-referrer' as const },
  frameguard: { action: 'deny' as const },
};

function sendAsset(request: FastifyRequest, reply: FastifyReply, found: Asset | undefined): FastifyReply {
  if (!found) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
  const etag = `"${found.hash}"`;
  // Only a link naming this content's hash may be kept for a year; a bare name is revalidated by ETag.
  const hashed = (request.query as Record<string, unknown>).v === found.hash;
  reply.header('etag', etag).header('cache-control', hashed ? IMMUTABLE : 'no-cache');
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  return reply.type(found.type).send(found.body);
}

/** A page saying what went wrong, with the way back to the dashboard; a 404 is titled "Not found". */
function errorPage(context: WebContext, assets: Assets, message: string, status: number): string {
  const w = wordsOf(context.lang);
  const body = html`<p class="error" role="alert">${message}</p><p><a href="/">${w.back}</a></p>`;
  return page(context, assets, { title: status === 404 ? w.notFoundTitle : w.errorTitle, path: '/', body });
}

/** The context of a page answered without the dashboard's hooks: signed out, in `lang`. */
function signedOut(lang: Lang): WebContext {
  return { session: null, sessionToken: null, lang, csrf: '', flash: null, here: null };
}

/** Whether a path is the operator console's (`/admin`, `/admin/…`). */
function isConsolePath(path: string): boolean {
  return path === '/admin' || path.startsWith('/admin/');
}

/**
 * The context of the 404 page, which runs outside the dashboard's context (no cookie plugin, no hooks):
 * the session and the language read as `loadContext` reads them, but nothing is set or cleared. A failing
 * session read shows the signed-out header rather than turning a 404 into a 500.
 */
async function notFoundContext(
  request: FastifyRequest,
  cookies: Readonly<Record<string, string | undefined>>,
  people: PeoplePort,
): Promise<WebContext> {
  const token = cookies[SESSION_COOKIE];
  let session: WebSession | null = null;
  if (token) {
    try {
      session = await people.session(token);
    } catch (error) {
      request.log.warn({ err: error }, 'session of a 404 page could not be read');
    }
  }
  const lang = pageLang(request, cookies, session?.lang);
  if (session)
    return { session, sessionToken: token ?? null, lang, csrf: session.csrf, flash: null, here: null };
  const anon = cookies[ANON_CSRF_COOKIE] ?? '';
  return { ...signedOut(lang), csrf: isIssuedCsrf(anon) ? anon : '' };
}

/**
 * The dashboard's 404 page for a browser's visit to an address nobody serves (http/not-found.ts), with the
 * header of the person's actual state: signed in, their navigation; under `/admin` with the console served,
 * the console's page. In the language a page of theirs would have, with the dashboard's security headers
 * (helmet, as its pages have them).
 */
function notFoundPage(
  assets: Assets,
  people: PeoplePort,
  consoleNotFound: ConsoleNotFound | null,
): NotFoundPage {
  const securityHeaders = helmetHeaders(HELMET);
  return async (request, reply) => {
    await new Promise<void>((resolve, reject) =>
      securityHeaders(request.raw, reply.raw, (error?: unknown) => (error ? reject(error) : resolve())),
    );
    const cookies = fastifyCookie.parse(request.headers.cookie ?? '');
    const path = request.url.split('?')[0] ?? '/';
    if (consoleNotFound && isConsolePath(path)) {
      return sendHtml(reply, 404, consoleNotFound(cookies, pageLang(request, cookies)));
    }
    const context = await notFoundContext(request, cookies, people);
    return sendHtml(reply, 404, errorPage(context, assets, wordsOf(context.lang).notFound, 404));
  };
}

/**
 * Registers the dashboard's pages and assets on `app` in a context of their own. Returns its 404 page for
 * addresses nobody serves (`installNotFound`).
 */
export async function webRoutes(app: FastifyInstance, deps: WebDeps): Promise<NotFoundPage> {
  const assets = new Assets();
  const secure = deps.publicBaseUrl.startsWith('https:');
  const pageDeps: PageDeps = {
    people: deps.people,
    wallet: deps.wallet,
    models: deps.models,
    catalog: deps.catalog,
    tasks: deps.tasks,
    libraries: deps.libraries,
    uploads: deps.uploads,
    ledger: deps.ledger,
    assets,
    secure,
    ...(deps.topups ? { topups: deps.topups } : {}),
  };

  // Assets: no cookies, no session, same security headers.
  await app.register(async (files) => {
    await files.register(helmet, HELMET);
    files.get<{ Params: { name: string } }>(
      '/assets/:name',
      { schema: { hide: true } },
      async (request, reply) => sendAsset(request, reply, assets.own(request.params.name)),
    );
    files.get<{ Params: { name: string } }>(
      '/assets/vendor/:name',
      { schema: { hide: true } },
      async (request, reply) => sendAsset(request, reply, assets.vendor(request.params.name)),
    );
  });

  const consoleNotFound = deps.console
    ? await consoleRoutes(app, { ...deps.console, assets, secure, helmet: HELMET })
    : null;

  await app.register(async (web) => {
    await web.register(cookie);
    await web.register(formbody, { bodyLimit: FORM_BODY_LIMIT });
    // The route's own limit is the form's too, so a form sent with `Expect: 100-continue` is asked for its
    // body up to the size the form parser reads (http/body-gate.ts), not refused past the default 16 KB.
    web.addHook('onRoute', (route) => {
      route.bodyLimit ??= FORM_BODY_LIMIT;
    });
    await web.register(helmet, HELMET);
    web.addHook('preHandler', async (request, reply) => {
      const context = await loadContext(request, reply, { people: deps.people, secure });
      const path = request.url.split('?')[0] ?? '/';
      if (request.method === 'POST' && !csrfValid(request, context)) {
        // A private page's form sent after its session ended (signed out in another tab, expired): not a
        // form from another site, so the person is told so and signs in back to the page (each private
        // form posts to its own page's address) rather than meeting "This form has expired".
        if (!context.session && !PUBLIC.has(path) && request.cookies[SESSION_COOKIE] !== undefined) {
          setFlash(reply, 'flash_session_ended', secure);
          return reply
            .code(303)
            .header('cache-control', 'no-store')
            .header('location', `/signin?next=${encodeURIComponent(path)}`)
            .send();
        }
        return csrfRefused(reply, context, assets);
      }
      if (!context.session && !PUBLIC.has(path)) {
        const next = pageAddress(request) ?? path;
        return reply
          .code(303)
          .header('cache-control', 'no-store')
          .header('location', `/signin?next=${encodeURIComponent(next)}`)
          .send();
      }
    });
    // Any refusal or fault inside a page becomes a page in the person's language, never JSON.
    web.setErrorHandler(async (error, request, reply) => {
      let context: ReturnType<typeof contextOf> | null = null;
      try {
        context = contextOf(request);
      } catch {
        // Refused before the hook above ran (a form body too large or of another type): the session and
        // language read as the 404 page reads them, so the page keeps the person's header and words.
        context = await notFoundContext(request, request.cookies ?? {}, deps.people);
      }
      const lang = context.lang;
      const w = wordsOf(lang);
      const { status, refusal } = pageFailure(error, request);
      if (status >= 500) request.log.error({ err: error }, 'dashboard page failed');
      const message = refusal ? refusalOf(refusal, lang).message : w.errorTitle;
      return sendHtml(reply, status, errorPage(context, assets, message, status));
    });
    await authPages(web, pageDeps);
    await overviewPage(web, pageDeps);
    await keysPages(web, pageDeps);
    await settingsPages(web, pageDeps);
    await newTaskPage(web, pageDeps);
    await tasksPages(web, pageDeps);
    await taskDetailPages(web, pageDeps);
    await topupPages(web, pageDeps);
    await librariesPages(web, pageDeps);
    await uploadsPages(web, pageDeps);
    await ledgerPages(web, pageDeps);
  });
  return notFoundPage(assets, deps.people, consoleNotFound);
}
