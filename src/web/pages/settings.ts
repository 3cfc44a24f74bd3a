/**
 * Settings (CONTRACT §13): the password (current and new), and the language. The `Language` control of
 * every page's header posts to `/language`: signed in it saves the person's choice, signed out a `lang`
 * cookie; either wins over Accept-Language afterwards.
 */
import type { FastifyInstance } from 'fastify';
import {
  contextOf,
  cookieOptions,
  field,
  LANG_COOKIE,
  langFrom,
  safeNext,
  setFlash,
  type WebContext,
} from '../context.ts';
import { html } from '../html.ts';
import { csrfField, errorBox, type FormProblem, fieldProblem, page } from '../layout.ts';
import { SESSION_COOKIE } from '../people-port.ts';
import { refusalOf, seeOther, sendHtml } from '../respond.ts';
import type { PageDeps } from '../routes.ts';
import { wordsOf } from '../words.ts';

/** A year: the language cookie outlives sessions. */
const LANG_COOKIE_SECONDS = 365 * 24 * 60 * 60;

export async function settingsPages(app: FastifyInstance, deps: PageDeps): Promise<void> {
  const settingsPage = (context: WebContext, problem: FormProblem | null) => {
    const w = wordsOf(context.lang);
    const current = fieldProblem(problem, 'current');
    const password = fieldProblem(problem, 'password');
    return page(context, deps.assets, {
      title: w.settings,
      path: '/settings',
      body: html`${errorBox(problem)}
        <h2>${w.password}</h2>
        <form class="stack" method="post" action="/settings" novalidate>
          ${csrfField(context)}
          <label>${w.currentPassword}
            <input type="password" name="current" required autocomplete="current-password" ...${current.attributes} />
          </label>
          ${current.note}
          <label>${w.newPassword}
            <input type="password" name="password" required minlength="8" autocomplete="new-password" ...${password.attributes} />
          </label>
          ${password.note}
          <p class="hint">${w.passwordHint}</p>
          <button type="submit">${w.save}</button>
        </form>
        <h2>${w.language}</h2>
        <p>${context.lang === 'ru' ? w.russian : w.english}</p>
        <p class="hint">${w.languageHint}</p>`,
    });
  };

  app.get('/settings', { schema: { hide: true } }, async (request, reply) =>
    sendHtml(reply, 200, settingsPage(contextOf(request), null)),
  );

  app.post('/settings', { schema: { hide: true } }, async (request, reply) => {
    const context = contextOf(request);
    const session = context.session;
    if (!session) throw new Error('private page without a session');
    try {
      await deps.people.changePassword(
        session.personId,
        field(request.body, 'current'),
        field(request.body, 'password'),
        // This browser stays signed in; every other session of the person ends.
        { sessionToken: request.cookies[SESSION_COOKIE] ?? '', address: request.ip },
      );
    } catch (error) {
      const w = wordsOf(context.lang);
      const refusal = refusalOf(error, context.lang, { current: w.currentPassword, password: w.newPassword });
      reply.headers(refusal.headers);
      // The service's words for a wrong password speak of an e-mail, which this form does not ask for:
      // it is the current password that is wrong.
      const problem =
        refusal.code === 'invalid_credentials'
          ? { message: w.currentPasswordWrong, field: 'current' }
          : refusal;
      return sendHtml(reply, refusal.status, settingsPage(context, problem));
    }
    setFlash(reply, 'flash_password_changed', deps.secure);
    return seeOther(reply, '/settings');
  });

  app.post('/language', { schema: { hide: true } }, async (request, reply) => {
    const context = contextOf(request);
    const lang = langFrom(field(request.body, 'lang'));
    const next = safeNext(field(request.body, 'next'));
    if (!lang) return seeOther(reply, next);
    if (context.session) await deps.people.setLanguage(context.session.personId, lang);
    reply.setCookie(LANG_COOKIE, lang, cookieOptions(deps.secure, LANG_COOKIE_SECONDS));
    setFlash(reply, 'flash_language_saved', deps.secure);
    return seeOther(reply, next);
  });
}
