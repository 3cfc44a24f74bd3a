/**
 * A table of top-ups: when, amount, state, and a link to each top-up's page. The top-up page lists the
 * person's own; the operator console may include it with `account` set to show whose they are.
 */
import { html, type VNode } from '../html.ts';
import { type Words, wordsOf } from '../words.ts';
import { moscowTime } from './ledger.ts';
import { money } from './overview.ts';

/** What the table shows of a top-up. */
export interface TopupRow {
  id: string;
  status: 'pending' | 'succeeded' | 'canceled';
  amount_minor: number;
  created_at: string;
  /** Shown in a column of its own when given (the operator's view). */
  account_id?: string;
  /** The operator's view: when its succeeded payment was found not creditable (payments/topup-service.ts). */
  needs_operator_at?: string | null;
}

/** The localised word of a top-up's state. */
export function topupState(status: TopupRow['status'], w: Words): string {
  return status === 'succeeded'
    ? w.topup_succeeded
    : status === 'canceled'
      ? w.topup_canceled
      : w.topup_pending;
}

/**
 * Renders the table in `lang`; `link` makes each id a link (`/topups/{id}` by default, null for none);
 * `account` adds a column of whose each top-up is (the operator's view).
 * An empty list is a sentence, not an empty table.
 */
export function topupsTable(
  rows: readonly TopupRow[],
  lang: 'en' | 'ru',
  options: {
    /** Shows whose each top-up is, linked to this address of the account. */
    account?: (accountId: string) => string;
    link?: ((id: string) => string) | null;
  } = {},
): VNode {
  const w = wordsOf(lang);
  const locale = lang === 'ru' ? 'ru-RU' : 'en-US';
  if (rows.length === 0) return html`<p class="hint">${w.topupNone}</p>`;
  const link = options.link === undefined ? (id: string) => `/topups/${id}` : options.link;
  return html`<table class="topups stack-narrow">
    <thead><tr>
      <th>${w.topupWhen}</th>${options.account ? html`<th>${w.topupAccount}</th>` : null}
      <th>${w.topupAmount}</th><th>${w.topupState}</th><th>${w.topupId}</th>
    </tr></thead>
    <tbody>
      ${rows.map(
        (row) => html`<tr data-status=${row.status}>
          <td data-label=${w.topupWhen}><time datetime=${row.created_at}>${moscowTime(row.created_at)}</time></td>
          ${
            options.account
              ? html`<td data-label=${w.topupAccount}><a href=${options.account(row.account_id ?? '')}><code>${row.account_id ?? ''}</code></a></td>`
              : null
          }
          <td data-label=${w.topupAmount}>${money(row.amount_minor, locale)}</td>
          <td data-label=${w.topupState}><span class=${`state state-${row.status}`}>${topupState(row.status, w)}</span>${
            row.needs_operator_at
              ? html` <strong class="needs-operator">${w.adminTopupNeedsOperator}</strong>`
              : null
          }</td>
          <td data-label=${w.topupId}>${link ? html`<a href=${link(row.id)}><code>${row.id}</code></a>` : html`<code>${row.id}</code>`}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}
