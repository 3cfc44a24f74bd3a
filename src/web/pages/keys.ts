/**
 * Keys (CONTRACT §13): the list (prefix, name, models, daily limit, created), a form to create one with a
 * name, model restrictions (checkboxes from the catalog) and a daily limit in rubles, the new key shown
 * once with a copy button, and revoking after a confirmation step. Until the e-mail is confirmed the
 * form explains why and offers to send the link again. Limits (10 active keys) are the people service's.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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
  form?: { name: string; models: string[]; limit: string };
}

function keyRow(key: WebKey, w: Words, locale: string): VNode {
  return html`<tr>
    <td><code>${key.prefix}</code></td>
    <td>${key.name ?? ''}</td>
    <td>${key.models === null ? w.allModels : key.models.join(', ')}</td>
    <td>${key.daily_limit_minor === null ? w.noLimit : money(key.daily_limit_minor, locale)}</td>
    <td><time datetime=${key.created_at}>${moscowDate(key.created_at)}</time></td>
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
  const chosen = new Set(view.form?.models ?? []);
  const name = fieldProblem(view.error ?? null, 'name');
  const limit = fieldProblem(view.error ?? null, 'daily_limit', 'key-limit-hint');
  return html`<form class="stack" method="post" action="/keys">
    ${csrfField(context)}
    <input type="hidden" name="action" value="create" />
    <label>${w.keyName}<input type="text" name="name" required value=${view.form?.name ?? ''} ...${name.attributes} /></label>
    ${name.note}
    <fieldset aria-describedby="key-models-hint">
      <legend>${w.keyModels}</legend>
      ${view.models.map(
        (m) => html`<label class="check">
          <input type="checkbox" name="models" value=${m.key} checked=${chosen.has(m.key)} /> ${modelLabel(context.lang, m)}
        </label>`,
      )}
      <p class="hint" id="key-models-hint">${w.keyModelsHint}</p>
    </fieldset>
    <label>${w.keyDailyLimit}<input type="text" name="daily_limit" inputmode="decimal" value=${view.form?.limit ?? ''} ...${limit.attributes} /></label>
    ${limit.note}
    <p class="hint" id="key-limit-hint">${w.keyLimitHint} ${w.keysMax}</p>
    <button type="submit">${w.createKey}</button>
  </form>`;
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
      ${
        view.issued
          ? html`<section class="flash" role="status">
              <p>${w.keyShownOnce}</p>
              <div class="secret">
                <input id="new-key" type="text" readonly value=${view.issued.key} aria-label=${w.newKey} />
                <button type="button" class="secondary" data-copy="new-key" data-copied=${w.copied} hidden>${w.copy}</button>
              </div>
            </section>`
          : null
      }
      ${
        view.keys.length === 0
          ? html`<p class="hint">${w.noKeys}</p>`
          : html`<table>
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
 * The key just made travels from the creating POST to the page it redirects to in a cookie of its own:
 * HttpOnly, only sent to /keys, for a minute at most, and cleared by the page that shows it, so the key
 * is shown once and a reload neither shows it again nor makes another.
 */
const NEW_KEY_COOKIE = 'gta_new_key';
const NEW_KEY_COOKIE_OPTIONS = (secure: boolean) =>
  ({ path: '/keys', httpOnly: true, sameSite: 'strict', secure, maxAge: 60 }) as const;

/** The key of the cookie, if it is one of this person's live keys; the cookie is cleared either way. */
function takeNewKey(
  request: FastifyRequest,
  reply: FastifyReply,
  keys: readonly WebKey[],
): Pick<WebIssuedKey, 'key'> | null {
  const value = request.cookies[NEW_KEY_COOKIE];
  if (value === undefined) return null;
  reply.clearCookie(NEW_KEY_COOKIE, { path: '/keys' });
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
    const issued = takeNewKey(request, reply, keys);
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
      form = {
        name: field(request.body, 'name').trim(),
        models: fields(request.body, 'models'),
        limit: field(request.body, 'daily_limit'),
      };
      const known = new Set((await catalog()).map((m) => m.key));
      const dailyLimitMinor = rublesToMinor(form.limit);
      const problem: FormProblem | null =
        form.name === '' || characters(form.name) > NAME_MAX
          ? { message: w.badName, field: 'name' }
          : dailyLimitMinor === undefined
            ? { message: w.badLimit, field: 'daily_limit' }
            : form.models.some((m) => !known.has(m))
              ? { message: w.unknownModel }
              : null;
      if (problem !== null || dailyLimitMinor === undefined) return rerender(422, { error: problem, form });
      const issued = await deps.people.createKey(session.personId, {
        name: form.name,
        models: form.models.length === 0 ? null : [...new Set(form.models)],
        dailyLimitMinor,
      });
      // Shown by the page the browser is sent to, so that a reload never makes a second key.
      reply.setCookie(NEW_KEY_COOKIE, `${issued.id}.${issued.key}`, NEW_KEY_COOKIE_OPTIONS(deps.secure));
      return seeOther(reply, '/keys');
    } catch (error) {
      const refusal = refusalOf(error, context.lang);
      reply.headers(refusal.headers);
      return rerender(refusal.status, { error: refusal, ...(form ? { form } : {}) });
    }
  });
}
