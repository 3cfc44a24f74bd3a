/**
 * Tasks (issue 15): the account's tasks newest first, filtered by model and status with a small GET form
 * whose values stay in the query, one page of 20 at a time with an "Older" link (the service's cursor).
 * Each row shows when it was made (Moscow time, in the person's language), the model, mode, a status
 * badge, price and progress, and links to the task's page. The mode is named as the form and the task's
 * page name it (`Из текста (text_to_model)` on Russian pages).
 */
import type { FastifyInstance } from 'fastify';
import type { TaskStatus } from '../../db/index.ts';
import type { Lang } from '../../i18n/index.ts';
import { sessionPrincipal } from '../../people/index.ts';
import { contextOf } from '../context.ts';
import { html, type VNode } from '../html.ts';
import { page } from '../layout.ts';
import { sendHtml } from '../respond.ts';
import type { PageDeps } from '../routes.ts';
import { TASK_STATUSES, type WebTask } from '../tasks-port.ts';
import { type Words, wordsOf } from '../words.ts';
import { modeLabel, modelLabel } from '../words-settings.ts';
import { money } from './overview.ts';

/** Tasks per page of the list. */
export const TASKS_PER_PAGE = 20;

/** The locale of a language, for dates and money. */
export function localeOf(lang: Lang): string {
  return lang === 'ru' ? 'ru-RU' : 'en-US';
}

/** A moment in Moscow time, written the person's way. */
export function moscowTime(iso: string, lang: Lang): string {
  return new Intl.DateTimeFormat(localeOf(lang), {
    timeZone: 'Europe/Moscow',
    dateStyle: 'medium',
    timeStyle: 'short',
  }).format(new Date(iso));
}

/** A task's status as a readable badge; the live island rewrites its text and class. */
export function statusBadge(status: TaskStatus, w: Words, live = false): VNode {
  return html`<span class=${`badge status-${status}`} data-task-status=${live ? status : undefined}>${w[`status_${status}`]}</span>`;
}

function isStatus(value: unknown): value is TaskStatus {
  return typeof value === 'string' && (TASK_STATUSES as readonly string[]).includes(value);
}

/** A query string of the filters kept, plus a cursor. */
function listHref(filters: { model?: string; status?: string }, cursor?: string): string {
  const query = new URLSearchParams();
  if (filters.model) query.set('model', filters.model);
  if (filters.status) query.set('status', filters.status);
  if (cursor) query.set('cursor', cursor);
  const text = query.toString();
  return text ? `/tasks?${text}` : '/tasks';
}

function row(task: WebTask, w: Words, lang: Lang): VNode {
  // `data-label`: each cell's column, shown before it where a phone's screen stacks the rows (site.css).
  return html`<tr>
    <td data-label=${w.tasksCreated}><a href=${`/tasks/${task.id}`}><time datetime=${task.created_at}>${moscowTime(task.created_at, lang)}</time></a></td>
    <td data-label=${w.tasksModel}>${task.model}</td>
    <td data-label=${w.tasksMode}>${modeLabel(lang, task.mode)}</td>
    <td data-label=${w.tasksStatus}>${statusBadge(task.status, w)}</td>
    <td data-label=${w.tasksPrice}>${money(task.price.amount_minor, localeOf(lang))}</td>
    <td data-label=${w.tasksProgress}><progress max="100" value=${task.progress} aria-label=${w.tasksProgress}></progress> ${task.progress}%</td>
    <td><a href=${`/tasks/${task.id}`} aria-label=${`${w.tasksOpen} ${task.id}`}>${w.tasksOpen}</a></td>
  </tr>`;
}

/** Registers `GET /tasks`. */
export async function tasksPages(app: FastifyInstance, deps: PageDeps): Promise<void> {
  app.get('/tasks', { schema: { hide: true } }, async (request, reply) => {
    const context = contextOf(request);
    const session = context.session;
    if (!session) throw new Error('private page without a session');
    const w = wordsOf(context.lang);
    const query = request.query as Record<string, unknown>;
    const models = await deps.models.list(null);
    // Only values the form offers filter; anything else is as if not chosen.
    const model =
      typeof query.model === 'string' && models.some((m) => m.key === query.model) ? query.model : '';
    const status = isStatus(query.status) ? query.status : undefined;
    const cursor = typeof query.cursor === 'string' && query.cursor !== '' ? query.cursor : undefined;
    const found = await deps.tasks.list(
      sessionPrincipal(session),
      {
        limit: TASKS_PER_PAGE,
        ...(model ? { model } : {}),
        ...(status ? { status } : {}),
        ...(cursor ? { cursor } : {}),
      },
      context.lang,
    );
    const filters = { model, status: status ?? '' };
    const option = (value: string, label: string, chosen: string) =>
      html`<option value=${value} selected=${value === chosen}>${label}</option>`;
    const body = html`<form class="filters" method="get" action="/tasks" role="search">
        <label>${w.tasksModel}
          <select name="model">
            ${option('', w.tasksAny, model)} ${models.map((m) => option(m.key, modelLabel(context.lang, m), model))}
          </select>
        </label>
        <label>${w.tasksStatus}
          <select name="status">
            ${option('', w.tasksAnyStatus, filters.status)} ${TASK_STATUSES.map((s) => option(s, w[`status_${s}`], filters.status))}
          </select>
        </label>
        <button type="submit" class="secondary">${w.tasksFilter}</button>
      </form>
      ${
        found.tasks.length === 0
          ? html`<p class="hint" data-testid="tasks-empty">${w.tasksEmpty} <a href="/new">${w.tasksEmptyLink}</a></p>`
          : html`<table class="tasks stack-narrow">
              <thead><tr>
                <th>${w.tasksCreated}</th><th>${w.tasksModel}</th><th>${w.tasksMode}</th><th>${w.tasksStatus}</th>
                <th>${w.tasksPrice}</th><th>${w.tasksProgress}</th><th></th>
              </tr></thead>
              <tbody>${found.tasks.map((task) => row(task, w, context.lang))}</tbody>
            </table>`
      }
      <p class="pager">
        ${cursor ? html`<a href=${listHref(filters)}>${w.tasksFirst}</a> ` : null}
        ${found.next_cursor ? html`<a href=${listHref(filters, found.next_cursor)} rel="next">${w.tasksOlder}</a>` : null}
      </p>`;
    return sendHtml(reply, 200, page(context, deps.assets, { title: w.tasks, path: '/tasks', body }));
  });
}
