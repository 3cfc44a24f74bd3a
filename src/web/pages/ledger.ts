/**
 * The ledger (CONTRACT §13): the account's entries newest first (Moscow time, kind in words, signed
 * amount, the task, the top-up or the reference, the available amount after each), filters by kind and
 * period, cursor pages, and `GET /ledger.csv`, the same entries as CSV, paged through the ledger's reader
 * and streamed. A top-up's credit has its payment id as reference; the page asks the top-ups port which
 * top-ups a page's references are, once per page, and names and links them.
 * The amount's sign is its effect on the available money: a credit and a released hold add, a hold
 * takes, and a capture only turns held money into spent money (no sign).
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Lang } from '../../i18n/index.ts';
import type { EntryFilter, EntryKind, EntryPage, EntryView, PageOptions } from '../../ledger/index.ts';
import { CURRENCY, ENTRY_KINDS } from '../../ledger/index.ts';
import { moscowDay } from '../../lib/index.ts';
import { contextOf } from '../context.ts';
import { html, type VNode } from '../html.ts';
import { page } from '../layout.ts';
import { sendHtml } from '../respond.ts';
import type { PageDeps } from '../routes.ts';
import { fill, type Words, wordsOf } from '../words.ts';
import { money } from './overview.ts';

const HIDE = { schema: { hide: true } } as const;
/** Entries per page of the ledger page. */
export const LEDGER_PAGE = 50;
/** Entries per read of the CSV export. */
const CSV_BATCH = 500;

/** The ledger's read side, as the pages use it (the ledger's `EntriesReader`). */
export interface LedgerPort {
  page(accountId: string, options?: PageOptions): Promise<EntryPage>;
}

/**
 * The top-ups of a page's credits: payment id (a credit's reference) → top-up id, from the payments
 * module, scoped to the account by the caller.
 */
export type CreditTopups = ReadonlyMap<string, string>;

/**
 * Which of `entries`' credits are top-ups, asked of `lookup` (the account's top-ups of these payment ids)
 * in one call for the whole page; no call without credits or without top-ups (`lookup` null).
 */
export async function creditTopups(
  entries: readonly EntryView[],
  lookup: ((paymentIds: readonly string[]) => Promise<CreditTopups>) | null,
): Promise<CreditTopups> {
  const references = entries.flatMap((entry) =>
    entry.type === 'credit' && entry.reference !== null ? [entry.reference] : [],
  );
  return lookup && references.length > 0 ? lookup(references) : new Map();
}

/** The top-up of a credit, if it is one. */
function topupOf(entry: EntryView, topups: CreditTopups): string | undefined {
  return entry.type === 'credit' && entry.reference !== null ? topups.get(entry.reference) : undefined;
}

/** The first supported date of the filters: nothing in a ledger is older than the Unix epoch. */
export const LEDGER_MIN_DATE = '1970-01-01';
/** The last supported date: later ones have no four-digit year, and `created_at` is compared as text. */
export const LEDGER_MAX_DATE = '9999-12-31';

/** What is wrong with a ledger query, to be said in the person's words (`ledgerProblemBox`). */
export type LedgerProblem =
  | { word: 'ledgerBadKind' }
  /** Not written as `YYYY-MM-DD`, not a day of the calendar, or outside the supported dates. */
  | { word: 'ledgerBadDate' | 'ledgerNoSuchDay' | 'ledgerDateRange'; field: 'from' | 'to'; date: string }
  | { word: 'ledgerFromAfterTo'; from: string; to: string };

/** The filters of a ledger request as typed in its query, with what they mean. */
export interface LedgerQuery {
  kind: EntryKind | '';
  from: string;
  to: string;
  cursor: string | null;
  filter: EntryFilter;
  /** The problem with the query, when it has one (the page answers 422 and lists nothing). */
  problem: LedgerProblem | null;
}

/**
 * The UTC instant a Moscow calendar date (`YYYY-MM-DD`) starts, or what is wrong with it. Dates are
 * compared as text with `LEDGER_MIN_DATE` and `LEDGER_MAX_DATE` before `Date.UTC`, which would read the
 * years 0-99 as 1900-1999.
 */
function moscowStart(date: string, field: 'from' | 'to'): Date | LedgerProblem {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!match) return { word: 'ledgerBadDate', field, date };
  const noon = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]), 12));
  if (Number.isNaN(noon.getTime()) || noon.toISOString().slice(0, 10) !== date) {
    const inRange = date >= LEDGER_MIN_DATE && date <= LEDGER_MAX_DATE;
    return { word: inRange ? 'ledgerNoSuchDay' : 'ledgerDateRange', field, date };
  }
  if (date < LEDGER_MIN_DATE || date > LEDGER_MAX_DATE) return { word: 'ledgerDateRange', field, date };
  return moscowDay(noon).start;
}

/**
 * A query parameter's text. Sent more than once (a hand-edited address), its values joined, so the filter
 * is refused as written ("2030-01-01, 2030-02-01") instead of dropped while the page lists everything.
 */
const text = (value: unknown): string =>
  typeof value === 'string' ? value.trim() : Array.isArray(value) ? value.map(String).join(', ') : '';

/** Reads `kind`, `from`, `to` (Moscow dates, both included) and `cursor` of a query. */
export function ledgerQuery(query: unknown): LedgerQuery {
  const q = (query && typeof query === 'object' ? query : {}) as Record<string, unknown>;
  const kind = text(q.kind);
  const from = text(q.from);
  const to = text(q.to);
  const cursor = text(q.cursor) || null;
  const filter: EntryFilter = {};
  let problem: LedgerProblem | null = null;
  if (kind !== '') {
    if ((ENTRY_KINDS as readonly string[]).includes(kind)) filter.kinds = [kind as EntryKind];
    else problem = { word: 'ledgerBadKind' };
  }
  if (from !== '') {
    const start = moscowStart(from, 'from');
    if (start instanceof Date) filter.from = start.toISOString();
    else problem = start;
  }
  if (to !== '') {
    const start = moscowStart(to, 'to');
    if (start instanceof Date) filter.to = moscowDay(start).end.toISOString();
    else problem = start;
  }
  // Both days are included, so From after To can match nothing: say so rather than list nothing.
  if (!problem && filter.from && filter.to && filter.from >= filter.to) {
    problem = { word: 'ledgerFromAfterTo', from, to };
  }
  const known = problem?.word === 'ledgerBadKind' ? '' : (kind as EntryKind | '');
  return { kind: known, from, to, cursor, filter, problem };
}

/** The alert saying what is wrong with the query, in the person's words; null without a problem. */
export function ledgerProblemBox(q: LedgerQuery, w: Words): VNode | null {
  const problem = q.problem;
  if (!problem) return null;
  const label = (field: 'from' | 'to') =>
    fill(w.ledgerFieldNamed, { label: field === 'from' ? w.ledgerFrom : w.ledgerTo });
  const message =
    problem.word === 'ledgerBadKind'
      ? w.ledgerBadKind
      : problem.word === 'ledgerFromAfterTo'
        ? fill(w.ledgerFromAfterTo, { from: problem.from, to: problem.to })
        : fill(w[problem.word], {
            field: label(problem.field),
            date: problem.date,
            min: LEDGER_MIN_DATE,
            max: LEDGER_MAX_DATE,
          });
  return html`<p class="error" role="alert">${message}</p>`;
}

/** The query string of the filters (without the cursor), `?…` or ''. */
function filterQuery(q: LedgerQuery, cursor?: string): string {
  const params = new URLSearchParams();
  if (q.kind) params.set('kind', q.kind);
  if (q.from) params.set('from', q.from);
  if (q.to) params.set('to', q.to);
  if (cursor) params.set('cursor', cursor);
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** An instant as Moscow date and time (`2026-03-10 15:04`). */
export function moscowTime(iso: string): string {
  return new Date(iso).toLocaleString('sv-SE', { timeZone: 'Europe/Moscow' }).slice(0, 16);
}

/** An instant's Moscow date (`2026-03-10`). */
export function moscowDate(iso: string): string {
  return moscowTime(iso).slice(0, 10);
}

function signed(entry: EntryView, locale: string): string {
  const amount = money(entry.amount_minor, locale);
  if (entry.type === 'credit' || entry.type === 'void') return `+${amount}`;
  if (entry.type === 'hold') return `−${amount}`;
  return amount;
}

/**
 * The table of entries, shared with the operator console. `taskHref` gives a task entry's link
 * (null: the id as text); a credit of a top-up (`topups.ids`) is named by its top-up, linked by
 * `topups.href` (null: as text), its payment id (the reference) after it.
 */
export function ledgerTable(
  entries: readonly EntryView[],
  lang: Lang,
  taskHref: ((taskId: string) => string) | null,
  topups: { ids: CreditTopups; href: ((topupId: string) => string) | null } = { ids: new Map(), href: null },
): VNode {
  const w = wordsOf(lang);
  const locale = lang === 'ru' ? 'ru-RU' : 'en-US';
  if (entries.length === 0) return html`<p class="hint">${w.ledgerNone}</p>`;
  const topup = (id: string, reference: string) => {
    const name = fill(w.ledgerTopup, { id });
    return html`${topups.href ? html`<a href=${topups.href(id)}>${name}</a>` : html`<span>${name}</span>`}${' '}<span class="hint">${reference}</span>`;
  };
  const what = (entry: EntryView) => {
    const topupId = topupOf(entry, topups.ids);
    return entry.task_id
      ? taskHref
        ? html`<a href=${taskHref(entry.task_id)}>${fill(w.ledgerTask, { id: entry.task_id })}</a>`
        : html`<code>${entry.task_id}</code>`
      : topupId
        ? topup(topupId, entry.reference ?? '')
        : html`<span>${entry.reference ?? ''}</span>`;
  };
  return html`<table class="ledger stack-narrow">
    <thead>
      <tr><th>${w.ledgerWhen}</th><th>${w.ledgerKind}</th><th>${w.ledgerAmount}</th><th>${w.ledgerFor}</th><th>${w.ledgerAfter}</th></tr>
    </thead>
    <tbody>
      ${entries.map(
        (entry) => html`<tr data-entry=${entry.id}>
          <td data-label=${w.ledgerWhen}><time datetime=${entry.created_at}>${moscowTime(entry.created_at)}</time></td>
          <td data-label=${w.ledgerKind}>${w[`kind_${entry.type}`]}</td>
          <td data-label=${w.ledgerAmount} class=${`amount ${entry.type}`}>${signed(entry, locale)}</td>
          <td data-label=${w.ledgerFor}>${what(entry)}</td>
          <td data-label=${w.ledgerAfter} class="amount">${money(entry.available_after_minor, locale)}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

/** The filters' form (GET), for `action`. */
export function ledgerFilters(q: LedgerQuery, w: Words, action: string, csv: string | null): VNode {
  return html`<form class="filters" method="get" action=${action}>
    <label>${w.ledgerKind}
      <select id="ledger-kind" name="kind">
        <option value="" selected=${q.kind === ''}>${w.ledgerAllKinds}</option>
        ${ENTRY_KINDS.map((kind) => html`<option value=${kind} selected=${q.kind === kind}>${w[`kind_${kind}`]}</option>`)}
      </select>
    </label>
    <label>${w.ledgerFrom}
      <input id="ledger-from" type="date" name="from" value=${q.from} min=${LEDGER_MIN_DATE} max=${LEDGER_MAX_DATE} />
    </label>
    <label>${w.ledgerTo}
      <input id="ledger-to" type="date" name="to" value=${q.to} min=${LEDGER_MIN_DATE} max=${LEDGER_MAX_DATE} />
    </label>
    <button type="submit" class="secondary">${w.ledgerFilter}</button>
    ${csv === null ? null : html`<a class="button" href=${`${csv}${filterQuery(q)}`} download="">${w.ledgerCsv}</a>`}
  </form>`;
}

/** Links to the next (older) page and back to the newest. */
export function ledgerPager(q: LedgerQuery, next: string | null, w: Words, action: string): VNode {
  return html`<p class="pager">
    ${q.cursor ? html`<a href=${`${action}${filterQuery(q)}`}>${w.ledgerNewest}</a>` : null}
    ${next ? html`<a rel="next" href=${`${action}${filterQuery(q, next)}`}>${w.ledgerOlder}</a>` : null}
  </p>`;
}

/** A text cell a spreadsheet would not read as a formula: a leading `=`, `+`, `-`, `@` gets a `'`. */
export function safeCell(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** The CSV export's columns, in order. */
export const CSV_COLUMNS = [
  'id',
  'created_at',
  'kind',
  'amount_minor',
  'amount_rub',
  'currency',
  'task_id',
  'reference',
  'topup_id',
] as const;

/**
 * One CSV line (CRLF-terminated) of an entry; amounts as stored, unsigned (the kind tells the way);
 * `topup_id` the top-up a credit came from (`topups`), else empty.
 */
export function csvLine(entry: EntryView, topups: CreditTopups = new Map()): string {
  const rub = `${Math.trunc(entry.amount_minor / 100)}.${String(entry.amount_minor % 100).padStart(2, '0')}`;
  const cells = [
    safeCell(entry.id),
    safeCell(entry.created_at),
    safeCell(entry.type),
    String(entry.amount_minor),
    rub,
    safeCell(CURRENCY),
    safeCell(entry.task_id ?? ''),
    safeCell(entry.reference ?? ''),
    safeCell(topupOf(entry, topups) ?? ''),
  ];
  return `${cells.map(csvField).join(',')}\r\n`;
}

/**
 * Every matching entry as CSV lines, read a batch at a time, each batch's top-ups asked of `topups` in one
 * call. The first chunk is the header with the first batch, so the caller's first `next()` reads the
 * database before anything is answered.
 */
export async function* csvLines(
  ledger: LedgerPort,
  accountId: string,
  filter: EntryFilter,
  topups: ((paymentIds: readonly string[]) => Promise<CreditTopups>) | null = null,
): AsyncGenerator<string> {
  let header = `${CSV_COLUMNS.join(',')}\r\n`;
  let cursor: string | null = null;
  do {
    const batch: EntryPage = await ledger.page(accountId, {
      filter,
      cursor,
      limit: CSV_BATCH,
      balances: false,
    });
    const ids = await creditTopups(batch.entries, topups);
    yield header + batch.entries.map((entry) => csvLine(entry, ids)).join('');
    header = '';
    cursor = batch.next;
  } while (cursor);
}

/** Today's Moscow date, for the export's file name. */
function today(): string {
  return new Date().toLocaleDateString('en-CA', { timeZone: 'Europe/Moscow' });
}

/** Registers `GET /ledger` and `GET /ledger.csv` on the dashboard's context. */
export async function ledgerPages(app: FastifyInstance, deps: PageDeps): Promise<void> {
  // The account's own top-ups only: another account's payment id, taken as an operator's reference, is text.
  const topupsOf = (accountId: string) => {
    const port = deps.topups;
    return port ? (paymentIds: readonly string[]) => port.ofPayments(accountId, paymentIds) : null;
  };
  app.get('/ledger', HIDE, async (request, reply) => {
    const context = contextOf(request);
    const session = context.session;
    if (!session) throw new Error('private page without a session');
    const w = wordsOf(context.lang);
    const q = ledgerQuery(request.query);
    const found = q.problem
      ? { entries: [], next: null }
      : await deps.ledger.page(session.accountId, { filter: q.filter, cursor: q.cursor, limit: LEDGER_PAGE });
    const topups = {
      ids: await creditTopups(found.entries, topupsOf(session.accountId)),
      href: (id: string) => `/topups/${encodeURIComponent(id)}`,
    };
    const body = html`<p class="hint">${w.ledgerIntro}</p>
      ${ledgerFilters(q, w, '/ledger', '/ledger.csv')}
      ${ledgerProblemBox(q, w)}
      ${ledgerTable(found.entries, context.lang, (id) => `/tasks/${encodeURIComponent(id)}`, topups)}
      ${ledgerPager(q, found.next, w, '/ledger')}`;
    return sendHtml(
      reply,
      q.problem ? 422 : 200,
      page(context, deps.assets, { title: w.ledger, path: '/ledger', body }),
    );
  });

  app.get('/ledger.csv', HIDE, async (request, reply) => {
    const context = contextOf(request);
    const session = context.session;
    if (!session) throw new Error('private page without a session');
    const q = ledgerQuery(request.query);
    if (q.problem) {
      const w = wordsOf(context.lang);
      const body = html`${ledgerProblemBox(q, w)}<p><a href="/ledger">${w.ledger}</a></p>`;
      return sendHtml(reply, 422, page(context, deps.assets, { title: w.ledger, path: '/ledger', body }));
    }
    // The first batch is read before answering, so a failing read is an error page, not a cut file.
    const lines = csvLines(deps.ledger, session.accountId, q.filter, topupsOf(session.accountId));
    const first = await lines.next();
    const stream = Readable.from(
      (async function* () {
        if (!first.done) yield first.value;
        yield* lines;
      })(),
    );
    return reply
      .code(200)
      .header('cache-control', 'no-store')
      .header('content-disposition', `attachment; filename="ledger-${today()}.csv"`)
      .type('text/csv; charset=utf-8')
      .send(stream);
  });
}
