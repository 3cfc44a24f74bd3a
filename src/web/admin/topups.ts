/**
 * The console's top-ups (CONTRACT §14, issue "Operator: top-ups in the console"): every account's
 * top-ups newest first, filtered by state, a page at a time, each linked to its account; an account's
 * own top-ups are on its page. Read through the payments module's operator list, as
 * `GET /admin/v1/topups` does.
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

/** An account's top-ups on its console page (the newest page of them). */
export async function accountTopups(port: ConsolePort, accountId: string, lang: 'en' | 'ru'): Promise<VNode> {
  const w = wordsOf(lang);
  const { topups } = await port.topups({ accountId });
  return html`<h2>${w.adminTopups}</h2>
    ${topupsTable(topups, lang, { link: null })}`;
}

function queryOf(query: unknown): { status?: TopupRow['status']; cursor?: string } {
  const q = (query ?? {}) as Record<string, unknown>;
  const status = STATES.find((s) => s === q.status);
  const cursor = typeof q.cursor === 'string' && q.cursor.length > 0 ? q.cursor : undefined;
  return { ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) };
}

function filters(status: TopupRow['status'] | undefined, w: Words): VNode {
  return html`<form class="filters" method="get" action="/admin/topups">
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
    const older = next_cursor
      ? `/admin/topups?${new URLSearchParams({ ...(query.status ? { status: query.status } : {}), cursor: next_cursor })}`
      : null;
    const body = html`${filters(query.status, w)}
      ${topupsTable(topups, context.lang, { account: accountHref, link: null })}
      ${older ? html`<p class="pager"><a href=${older}>${w.tasksOlder}</a></p>` : null}`;
    return sendHtml(
      reply,
      200,
      consolePage(context, deps.assets, { title: w.adminTopups, path: '/admin/topups', body }),
    );
  });
}
