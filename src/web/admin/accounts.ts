/**
 * The console's accounts (CONTRACT §13): search by e-mail or name (the newest without a query), and an
 * account's page: name, e-mail and its confirmation, balances, a `Credit` form whose reference is
 * pre-filled with a fresh one (a double submit credits once), its ledger, its keys with `Revoke` and
 * the dashboard's `Create key` form (the new key shown once, as the dashboard shows it), and attaching an
 * e-mail to an account without one.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../errors.ts';
import { characters } from '../../lib/index.ts';
import { ACCOUNT_SEARCH_LIMIT, ACCOUNT_SEARCH_MAX_LENGTH } from '../../people/index.ts';
import { field } from '../context.ts';
import { html, type VNode } from '../html.ts';
import { errorBox, type FormProblem, fieldProblem } from '../layout.ts';
import {
  type KeyForm,
  keepNewKey,
  keyForm,
  type NewKeyCookie,
  newKeyBox,
  readKeyForm,
  rublesToMinor,
  takeNewKey,
} from '../pages/keys.ts';
import {
  creditTopups,
  ledgerFilters,
  ledgerPager,
  ledgerProblemBox,
  ledgerQuery,
  ledgerTable,
  moscowDate,
} from '../pages/ledger.ts';
import { money } from '../pages/overview.ts';
import { refusalOf, seeOther, sendHtml } from '../respond.ts';
import { fill, type Words, wordsOf } from '../words.ts';
import { type ConsolePageDeps, consoleContextOf } from './index.ts';
import { type ConsoleContext, consoleCsrf, consolePage, doneOf } from './layout.ts';
import type { ConsoleAccount } from './port.ts';
import { accountTopups } from './topups.ts';

const HIDE = { schema: { hide: true } } as const;
const REFERENCE_MAX = 200;

/** The cookie carrying a key just made to the account's page, which shows it once (pages/keys.ts). */
function newKeyCookie(accountId: string): NewKeyCookie {
  return { name: 'gta_console_new_key', path: `/admin/accounts/${encodeURIComponent(accountId)}` };
}

function emailCell(account: ConsoleAccount, w: Words): VNode {
  if (account.email === null) return html`<span class="hint">${w.adminNoEmail}</span>`;
  return html`<span>${account.email}</span>
    <span class="hint"> (${account.email_confirmed ? w.adminConfirmed : w.adminUnconfirmed})</span>`;
}

interface AccountView {
  /** A refused `Credit`: its message, and the form's field it is about (`amount`, `reference`). */
  error?: FormProblem | null;
  amount?: string;
  reference?: string;
  /** A refused `Attach`: its message (and `email` when it is about the e-mail), and the e-mail as typed. */
  attachError?: FormProblem;
  email?: string;
  /** A refused `Create key`: its message (and field), and the form as typed. */
  keyError?: FormProblem;
  keyForm?: KeyForm;
  /** Where the key just made is taken from, shown this once. */
  newKey?: { request: FastifyRequest; reply: FastifyReply };
  status?: number;
}

/** Registers the accounts' pages and their forms on the console's context. */
export async function accountPages(app: FastifyInstance, deps: ConsolePageDeps): Promise<void> {
  app.get('/admin/accounts', HIDE, async (request, reply) => {
    const context = consoleContextOf(request);
    const w = wordsOf(context.lang);
    const locale = context.lang === 'ru' ? 'ru-RU' : 'en-US';
    const raw = (request.query as Record<string, unknown>).q;
    const q = typeof raw === 'string' ? raw.trim() : '';
    // A search longer than the API takes is said, not cut to a shorter one that finds something else.
    const tooLong = q.length > ACCOUNT_SEARCH_MAX_LENGTH;
    const accounts = tooLong ? [] : await deps.port.findAccounts(q === '' ? {} : { q });
    const body = html`<form class="filters" method="get" action="/admin/accounts" role="search">
        <label for="account-q">${w.adminSearchLabel}</label>
        <input id="account-q" name="q" type="search" value=${q} maxlength=${ACCOUNT_SEARCH_MAX_LENGTH} aria-invalid=${tooLong ? 'true' : undefined} />
        <button type="submit">${w.adminSearch}</button>
      </form>
      ${tooLong ? html`<p class="error" role="alert">${fill(w.adminSearchTooLong, { max: String(ACCOUNT_SEARCH_MAX_LENGTH) })}</p>` : ''}
      ${
        accounts.length >= ACCOUNT_SEARCH_LIMIT
          ? html`<p class="hint" role="status">${fill(w.adminAccountsCut, { count: String(ACCOUNT_SEARCH_LIMIT) })}</p>`
          : ''
      }
      ${
        tooLong
          ? ''
          : accounts.length === 0
            ? html`<p class="hint">${w.adminNoAccounts}</p>`
            : html`<table>
              <thead><tr><th>${w.adminName}</th><th>${w.email}</th><th>${w.available}</th><th>${w.adminCreated}</th></tr></thead>
              <tbody>
                ${accounts.map(
                  (a) => html`<tr>
                    <td><a href=${`/admin/accounts/${encodeURIComponent(a.id)}`}>${a.name}</a></td>
                    <td>${emailCell(a, w)}</td>
                    <td class="amount">${money(a.available_minor, locale)}</td>
                    <td><time datetime=${a.created_at}>${moscowDate(a.created_at)}</time></td>
                  </tr>`,
                )}
              </tbody>
            </table>`
      }`;
    return sendHtml(
      reply,
      tooLong ? 422 : 200,
      consolePage(context, deps.assets, { title: w.adminAccounts, path: '/admin/accounts', body }),
    );
  });

  const accountPage = async (
    context: ConsoleContext,
    id: string,
    query: unknown,
    view: AccountView,
  ): Promise<{ status: number; markup: string }> => {
    const w = wordsOf(context.lang);
    const locale = context.lang === 'ru' ? 'ru-RU' : 'en-US';
    const account = await deps.port.account(id);
    const keys = await deps.port.keys(id);
    const models = await deps.port.models();
    const issued = view.newKey
      ? takeNewKey(view.newKey.request, view.newKey.reply, newKeyCookie(id), keys)
      : null;
    const q = ledgerQuery(query);
    const ledger = q.problem
      ? { entries: [], next: null }
      : await deps.port.ledger(id, { filter: q.filter, cursor: q.cursor });
    // The console has no page of one top-up: a top-up's credit names it as text.
    const topups = {
      ids: await creditTopups(ledger.entries, (paymentIds) => deps.port.topupsOfPayments(id, paymentIds)),
      href: null,
    };
    const base = `/admin/accounts/${encodeURIComponent(id)}`;
    // A refusal about a field is said at it too, as the dashboard's forms say it (docs/dashboard.md).
    const amount = fieldProblem(view.error ?? null, 'amount');
    const reference = fieldProblem(view.error ?? null, 'reference');
    const email = fieldProblem(view.attachError ?? null, 'email');
    const body = html`${issued ? newKeyBox(issued.key, w.adminKeyShownOnce, w) : null}
      <section class="cards" aria-label=${w.balance}>
        <div class="card"><div>${w.adminName}</div><div class="amount">${account.name}</div><div>${emailCell(account, w)}</div></div>
        <div class="card"><div>${w.balance}</div><div class="amount" data-testid="balance">${money(account.balance_minor, locale)}</div></div>
        <div class="card"><div>${w.held}</div><div class="amount" data-testid="held">${money(account.held_minor, locale)}</div></div>
        <div class="card"><div>${w.available}</div><div class="amount" data-testid="available">${money(account.available_minor, locale)}</div></div>
      </section>
      <h2>${w.adminCredit}</h2>
      <form method="post" action=${`${base}/credit`} class="stack" autocomplete="off">
        ${consoleCsrf(context)}
        ${errorBox(view.error ?? null)}
        <label>${w.adminAmount}<input id="credit-amount" type="text" name="amount" inputmode="decimal" required value=${view.amount ?? ''} ...${amount.attributes} /></label>
        ${amount.note}
        <label>${w.adminReference}<input id="credit-reference" type="text" name="reference" required value=${view.reference ?? `console-${randomUUID()}`} ...${reference.attributes} /></label>
        ${reference.note}
        <p class="hint">${w.adminReferenceHint}</p>
        <button type="submit">${w.adminCredit}</button>
      </form>
      ${
        account.email === null
          ? html`<h2>${w.adminAttach}</h2>
              <form method="post" action=${`${base}/email`} class="stack">
                ${consoleCsrf(context)}
                ${errorBox(view.attachError ?? null)}
                <label>${w.email}<input id="attach-email" name="email" type="text" inputmode="email" autocapitalize="none" required value=${view.email ?? ''} ...${email.attributes} /></label>
                ${email.note}
                <button type="submit">${w.adminAttachButton}</button>
              </form>`
          : // A refused Attach of an account that has an e-mail by now (the form sent twice, or from a page
            // opened before): no form to show it in, so said here, never a silent 409.
            view.attachError
            ? errorBox(view.attachError)
            : null
      }
      <h2>${w.keys}</h2>
      ${
        keys.length === 0
          ? html`<p class="hint">${w.noKeys}</p>`
          : html`<table>
              <thead><tr><th>${w.keyPrefix}</th><th>${w.adminName}</th><th>${w.adminCreated}</th><th></th></tr></thead>
              <tbody>
                ${keys.map(
                  (k) => html`<tr>
                    <td><code>${k.prefix}</code></td>
                    <td>${k.name ?? ''}</td>
                    <td><time datetime=${k.created_at}>${moscowDate(k.created_at)}</time></td>
                    <td>${
                      k.revoked_at
                        ? html`<span class="hint">${w.adminRevoked}</span>`
                        : html`<form class="inline" method="post" action=${`${base}/revoke`}>
                            ${consoleCsrf(context)}
                            <input type="hidden" name="key_id" value=${k.id} />
                            <button type="submit" class="danger" aria-label=${`${w.revoke} ${k.prefix}`}>${w.revoke}</button>
                          </form>`
                    }</td>
                  </tr>`,
                )}
              </tbody>
            </table>`
      }
      <h2>${w.createKey}</h2>
      ${errorBox(view.keyError ?? null)}
      ${keyForm(context.lang, {
        action: `${base}/keys`,
        hidden: consoleCsrf(context),
        models,
        form: view.keyForm,
        error: view.keyError,
      })}
      ${await accountTopups(deps.port, id, context.lang)}
      <h2>${w.ledger}</h2>
      ${ledgerFilters(q, w, base, null)}
      ${ledgerProblemBox(q, w)}
      ${ledgerTable(ledger.entries, context.lang, null, topups)}
      ${ledgerPager(q, ledger.next, w, base)}`;
    const status = view.status ?? (q.problem ? 422 : 200);
    return {
      status,
      markup: consolePage(context, deps.assets, {
        title: account.name,
        path: base,
        body,
        done: view.error || view.attachError || view.keyError ? null : doneOf(query),
        islands: ['copy'],
      }),
    };
  };

  app.get<{ Params: { id: string } }>('/admin/accounts/:id', HIDE, async (request, reply) => {
    const context = consoleContextOf(request);
    const { status, markup } = await accountPage(context, request.params.id, request.query, {
      newKey: { request, reply },
    });
    return sendHtml(reply, status, markup);
  });

  app.post<{ Params: { id: string } }>('/admin/accounts/:id/credit', HIDE, async (request, reply) => {
    const context = consoleContextOf(request);
    const w = wordsOf(context.lang);
    const id = request.params.id;
    const amountText = field(request.body, 'amount');
    const reference = field(request.body, 'reference').trim();
    const amountMinor = rublesToMinor(amountText);
    const again = async (status: number, error: FormProblem) => {
      const { markup } = await accountPage(context, id, {}, { error, amount: amountText, reference, status });
      return sendHtml(reply, status, markup);
    };
    if (amountMinor === null || amountMinor === undefined) {
      return again(422, { message: w.adminBadAmount, field: 'amount' });
    }
    if (reference === '' || characters(reference) > REFERENCE_MAX) {
      return again(422, { message: w.adminBadReference, field: 'reference' });
    }
    try {
      const { created } = await deps.port.credit(id, amountMinor, reference);
      return seeOther(
        reply,
        `/admin/accounts/${encodeURIComponent(id)}?done=${created ? 'credited' : 'replayed'}`,
      );
    } catch (error) {
      const refusal = refusalOf(error, context.lang, {
        amount_minor: w.adminAmount,
        reference: w.adminReference,
      });
      if (refusal.status === 404) throw error;
      // The API's `amount_minor` is the form's Amount; a reference credited with another amount is the
      // Reference's problem (a new one is the way out).
      const about =
        refusal.field === 'amount_minor'
          ? 'amount'
          : refusal.code === 'credit_reference_conflict'
            ? 'reference'
            : refusal.field;
      return again(refusal.status, { message: refusal.message, field: about });
    }
  });

  app.post<{ Params: { id: string } }>('/admin/accounts/:id/keys', HIDE, async (request, reply) => {
    const context = consoleContextOf(request);
    const id = request.params.id;
    // The dashboard's checks, then the admin service's (10 active keys, an unknown model).
    const known = new Set((await deps.port.models()).map((m) => m.key));
    const read = readKeyForm(request.body, known, wordsOf(context.lang));
    const again = async (status: number, keyError: FormProblem) => {
      const { markup } = await accountPage(context, id, {}, { keyError, keyForm: read.form, status });
      return sendHtml(reply, status, markup);
    };
    if (read.request === null) return again(422, read.problem);
    try {
      const issued = await deps.port.issueKey(id, read.request);
      // Shown by the page the browser is sent to, so that a reload never makes a second key.
      keepNewKey(reply, newKeyCookie(id), issued, deps.secure);
      return seeOther(reply, `/admin/accounts/${encodeURIComponent(id)}`);
    } catch (error) {
      const refusal = refusalOf(error, context.lang);
      if (refusal.code === 'account_not_found') throw error;
      reply.headers(refusal.headers);
      return again(refusal.status, refusal);
    }
  });

  app.post<{ Params: { id: string } }>('/admin/accounts/:id/revoke', HIDE, async (request, reply) => {
    const id = request.params.id;
    const keyId = field(request.body, 'key_id');
    // Only a key of this account: the form names its account, so a key id from elsewhere is refused
    // (404, like an unknown key), never answered "Key revoked." with the key still working.
    const keys = await deps.port.keys(id);
    if (!keys.some((k) => k.id === keyId)) throw errors.keyNotFound(keyId);
    await deps.port.revokeKey(keyId);
    return seeOther(reply, `/admin/accounts/${encodeURIComponent(id)}?done=revoked`);
  });

  app.post<{ Params: { id: string } }>('/admin/accounts/:id/email', HIDE, async (request, reply) => {
    const context = consoleContextOf(request);
    const id = request.params.id;
    const email = field(request.body, 'email');
    try {
      await deps.port.attachEmail(id, email);
    } catch (error) {
      // Shown in the Attach form, the field named as it is labelled, with the e-mail kept for correcting.
      const refusal = refusalOf(error, context.lang, { email: wordsOf(context.lang).email });
      if (refusal.status === 404) throw error;
      const { markup } = await accountPage(
        context,
        id,
        {},
        { attachError: { message: refusal.message, field: refusal.field }, email, status: refusal.status },
      );
      return sendHtml(reply, refusal.status, markup);
    }
    return seeOther(reply, `/admin/accounts/${encodeURIComponent(id)}?done=attached`);
  });
}
