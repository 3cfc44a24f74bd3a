/**
 * Keys (CONTRACT §13): the list (prefix, name, models, daily limit, created), a form to create one with a
 * name, model restrictions (checkboxes from the catalog) and a daily limit in rubles, the new key shown
 * once with a copy button, and revoking after a confirmation step. Until the e-mail is confirmed the
 * form explains why and offers to send the link again. Limits (10 active keys) are the people service's.
 * The form, its checks, the box of the new key and the cookie that carries it to the next page are the
 * operator console's too (admin/accounts.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Lang } from '../../i18n/index.ts';
import { characters } from '../../lib/index.ts';
import { contextOf, field, fields, setFlash, type WebContext } from '../context.ts';
import { html, type VNode } from '../html.ts';
import { csrfField, errorBox, type FormProblem, fieldProblem, page } from '../layout.ts';
import type { WebIssuedKey, WebKey } from '../people-port.ts';
import { refusalOf, seeOther, sendHtml } from '../respond.ts';
import type { PageDeps } from '../routes.ts';
import { fill, type Words, wordsOf } from '../words.ts';
import { modelLabel } from '../words-settings.ts';
import { moscowDate } from './ledger.ts';
import { money } from './overview.ts';

const HIDE = { schema: { hide: true } } as const;
const NAME_MAX = 100;

/** Rubles as typed (`150`, `99.50`, `99,5`) to kopecks; null when empty, undefined when not an amount. */
export function rublesToMinor(text: string): number | null | undefined {
  const trimmed = text.trim().replace(/\s/g, '');
  if (trimmed === '') return null;
  const match = /^(\d{1,9})(?:[.,](\d{1,2}))?$/.exec(trimmed);
  if (!match) return undefined;
  const minor = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return minor > 0 ? minor : undefined;
}

interface KeysView {
  keys: WebKey[];
  models: { key: string; name: string }[];
  /** The key just made, shown this once. */
  issued?: Pick<WebIssuedKey, 'key'>;
  error?: FormProblem | null;
  /** The key whose revocation waits for a confirmation. */
  revoking?: WebKey;
  form?: KeyForm;
}

function keyRow(key: WebKey, w: Words, locale: string): VNode {
  return html`<tr>
    <td data-label=${w.keyPrefix}><code>${key.prefix}</code></td>
    <td data-label=${w.keyName}>${key.name ?? ''}</td>
    <td data-label=${w.keyModels}>${key.models === null ? w.allModels : key.models.join(', ')}</td>
    <td data-label=${w.keyDailyLimit}>${key.daily_limit_minor === null ? w.noLimit : money(key.daily_limit_minor, locale)}</td>
    <td data-label=${w.keyCreated}><time datetime=${key.created_at}>${moscowDate(key.created_at)}</time></td>
    <td>
      ${
        key.revoked_at
          ? html`<span class="hint">${fill(w.revoked, { date: moscowDate(key.revoked_at) })}</span>`
          : html`<form class="inline" method="get" action="/keys">
              <input type="hidden" name="revoke" value=${key.id} />
              <button type="submit" class="danger" aria-label=${`${w.revoke} ${key.prefix}`}>${w.revoke}</button>
            </form>`
      }
    </td>
  </tr>`;
}

/** What the create form sent, as typed (given back with any refusal, the eleventh key's 409 too). */
export interface KeyForm {
  name: string;
  models: string[];
  limit: string;
}

/** What a create form asks for. */
export interface KeyRequest {
  name: string;
  models: string[] | null;
  dailyLimitMinor: number | null;
}

/**
 * The `Create key` form of the dashboard and the console: `Name`, the models' checkboxes from the catalog
 * and `Daily limit, RUB`, a refusal said at its field. `hidden` is the form's CSRF field and whatever else
 * its page needs.
 */
export function keyForm(
  lang: Lang,
  options: {
    action: string;
    hidden: VNode;
    models: readonly { key: string; name: string }[];
    form?: KeyForm | undefined;
    error?: FormProblem | null | undefined;
  },
): VNode {
  const w = wordsOf(lang);
  const chosen = new Set(options.form?.models ?? []);
  const name = fieldProblem(options.error ?? null, 'name');
  const limit = fieldProblem(options.error ?? null, 'daily_limit', 'key-limit-hint');
  return html`<form class="stack" method="post" action=${options.action} novalidate>
    ${options.hidden}
    <label>${w.keyName}<input type="text" name="name" required value=${options.form?.name ?? ''} ...${name.attributes} /></label>
    ${name.note}
    <fieldset aria-describedby="key-models-hint">
      <legend>${w.keyModels}</legend>
      ${options.models.map(
        (m) => html`<label class="check">
          <input type="checkbox" name="models" value=${m.key} checked=${chosen.has(m.key)} /> ${modelLabel(lang, m)}
        </label>`,
      )}
      <p class="hint" id="key-models-hint">${w.keyModelsHint}</p>
    </fieldset>
    <label>${w.keyDailyLimit}<input type="text" name="daily_limit" inputmode="decimal" value=${options.form?.limit ?? ''} ...${limit.attributes} /></label>
    ${limit.note}
    <p class="hint" id="key-limit-hint">${w.keyLimitHint} ${w.keysMax}</p>
    <button type="submit">${w.createKey}</button>
  </form>`;
}

/**
 * The create form's fields as typed and the key they ask for, or the problem of the first wrong one: a
 * name of 1 to 100 characters, a daily limit in rubles (or none), models of the catalog (`known`).
 */
export function readKeyForm(
  body: unknown,
  known: ReadonlySet<string>,
  w: Words,
): { form: KeyForm } & ({ problem: FormProblem; request: null } | { problem: null; request: KeyRequest }) {
  const form = {
    name: field(body, 'name').trim(),
    models: fields(body, 'models'),
    limit: field(body, 'daily_limit'),
  };
  const refused = (problem: FormProblem) => ({ form, problem, request: null });
  if (form.name === '' || characters(form.name) > NAME_MAX)
    return refused({ message: w.badName, field: 'name' });
  const dailyLimitMinor = rublesToMinor(form.limit);
  if (dailyLimitMinor === undefined) return refused({ message: w.badLimit, field: 'daily_limit' });
  if (form.models.some((m) => !known.has(m))) return refused({ message: w.unknownModel });
  const models = form.models.length === 0 ? null : [...new Set(form.models)];
  return { form, problem: null, request: { name: form.name, models, dailyLimitMinor } };
}

/** The key just made, shown this once with a `Copy` button (the `copy` island); `lead` says so. */
export function newKeyBox(key: string, lead: string, w: Words): VNode {
  return html`<section class="flash" role="status">
    <p>${lead}</p>
    <div class="secret">
      <input id="new-key" type="text" readonly value=${key} aria-label=${w.newKey} />
      <button type="button" class="secondary" data-copy="new-key" data-copied=${w.copied} hidden>${w.copy}</button>
    </div>
  </section>`;
}

function createForm(context: WebContext, view: KeysView, w: Words): VNode {
  const session = context.session;
  if (session && !session.emailConfirmed) {
    return html`<p class="error" role="alert">${fill(w.unconfirmed, { email: session.email })}</p>
      <form class="inline" method="post" action="/keys">
        ${csrfField(context)}
        <input type="hidden" name="action" value="resend" />
        <button type="submit" class="secondary">${w.resend}</button>
      </form>`;
  }
  return keyForm(context.lang, {
    action: '/keys',
    hidden: html`${csrfField(context)}<input type="hidden" name="action" value="create" />`,
    models: view.models,
    form: view.form,
    error: view.error,
  });
}

function keysPage(context: WebContext, deps: PageDeps, view: KeysView): string {
  const w = wordsOf(context.lang);
  const locale = context.lang === 'ru' ? 'ru-RU' : 'en-US';
  let body: VNode;
  if (view.revoking) {
    const key = view.revoking;
    // The question takes the focus, so keyboard and screen-reader users start from it, not from the page's top.
    body = html`<p id="revoke-question" role="alert" tabindex="-1" autofocus>${fill(w.revokeConfirm, { name: key.name ? `${key.name} (${key.prefix})` : key.prefix })}</p>
      <form class="inline" method="post" action="/keys">
        ${csrfField(context)}
        <input type="hidden" name="action" value="revoke" />
        <input type="hidden" name="id" value=${key.id} />
        <button type="submit" class="danger">${w.revoke}</button>
        <a href="/keys">${w.cancel}</a>
      </form>`;
  } else {
    body = html`${errorBox(view.error ?? null)}
      ${view.issued ? newKeyBox(view.issued.key, w.keyShownOnce, w) : null}
      ${
        view.keys.length === 0
          ? html`<p class="hint">${w.noKeys}</p>`
          : html`<table class="stack-narrow">
              <thead><tr>
                <th>${w.keyPrefix}</th><th>${w.keyName}</th><th>${w.keyModels}</th>
                <th>${w.keyDailyLimit}</th><th>${w.keyCreated}</th><th></th>
              </tr></thead>
              <tbody>${view.keys.map((key) => keyRow(key, w, locale))}</tbody>
            </table>`
      }
      <h2>${w.createKey}</h2>
      ${createForm(context, view, w)}`;
  }
  return page(context, deps.assets, { title: w.keys, path: '/keys', body, islands: ['copy'] });
}

/**
 * Where the key just made travels from the creating POST to the page it redirects to: a cookie of its
 * own, HttpOnly, only sent to `path` (the page that shows it), for a minute at most, and cleared by that
 * page as it shows it, so the key is shown once and a reload neither shows it again nor makes another.
 */
export interface NewKeyCookie {
  name: string;
  path: string;
}

const DASHBOARD_NEW_KEY: NewKeyCookie = { name: 'gta_new_key', path: '/keys' };

/** Hands the key just made to the page the POST redirects to (`NewKeyCookie`). */
export function keepNewKey(
  reply: FastifyReply,
  cookie: NewKeyCookie,
  issued: Pick<WebIssuedKey, 'id' | 'key'>,
  secure: boolean,
): void {
  reply.setCookie(cookie.name, `${issued.id}.${issued.key}`, {
    path: cookie.path,
    httpOnly: true,
    sameSite: 'strict',
    secure,
    maxAge: 60,
  });
}

/** The key of the cookie, if it is one of the page's live `keys`; the cookie is cleared either way. */
export function takeNewKey(
  request: FastifyRequest,
  reply: FastifyReply,
  cookie: NewKeyCookie,
  keys: readonly WebKey[],
): Pick<WebIssuedKey, 'key'> | null {
  const value = request.cookies[cookie.name];
  if (value === undefined) return null;
  reply.clearCookie(cookie.name, { path: cookie.path });
  const dot = value.indexOf('.');
  const [id, key] = [value.slice(0, dot), value.slice(dot + 1)];
  const own = keys.find((k) => k.id === id && !k.revoked_at);
  return dot > 0 && own !== undefined && key.startsWith(own.prefix) ? { key } : null;
}

export async function keysPages(app: FastifyInstance, deps: PageDeps): Promise<void> {
  const catalog = async () => (await deps.models.list(null)).map((m) => ({ key: m.key, name: m.name }));

  app.get('/keys', HIDE, async (request, reply) => {
    const context = contextOf(request);
    const session = context.session;
    if (!session) throw new Error('private page without a session');
    const keys = await deps.people.keys(session.personId);
    const revokeId = (request.query as Record<string, unknown>).revoke;
    const revoking =
      typeof revokeId === 'string' ? keys.find((k) => k.id === revokeId && !k.revoked_at) : undefined;
    const issued = takeNewKey(request, reply, DASHBOARD_NEW_KEY, keys);
    return sendHtml(
      reply,
      200,
      keysPage(context, deps, { keys, models: await catalog(), revoking, ...(issued ? { issued } : {}) }),
    );
  });

  app.post('/keys', HIDE, async (request, reply) => {
    const context = contextOf(request);
    const session = context.session;
    if (!session) throw new Error('private page without a session');
    const w = wordsOf(context.lang);
    const action = field(request.body, 'action');
    const rerender = async (status: number, extra: Partial<KeysView>) =>
      sendHtml(
        reply,
        status,
        keysPage(context, deps, {
          keys: await deps.people.keys(session.personId),
          models: await catalog(),
          ...extra,
        }),
      );
    // What was typed into the create form, given back with any refusal (the eleventh key's 409 too).
    let form: KeysView['form'];
    try {
      if (action === 'resend') {
        await deps.people.resendConfirmation(session.personId);
        setFlash(reply, 'flash_resent', deps.secure);
        return seeOther(reply, '/keys');
      }
      if (action === 'revoke') {
        await deps.people.revokeKey(session.personId, field(request.body, 'id'));
        setFlash(reply, 'flash_revoked', deps.secure);
        return seeOther(reply, '/keys');
      }
      const read = readKeyForm(request.body, new Set((await catalog()).map((m) => m.key)), w);
      form = read.form;
      if (read.request === null) return rerender(422, { error: read.problem, form });
      const issued = await deps.people.createKey(session.personId, read.request);
      // Shown by the page the browser is sent to, so that a reload never makes a second key.
      keepNewKey(reply, DASHBOARD_NEW_KEY, issued, deps.secure);
      return seeOther(reply, '/keys');
    } catch (error) {
      const refusal = refusalOf(error, context.lang);
      reply.headers(refusal.headers);
      return rerender(refusal.status, { error: refusal, ...(form ? { form } : {}) });
    }
  });
}
