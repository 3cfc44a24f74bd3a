/**
 * Top-ups (CONTRACT §13, §14): `/topup` with the `Amount` field (rubles) and the `Top up` button, whose
 * island posts to `/v1/topups` and goes to the payment's confirmation page (the form also works without
 * scripts, through the same service, by way of the top-up's page and its link to the payment);
 * `/topups/{id}`, where the payer comes back, showing the state and refreshing while it is pending (each
 * read reads the payment back); and, only with `PAYMENTS=test`, the test payment page `/topups/{id}/pay`
 * with Pay and Decline, for the top-up's owner only.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../errors.ts';
import { contextOf, field, type WebContext } from '../context.ts';
import { html, type VNode } from '../html.ts';
import { csrfField, errorBox, type FormProblem, fieldProblem, page } from '../layout.ts';
import { refusalOf, seeOther, sendHtml } from '../respond.ts';
import type { PageDeps } from '../routes.ts';
import { fill, wordsOf } from '../words.ts';
import { rublesToMinor } from './keys.ts';
import { moscowDate } from './ledger.ts';
import { money } from './overview.ts';
import { topupState, topupsTable } from './topups-table.ts';

const HIDE = { schema: { hide: true } } as const;
/** Smallest and largest top-up (kopecks), as the API takes them. */
const MIN_MINOR = 100;
const MAX_MINOR = 100_000_000;

/** A top-up as the pages show it. */
export interface WebTopup {
  id: string;
  status: 'pending' | 'succeeded' | 'canceled';
  amount_minor: number;
  confirmation_url: string | null;
  return_url: string;
  created_at: string;
}

/** What the top-up pages call (the payments module's `TopupService`). */
export interface TopupPort {
  /** `test`, `yookassa`, or null when top-ups are off. */
  readonly mode: string | null;
  list(
    accountId: string,
    query: { limit?: number; cursor?: string },
  ): Promise<{ topups: WebTopup[]; next_cursor: string | null }>;
  get(accountId: string, id: string): Promise<WebTopup>;
  /**
   * The account's credited top-ups of these payment ids (a ledger page's references), as payment id →
   * top-up id, in one query; another account's payment is never among them.
   */
  ofPayments(accountId: string, paymentIds: readonly string[]): Promise<ReadonlyMap<string, string>>;
  /** `waitMs`: how long a send under a key still being processed waits for it, then 409 request_in_progress. */
  create(
    accountId: string,
    body: { amount_minor: number },
    idempotencyKey: string | null,
    waitMs: number,
  ): Promise<{ topup: WebTopup }>;
  decideTest(accountId: string, id: string, outcome: 'succeeded' | 'canceled'): Promise<WebTopup>;
}

function session(context: WebContext) {
  if (!context.session) throw new Error('private page without a session');
  return context.session;
}

function formOf(context: WebContext, port: TopupPort, problem: FormProblem | null, amount: string): VNode {
  const w = wordsOf(context.lang);
  const invalid = fieldProblem(problem, 'amount');
  const who = session(context);
  if (port.mode === null) return html`<p class="error" role="alert">${w.topupOff}</p>`;
  if (!who.emailConfirmed)
    return html`<p class="error" role="alert">${fill(w.topupUnconfirmed, { email: who.email })}</p>`;
  return html`<form class="stack topup-form" method="post" action="/topup" data-topup-form="" data-bad=${w.topupBadAmount}>
    ${csrfField(context)}
    <input type="hidden" name="form_key" value=${randomUUID()} />
    ${errorBox(problem)}
    <p class="error" role="alert" data-topup-error="" hidden></p>
    <label>${w.topupAmount}<input type="text" name="amount" inputmode="decimal" required autocomplete="off" value=${amount} ...${invalid.attributes} /></label>
    ${invalid.note}
    <p class="hint">${w.topupAmountHint}</p>
    <button type="submit">${w.topUp}</button>
  </form>`;
}

/** Top-ups a page of `/topup` lists; `Older top-ups` goes on from the last. */
const TOPUP_LIST_PAGE = 20;

async function topupPage(
  context: WebContext,
  deps: PageDeps & { topups: TopupPort },
  problem: FormProblem | null = null,
  amount = '',
  cursor: string | null = null,
): Promise<string> {
  const w = wordsOf(context.lang);
  const { topups, next_cursor } = await deps.topups.list(session(context).accountId, {
    limit: TOPUP_LIST_PAGE,
    ...(cursor ? { cursor } : {}),
  });
  const body = html`${formOf(context, deps.topups, problem, amount)}
    <h2>${w.topupRecent}</h2>
    ${topupsTable(topups, context.lang)}
    <p class="pager">
      ${cursor ? html`<a href="/topup">${w.topupNewest}</a>` : null}
      ${next_cursor ? html`<a rel="next" href=${`/topup?${new URLSearchParams({ cursor: next_cursor })}`}>${w.topupOlder}</a>` : null}
    </p>`;
  return page(context, deps.assets, { title: w.topUpTitle, path: '/topup', body, islands: ['topup'] });
}

/**
 * The ledger's credits from a top-up's day on, where its own credit is (the payment may succeed days after
 * the top-up was made, never before): each names its top-up and links back here (ledger.ts).
 */
function creditsSince(createdAt: string): string {
  return `/ledger?${new URLSearchParams({ kind: 'credit', from: moscowDate(createdAt) })}`;
}

function statusBody(context: WebContext, topup: WebTopup): VNode {
  const w = wordsOf(context.lang);
  const locale = context.lang === 'ru' ? 'ru-RU' : 'en-US';
  const amount = money(topup.amount_minor, locale);
  const note =
    topup.status === 'succeeded'
      ? html`<p class="flash" role="status">${fill(w.topupDone, { amount })}</p>
          <p><a href=${creditsSince(topup.created_at)}>${w.topupInLedger}</a></p>`
      : topup.status === 'canceled'
        ? html`<p class="error" role="status">${w.topupCanceledNote}</p>`
        : // The script that reloads the page says so; without it the page offers to check again.
          html`<p class="hint" data-topup-poll=${topup.id} data-refreshes=${w.topupRefreshes}>${w.topupWaiting}${' '}<a href=${`/topups/${encodeURIComponent(topup.id)}`}>${w.topupCheckAgain}</a></p>
            ${topup.confirmation_url ? html`<p><a href=${topup.confirmation_url}>${w.topupContinue}</a></p>` : null}`;
  return html`<section class="cards">
      <div class="card"><div>${w.topupAmount}</div><div class="amount">${amount}</div></div>
      <div class="card"><div>${w.topupState}</div>
        <div class="amount" data-testid="topup-status" data-status=${topup.status}>${topupState(topup.status, w)}</div></div>
    </section>
    ${note}
    <p><a href="/topup">${w.topupBackToList}</a></p>`;
}

/** An http(s) origin whose host is a name, an IPv4 or a bracketed IPv6 address, with an optional port. */
const SOURCE_ORIGIN = /^https?:\/\/(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::[0-9]+)?$/;

/**
 * A Content-Security-Policy whose `form-action` also allows the origin of `url` (http or https, as
 * `return_url` is). Browsers hold a form's redirects to `form-action` too: with `'self'` alone, Pay on the
 * test payment page of a top-up returning to another site would credit the wallet and leave the payer on
 * a page whose buttons no longer do anything.
 */
function withFormTarget(policy: string, url: string): string {
  const origin = new URL(url).origin;
  // A URL's host may hold `;`, `,` or `'`, which would end the directive and start another of the
  // caller's choosing: only an origin that is a plain source expression is added.
  if (!SOURCE_ORIGIN.test(origin)) return policy;
  return policy
    .split(';')
    .map((directive) => {
      const [name = '', ...sources] = directive.trim().split(/\s+/);
      return name === 'form-action' && !sources.includes(origin)
        ? [name, ...sources, origin].join(' ')
        : directive;
    })
    .join(';');
}

/**
 * The Idempotency-Key of a top-up form sent without scripts: the form's own random key (a fresh one on
 * every render) with the amount, so a form sent twice (a double click, a resent POST) makes one top-up,
 * and the same form sent again with another amount (after Back) is another top-up rather than a 409.
 * The island builds the same key for its `POST /v1/topups` (client/topup.ts). Null for a form without one.
 */
export function topupFormKey(formKey: string, amountMinor: number): string | null {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(formKey)
    ? `topup-form-${formKey}-${amountMinor}`
    : null;
}

/**
 * How long a form sent again waits for its first send, which may be waiting on the provider (ms): a double
 * click sends the form twice, the browser shows the second answer, and that answer must be the same top-up
 * rather than a 409 request_in_progress whose form, with a new key, would make another.
 */
const SAME_FORM_WAIT_MS = 15_000;

/** Registers the top-up pages when the service has top-ups wired. */
export async function topupPages(app: FastifyInstance, deps: PageDeps): Promise<void> {
  const port = deps.topups;
  if (!port) return;
  const full = { ...deps, topups: port };

  app.get('/topup', HIDE, async (request, reply) => {
    const cursor = (request.query as Record<string, unknown>).cursor;
    const from = typeof cursor === 'string' && cursor !== '' ? cursor : null;
    return sendHtml(reply, 200, await topupPage(contextOf(request), full, null, '', from));
  });

  // Without scripts the form posts here and goes on from the top-up's page; the island posts to
  // /v1/topups and goes to the payment page itself.
  app.post('/topup', HIDE, async (request, reply) => {
    const context = contextOf(request);
    const w = wordsOf(context.lang);
    const amount = field(request.body, 'amount');
    const minor = rublesToMinor(amount);
    if (minor === null || minor === undefined || minor < MIN_MINOR || minor > MAX_MINOR)
      return sendHtml(
        reply,
        422,
        await topupPage(context, full, { message: w.topupBadAmount, field: 'amount' }, amount),
      );
    try {
      const key = topupFormKey(field(request.body, 'form_key'), minor);
      const accountId = session(context).accountId;
      const { topup } = await port.create(accountId, { amount_minor: minor }, key, SAME_FORM_WAIT_MS);
      // The top-up's own page, whose link goes on to the payment: the policy's `form-action 'self'` holds
      // a form's redirect too, so a 303 straight to the provider's checkout would leave the payer here.
      return seeOther(reply, `/topups/${topup.id}`);
    } catch (error) {
      const refusal = refusalOf(error, context.lang);
      reply.headers(refusal.headers);
      return sendHtml(reply, refusal.status, await topupPage(context, full, refusal, amount));
    }
  });

  app.get<{ Params: { id: string } }>('/topups/:id', HIDE, async (request, reply) => {
    const context = contextOf(request);
    const w = wordsOf(context.lang);
    const topup = await port.get(session(context).accountId, request.params.id);
    const body = statusBody(context, topup);
    const islands = topup.status === 'pending' ? ['topup-status'] : [];
    return sendHtml(
      reply,
      200,
      page(context, deps.assets, { title: w.topUpTitle, path: '/topup', body, islands }),
    );
  });

  app.get<{ Params: { id: string } }>('/topups/:id/pay', HIDE, async (request, reply) => {
    const context = contextOf(request);
    const w = wordsOf(context.lang);
    if (port.mode !== 'test') throw errors.topupNotFound(request.params.id);
    const topup = await port.get(session(context).accountId, request.params.id);
    const locale = context.lang === 'ru' ? 'ru-RU' : 'en-US';
    const action = `/topups/${topup.id}/pay`;
    const body =
      topup.status !== 'pending'
        ? html`<p role="status">${w.topupFinished}</p><p><a href=${`/topups/${topup.id}`}>${topupState(topup.status, w)}</a></p>`
        : html`<section class="cards"><div class="card"><div>${w.topupAmount}</div>
              <div class="amount">${money(topup.amount_minor, locale)}</div></div></section>
            <p class="hint">${w.topupPayNote}</p>
            <div class="topup-pay">
              <form class="inline" method="post" action=${action}>
                ${csrfField(context)}<input type="hidden" name="action" value="pay" />
                <button type="submit">${w.topupPay}</button>
              </form>
              <form class="inline" method="post" action=${action}>
                ${csrfField(context)}<input type="hidden" name="action" value="decline" />
                <button type="submit" class="danger">${w.topupDecline}</button>
              </form>
            </div>`;
    // Pay and Decline end at the top-up's return_url, which an API client may have set to a site of its own.
    const policy = reply.getHeader('content-security-policy');
    if (topup.status === 'pending' && typeof policy === 'string')
      reply.header('content-security-policy', withFormTarget(policy, topup.return_url));
    return sendHtml(reply, 200, page(context, deps.assets, { title: w.topupPayTitle, path: '/topup', body }));
  });

  app.post<{ Params: { id: string } }>('/topups/:id/pay', HIDE, async (request, reply) => {
    const context = contextOf(request);
    if (port.mode !== 'test') throw errors.topupNotFound(request.params.id);
    // Only the page's two buttons decide: any other post (a hand-made form without `action`) moves nothing.
    const action = field(request.body, 'action');
    if (action !== 'pay' && action !== 'decline') {
      throw errors.invalidRequest({ en: 'action: pay or decline', ru: 'action: pay или decline' });
    }
    const outcome = action === 'pay' ? 'succeeded' : 'canceled';
    const topup = await port.decideTest(session(context).accountId, request.params.id, outcome);
    // Like a provider's page: back to where the top-up asked the payer to return.
    // Written as the URL parser writes it (percent-encoded): top-ups made before it was stored that way.
    return seeOther(reply, new URL(topup.return_url).href);
  });
}
