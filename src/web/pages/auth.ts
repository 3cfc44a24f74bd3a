/**
 * Pages of signing up, in and out, the e-mail confirmation link, and the password reset (CONTRACT §13).
 * Tokens of e-mail links arrive in the query of a GET that consumes them at once and redirects, so they
 * never stay in the address bar, the history or a Referer; the reset token waits for the new password in
 * a short-lived HttpOnly cookie limited to `/reset/new`.
 */
import type { FastifyInstance } from 'fastify';
import { contextOf, cookieOptions, field, safeNext, setFlash, type WebContext } from '../context.ts';
import { html } from '../html.ts';
import { csrfField, errorBox, type FormProblem, fieldProblem, page } from '../layout.ts';
import { SESSION_COOKIE } from '../people-port.ts';
import { type FieldLabels, refusalOf, seeOther, sendHtml } from '../respond.ts';
import type { PageDeps } from '../routes.ts';
import { wordsOf } from '../words.ts';

/** Holds the reset token between the link's landing and the new password's form. */
export const RESET_COOKIE = 'gta_reset';
const RESET_PATH = '/reset/new';
/** How long the reset form stays usable after the link was opened (seconds). */
const RESET_FORM_SECONDS = 15 * 60;
const HIDE = { schema: { hide: true } } as const;

function credentialsForm(
  context: WebContext,
  kind: 'signin' | 'signup',
  values: { email: string; next: string },
  problem: FormProblem | null,
) {
  const w = wordsOf(context.lang);
  const submit = kind === 'signin' ? w.signIn : w.signUp;
  const email = fieldProblem(problem, 'email');
  const password = fieldProblem(problem, 'password', kind === 'signup' ? 'password-hint' : undefined);
  // `novalidate`: the service checks every field and says a refusal at its field in the page's language;
  // the browser's own bubbles speak the browser's language and skip the page's accessible refusal.
  return html`<form class="stack" method="post" action=${kind === 'signin' ? '/signin' : '/signup'} novalidate>
    ${csrfField(context)}
    ${kind === 'signin' ? html`<input type="hidden" name="next" value=${values.next} />` : null}
    <label>${w.email}<input type="text" inputmode="email" autocapitalize="none" name="email" autocomplete="email" required value=${values.email} ...${email.attributes} /></label>
    ${email.note}
    <label>${w.password}
      <input type="password" name="password" required minlength="8"
        autocomplete=${kind === 'signin' ? 'current-password' : 'new-password'} ...${password.attributes} />
    </label>
    ${password.note}
    ${kind === 'signup' ? html`<p class="hint" id="password-hint">${w.passwordHint}</p>` : null}
    <button type="submit">${submit}</button>
  </form>`;
}

/** The sign-in and sign-up forms' labels of the fields the people service names in its refusals. */
function credentialLabels(context: WebContext): FieldLabels {
  const w = wordsOf(context.lang);
  return { email: w.email, password: w.password };
}

export async function authPages(app: FastifyInstance, deps: PageDeps): Promise<void> {
  const { people, assets, secure } = deps;

  const signInPage = (
    context: WebContext,
    values: { email: string; next: string },
    problem: FormProblem | null,
  ) => {
    const w = wordsOf(context.lang);
    return page(context, assets, {
      title: w.signIn,
      path: '/signin',
      body: [
        errorBox(problem),
        credentialsForm(context, 'signin', values, problem),
        html`<p><a href="/reset">${w.forgot}</a></p>
          <p>${w.noAccount} <a href="/signup">${w.signUp}</a></p>`,
      ],
    });
  };
  const signUpPage = (context: WebContext, email: string, problem: FormProblem | null) => {
    const w = wordsOf(context.lang);
    return page(context, assets, {
      title: w.signUp,
      path: '/signup',
      body: [
        errorBox(problem),
        credentialsForm(context, 'signup', { email, next: '/' }, problem),
        html`<p>${w.haveAccount} <a href="/signin">${w.signIn}</a></p>`,
      ],
    });
  };
  /**
   * Sets the new session's cookie and ends the session the browser had, if any (signing in as someone else
   * over a live session): a value that stops being sent must stop opening anything too.
   */
  const startSession = async (
    reply: Parameters<typeof seeOther>[0],
    context: ReturnType<typeof contextOf>,
    signed: { token: string; expiresAt: Date },
  ) => {
    if (context.sessionToken) await people.signOut(context.sessionToken);
    reply.setCookie(SESSION_COOKIE, signed.token, { ...cookieOptions(secure), expires: signed.expiresAt });
  };

  app.get('/signin', HIDE, async (request, reply) => {
    const context = contextOf(request);
    const next = safeNext((request.query as Record<string, unknown>).next);
    if (context.session) return seeOther(reply, next);
    return sendHtml(reply, 200, signInPage(context, { email: '', next }, null));
  });

  app.post('/signin', HIDE, async (request, reply) => {
    const context = contextOf(request);
    const email = field(request.body, 'email').trim();
    const next = safeNext(field(request.body, 'next'));
    try {
      const signed = await people.signIn({
        email,
        password: field(request.body, 'password'),
        address: request.ip,
      });
      await startSession(reply, context, signed);
      return seeOther(reply, next);
    } catch (error) {
      const refusal = refusalOf(error, context.lang, credentialLabels(context));
      reply.headers(refusal.headers);
      return sendHtml(reply, refusal.status, signInPage(context, { email, next }, refusal));
    }
  });

  app.get('/signup', HIDE, async (request, reply) => {
    const context = contextOf(request);
    if (context.session) return seeOther(reply, '/');
    return sendHtml(reply, 200, signUpPage(context, '', null));
  });

  app.post('/signup', HIDE, async (request, reply) => {
    const context = contextOf(request);
    const email = field(request.body, 'email').trim();
    const password = field(request.body, 'password');
    let made: Awaited<ReturnType<typeof people.signUp>>;
    try {
      made = await people.signUp({ email, password, lang: context.lang });
    } catch (error) {
      const refusal = refusalOf(error, context.lang, credentialLabels(context));
      reply.headers(refusal.headers);
      return sendHtml(reply, refusal.status, signUpPage(context, email, refusal));
    }
    // A new person is signed in at once, with the session the sign-up opened (no sign-in, so no address
    // limit): they may look around before confirming the e-mail.
    await startSession(reply, context, made.session);
    setFlash(reply, 'flash_check_mail', secure);
    return seeOther(reply, '/');
  });

  app.post('/signout', HIDE, async (request, reply) => {
    const context = contextOf(request);
    if (context.sessionToken) await people.signOut(context.sessionToken);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    setFlash(reply, 'flash_signed_out', secure);
    return seeOther(reply, '/signin');
  });

  app.get('/confirm', HIDE, async (request, reply) => {
    const context = contextOf(request);
    const token = (request.query as Record<string, unknown>).token;
    let confirmed: string | null = null;
    if (typeof token === 'string' && token !== '') {
      try {
        confirmed = (await people.confirmEmail(token)).personId;
      } catch (error) {
        refusalOf(error, context.lang);
      }
    }
    // A link opened in a browser signed in as someone else confirms its own person, and says so: "Your
    // e-mail is confirmed" above the signed-in person's own unconfirmed e-mail would read as a contradiction.
    // A used link opened again by its person, signed in and confirmed, is no failure to them.
    const flash =
      confirmed === null
        ? context.session?.emailConfirmed
          ? 'flash_already_confirmed'
          : 'flash_confirm_failed'
        : context.session && context.session.personId !== confirmed
          ? 'flash_confirmed_other'
          : 'flash_confirmed';
    setFlash(reply, flash, secure);
    return seeOther(reply, context.session ? '/keys' : '/signin?next=%2Fkeys');
  });

  const resetPage = (context: WebContext, sent: boolean) => {
    const w = wordsOf(context.lang);
    return page(context, assets, {
      title: w.resetTitle,
      path: '/reset',
      // Sent: the layout shows the flash message, and the form is left out.
      body: sent
        ? []
        : html`<form class="stack" method="post" action="/reset" novalidate>
            ${csrfField(context)}
            <label>${w.email}<input type="text" inputmode="email" autocapitalize="none" name="email" autocomplete="email" required /></label>
            <button type="submit">${w.resetSend}</button>
          </form>`,
    });
  };

  app.get('/reset', HIDE, async (request, reply) => {
    const context = contextOf(request);
    return sendHtml(reply, 200, resetPage(context, context.flash === 'flash_reset_sent'));
  });

  app.post('/reset', HIDE, async (request, reply) => {
    const email = field(request.body, 'email').trim();
    // Not awaited: a link is made and mailed only for an e-mail that has an account, so an answer that
    // waited for the mail (an SMTP server's round trips) would tell by its time which e-mails exist.
    people
      .requestPasswordReset(email)
      .catch((error: unknown) => request.log.error({ err: error }, 'password reset request failed'));
    // 303 to the page that says so: a reload sends no second mail.
    setFlash(reply, 'flash_reset_sent', secure);
    return seeOther(reply, '/reset');
  });

  /**
   * The `New password` form while the link is open; otherwise one message (`error`, or that the link is
   * dead) and the way to ask for a new link, with no form that could only be refused.
   */
  /** The form of an open link, naming whose password it sets (`email`), or the dead link's note (null). */
  const newPasswordPage = (context: WebContext, email: string | null, problem: FormProblem | null) => {
    const w = wordsOf(context.lang);
    const password = fieldProblem(problem, 'password', 'password-hint');
    return page(context, assets, {
      title: w.resetNewTitle,
      path: RESET_PATH,
      body:
        email !== null
          ? [
              errorBox(problem),
              html`<p data-testid="reset-email">${w.resetFor} <strong>${email}</strong></p>`,
              html`<form class="stack" method="post" action=${RESET_PATH} novalidate>
              ${csrfField(context)}
              <label>${w.newPassword}
                <input type="password" name="password" required minlength="8" autocomplete="new-password" ...${password.attributes} />
              </label>
              ${password.note}
              <p class="hint" id="password-hint">${w.passwordHint}</p>
              <button type="submit">${w.resetSet}</button>
            </form>`,
            ]
          : html`<p class="error" role="alert">${problem?.message ?? w.resetExpired}</p>
            <p><a href="/reset">${w.resetAskAgain}</a></p>`,
    });
  };
  const closeLink = (reply: Parameters<typeof seeOther>[0]) =>
    reply.clearCookie(RESET_COOKIE, { path: RESET_PATH });

  app.get(RESET_PATH, HIDE, async (request, reply) => {
    const context = contextOf(request);
    const token = (request.query as Record<string, unknown>).token;
    if (typeof token === 'string' && token !== '') {
      reply.setCookie(RESET_COOKIE, token, {
        ...cookieOptions(secure, RESET_FORM_SECONDS),
        path: RESET_PATH,
      });
      return seeOther(reply, RESET_PATH);
    }
    // The link is checked (not used up) before the form is offered: a dead one is said at once.
    const held = request.cookies[RESET_COOKIE];
    const email = held ? await people.resetLinkEmail(held) : null;
    if (held && email === null) closeLink(reply);
    return sendHtml(reply, 200, newPasswordPage(context, email, null));
  });

  app.post(RESET_PATH, HIDE, async (request, reply) => {
    const context = contextOf(request);
    const token = request.cookies[RESET_COOKIE];
    // No link at all (its cookie's 15 minutes ran out) is a dead link, refused as one is.
    if (!token) return sendHtml(reply, 422, newPasswordPage(context, null, null));
    try {
      await people.resetPassword(token, field(request.body, 'password'));
    } catch (error) {
      const refusal = refusalOf(error, context.lang, { password: wordsOf(context.lang).newPassword });
      reply.headers(refusal.headers);
      // A refused password may be tried again while the link is open (the password is checked first, so
      // a dead link's refusal may be about the password); a used or expired link is said once, in the
      // page's own words, without the API's message repeating it.
      const email = refusal.code === 'invalid_request' ? await people.resetLinkEmail(token) : null;
      if (email !== null) return sendHtml(reply, refusal.status, newPasswordPage(context, email, refusal));
      closeLink(reply);
      const dead = refusal.code === 'invalid_token' || refusal.code === 'invalid_request';
      return sendHtml(reply, refusal.status, newPasswordPage(context, null, dead ? null : refusal));
    }
    reply.clearCookie(RESET_COOKIE, { path: RESET_PATH });
    // Every session of the person ended with the reset. This browser's may be another person's (the link
    // opened where someone else is signed in): the cookie is dropped either way, so its session ends too.
    if (context.sessionToken) await people.signOut(context.sessionToken);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    setFlash(reply, 'flash_reset_done', secure);
    return seeOther(reply, '/signin');
  });
}
