/**
 * The console's top-ups (CONTRACT §14, issue "Operator: top-ups in the console"): every account's
 * top-ups newest first, filtered by state and by account (`?account=`), a page at a time, each linked
 * to its account; an account's newest top-ups are on its page, with a link on to the older ones here.
 * Read through the payments module's operator list, as `GET /admin/v1/topups` does.
 */
import type { FastifyInstance } from 'fastify';
import { html, type VNode } from '../html.ts';
import { type TopupRow, topupState, topupsTable } from '../pages/topups-table.ts';
import { sendHtml } from '../respond.ts';
import { type Words, wordsOf } from '../words.ts';
import { type ConsolePageDeps, consoleContextOf } from './index.ts';
import { consolePage } from './layout.ts';
import type { ConsolePort } from './port.ts';

const HIDE = { schema: { hide: true } } as const;
const STATES: ReadonlyArray<TopupRow['status']> = ['pending', 'succeeded', 'canceled'];

/** The console's link to an account. */
export function accountHref(accountId: string): string {
  return `/admin/accounts/${encodeURIComponent(accountId)}`;
}

interface TopupsQuery {
  accountId?: string;
  status?: TopupRow['status'];
  cursor?: string;
}

/** The address of a page of `/admin/topups` (an account's, a state's, from a cursor on). */
function topupsHref(query: TopupsQuery): string {
  const params = new URLSearchParams({
    ...(query.accountId ? { account: query.accountId } : {}),
    ...(query.status ? { status: query.status } : {}),
    ...(query.cursor ? { cursor: query.cursor } : {}),
  });
  return `/admin/topups${params.size > 0 ? `?${params}` : ''}`;
}

/** An account's top-ups on its console page: the newest page of them, and a link on to the older ones. */
export async function accountTopups(port: ConsolePort, accountId: string, lang: 'en' | 'ru'): Promise<VNode> {
  const w = wordsOf(lang);
  const { topups, next_cursor } = await port.topups({ accountId });
  return html`<h2>${w.adminTopups}</h2>
    ${topupsTable(topups, lang, { link: null })}
    ${next_cursor ? html`<p class="pager"><a href=${topupsHref({ accountId, cursor: next_cursor })}>${w.tasksOlder}</a></p>` : null}`;
}

function queryOf(query: unknown): TopupsQuery {
  const q = (query ?? {}) as Record<string, unknown>;
  const status = STATES.find((s) => s === q.status);
  const cursor = typeof q.cursor === 'string' && q.cursor.length > 0 ? q.cursor : undefined;
  const accountId =
    typeof q.account === 'string' && /^[0-9a-f-]{1,64}$/.test(q.account) ? q.account : undefined;
  return {
    ...(accountId ? { accountId } : {}),
    ...(status ? { status } : {}),
    ...(cursor ? { cursor } : {}),
  };
}

function filters(query: TopupsQuery, w: Words): VNode {
  const status = query.status;
  return html`<form class="filters" method="get" action="/admin/topups">
    ${query.accountId ? html`<input type="hidden" name="account" value=${query.accountId} />` : null}
    <label>${w.topupState}
      <select name="status">
        <option value="">${w.adminAnyState}</option>
        ${STATES.map((s) => html`<option value=${s} selected=${s === status}>${topupState(s, w)}</option>`)}
      </select>
    </label>
    <button type="submit" class="secondary">${w.tasksFilter}</button>
  </form>`;
}

/** Registers `/admin/topups` on the console's context. */
export async function topupPages(app: FastifyInstance, deps: ConsolePageDeps): Promise<void> {
  app.get('/admin/topups', HIDE, async (request, reply) => {
    const context = consoleContextOf(request);
    const w = wordsOf(context.lang);
    const query = queryOf(request.query);
    const { topups, next_cursor } = await deps.port.topups(query);
    const older = next_cursor ? topupsHref({ ...query, cursor: next_cursor }) : null;
    const body = html`${query.accountId ? html`<p><a href=${accountHref(query.accountId)}>${w.topupAccount}: <code>${query.accountId}</code></a></p>` : null}
      ${filters(query, w)}
      ${topupsTable(topups, context.lang, { account: accountHref, link: null })}
      ${older ? html`<p class="pager"><a href=${older}>${w.tasksOlder}</a></p>` : null}`;
    return sendHtml(
      reply,
      200,
      consolePage(context, deps.assets, { title: w.adminTopups, path: '/admin/topups', body }),
    );
  });
}
