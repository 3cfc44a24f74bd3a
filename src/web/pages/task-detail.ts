/**
 * A task's page (issue 15): its status and progress (followed live by the `task-live` island through
 * the task's event stream, CONTRACT §12), price and what was charged or held, timestamps, the error in
 * the person's language, the settings as a readable list, and the results with a player per file
 * (players.ts). A `Cancel` button shows while the task is queued or running; it posts a form (with the
 * CSRF field) that cancels through the task service, as `POST /v1/tasks/{id}/cancel` does. Another
 * account's task and an unknown id are the same 404 page.
 */
import type { FastifyInstance } from 'fastify';
import { errors, isApiError } from '../../errors.ts';
import { type Lang, ruDecimal } from '../../i18n/index.ts';
import { sessionPrincipal } from '../../people/index.ts';
import { choiceLabel, fieldLabel } from '../client/schema-checks.ts';
import { contextOf, setFlash } from '../context.ts';
import { html, type VNode } from '../html.ts';
import { csrfField, page } from '../layout.ts';
import { seeOther, sendHtml } from '../respond.ts';
import type { PageDeps } from '../routes.ts';
import { TASK_STATUSES, type WebTask } from '../tasks-port.ts';
import { fill, type Words, wordsOf } from '../words.ts';
import { modeLabel, settingWords } from '../words-settings.ts';
import { money } from './overview.ts';
import { artifactCard, needsModelViewer, withModelViewer } from './players.ts';
import { localeOf, moscowTime, statusBadge } from './tasks.ts';

const HIDE = { schema: { hide: true } } as const;
const TASK_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A setting as the task's page names it: its API name, after its label on Russian pages (the new-task
 * form's label, by the same rule: `voice_2` → `Голос 2`).
 */
function settingName(key: string, lang: Lang): string {
  return lang === 'ru' ? `${fieldLabel(key, {}, settingWords(lang))} (${key})` : key;
}

/**
 * A setting's value as text: strings as they are, anything else as compact JSON; Russian pages say yes
 * and no in their words, write a number with its decimal comma (`да`, `0,65`) and name a choice and the
 * mode as the new-task form does (`Детальное (detailed)`, `Из текста (text_to_model)`).
 */
function settingText(value: unknown, task: WebTask, w: Words, lang: Lang): string {
  if (lang === 'ru' && typeof value === 'boolean') return value ? w.newYes : w.newNo;
  if (lang === 'ru' && typeof value === 'number') return ruDecimal(value);
  if (typeof value !== 'string') return JSON.stringify(value);
  return value === task.mode
    ? modeLabel(lang, value)
    : value === ''
      ? value
      : choiceLabel(value, settingWords(lang));
}

function isRunning(task: WebTask): boolean {
  return task.status === 'queued' || task.status === 'running';
}

/** What the task costs the account: held while it runs, charged when it succeeded, nothing otherwise. */
function charge(task: WebTask, w: Words, lang: Lang): VNode {
  const locale = localeOf(lang);
  const amount = task.price.amount_minor;
  if (isRunning(task)) return html`<dt>${w.taskHeld}</dt><dd>${money(amount, locale)}</dd>`;
  return html`<dt>${w.taskCharged}</dt><dd data-testid="charged">${money(task.status === 'succeeded' ? amount : 0, locale)}</dd>`;
}

function when(label: string, iso: string | null | undefined, lang: Lang): VNode | null {
  return iso ? html`<dt>${label}</dt><dd><time datetime=${iso}>${moscowTime(iso, lang)}</time></dd>` : null;
}

function results(task: WebTask, w: Words, lang: Lang): VNode | null {
  const result = task.result;
  if (!result) return null;
  const expired = result.files_expired;
  const date = moscowTime(result.files_expire_at, lang);
  return html`<section class="results" aria-label=${w.taskResults}>
    <h2>${w.taskResults}</h2>
    ${result.caption ? html`<p>${result.caption}</p>` : null}
    ${result.texts.map((text) => html`<pre class="task-text">${text}</pre>`)}
    ${
      result.artifacts.length === 0
        ? html`<p class="hint">${w.taskNoFiles}</p>`
        : html`<p class=${expired ? 'error' : 'hint'} role=${expired ? 'status' : undefined}>
            ${fill(expired ? w.taskExpired : w.taskExpiresAt, { date })}
          </p>`
    }
    <div class="artifacts">${result.artifacts.map((file) => artifactCard(file, expired, w, lang))}</div>
  </section>`;
}

/** The body of a task's page. */
export function taskBody(task: WebTask, csrf: VNode, w: Words, lang: Lang): VNode {
  const running = isRunning(task);
  // The island needs the badge's words of every status, in the page's language.
  const statusWords = JSON.stringify(Object.fromEntries(TASK_STATUSES.map((s) => [s, w[`status_${s}`]])));
  return html`<p><a href="/tasks">${w.taskAllTasks}</a></p>
    <section class="task-state" data-task-live=${running ? task.id : undefined} data-status-words=${statusWords}>
      <p>
        ${statusBadge(task.status, w, true)}
        <progress max="100" value=${task.progress} aria-label=${w.tasksProgress} data-task-progress=""></progress>
        <span data-task-percent="">${task.progress}%</span>
      </p>
      ${
        // The island that follows the task shows its hint; without scripts the page says to reload it.
        running
          ? html`<p class="hint" data-task-live-hint="" hidden>${w.taskLive}</p>
            <noscript><p class="hint"><a href=${`/tasks/${task.id}`}>${w.taskReload}</a></p></noscript>`
          : null
      }
      ${
        running
          ? html`<form class="inline" method="post" action=${`/tasks/${task.id}/cancel`}>
              ${csrf}
              <button type="submit" class="danger">${w.taskCancel}</button>
            </form>`
          : null
      }
    </section>
    ${
      task.error
        ? html`<p class="error" role="alert" data-testid="task-error">
            ${w.taskError}: <code>${task.error.code}</code> — ${task.error.message}
          </p>`
        : null
    }
    <dl class="facts">
      <dt>${w.tasksModel}</dt><dd>${task.model}</dd>
      <dt>${w.tasksMode}</dt><dd>${modeLabel(lang, task.mode)}</dd>
      <dt>${w.tasksPrice}</dt><dd>${money(task.price.amount_minor, localeOf(lang))}</dd>
      ${charge(task, w, lang)}
      ${when(w.tasksCreated, task.created_at, lang)}
      ${when(w.taskStarted, task.started_at, lang)}
      ${when(w.taskFinished, task.finished_at, lang)}
    </dl>
    <h2>${w.taskSettings}</h2>
    <dl class="task-settings">
      ${Object.entries(task.settings).map(([key, value]) => html`<dt>${settingName(key, lang)}</dt><dd>${settingText(value, task, w, lang)}</dd>`)}
    </dl>
    ${results(task, w, lang)}`;
}

/** Registers `GET /tasks/{id}` and its `POST /tasks/{id}/cancel`. */
export async function taskDetailPages(app: FastifyInstance, deps: PageDeps): Promise<void> {
  app.get<{ Params: { id: string } }>('/tasks/:id', HIDE, async (request, reply) => {
    const context = contextOf(request);
    const session = context.session;
    if (!session) throw new Error('private page without a session');
    const w = wordsOf(context.lang);
    const id = request.params.id;
    if (!TASK_ID.test(id)) throw errors.taskNotFound(id);
    const task = await deps.tasks.get(sessionPrincipal(session), id, context.lang);
    const files = task.result && !task.result.files_expired ? task.result.artifacts : [];
    const body = taskBody(task, csrfField(context), w, context.lang);
    const viewer = needsModelViewer(files);
    // Only a page with a 3D model widens the policy helmet set, and only by what the viewer needs.
    const policy = reply.getHeader('content-security-policy');
    if (viewer && typeof policy === 'string')
      reply.header('content-security-policy', withModelViewer(policy));
    return sendHtml(
      reply,
      200,
      page(context, deps.assets, {
        title: fill(w.taskTitle, { id: task.id.slice(0, 8) }),
        path: '/tasks',
        body,
        islands: isRunning(task) ? ['task-live'] : [],
        vendor: viewer ? ['model-viewer.js'] : [],
      }),
    );
  });

  app.post<{ Params: { id: string } }>('/tasks/:id/cancel', HIDE, async (request, reply) => {
    const context = contextOf(request);
    const session = context.session;
    if (!session) throw new Error('private page without a session');
    const id = request.params.id;
    if (!TASK_ID.test(id)) throw errors.taskNotFound(id);
    try {
      await deps.tasks.cancel(sessionPrincipal(session), id, context.lang);
      setFlash(reply, 'flash_task_canceled', deps.secure);
    } catch (error) {
      // A task that finished meanwhile cannot be canceled: its page shows how it ended.
      if (!(isApiError(error) && error.code === 'task_not_cancelable')) throw error;
    }
    return seeOther(reply, `/tasks/${id}`);
  });
}
