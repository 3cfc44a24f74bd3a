/**
 * Answers of the dashboard's pages: HTML that is never cached, redirects after posts, messages of service
 * errors in the person's language (never a 500 for a refusal), and the 403 page of a failed CSRF check.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ApiError, errors, isApiError } from '../errors.ts';
import { type Lang, type MessageKey, translate } from '../i18n/index.ts';
import type { Assets } from './assets.ts';
import type { WebContext } from './context.ts';
import { html } from './html.ts';
import { page } from './layout.ts';
import { fill, wordsOf } from './words.ts';

/** Sends a page's markup. */
export function sendHtml(reply: FastifyReply, status: number, markup: string): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(markup);
}

/** The largest form body a dashboard or console page takes (@fastify/formbody). */
export const FORM_BODY_LIMIT = 64 * 1024;

/** What a page says of a form body it does not read, by the framework's status. */
const UNREAD_BODY: Readonly<Record<number, { en: string; ru: string }>> = {
  415: {
    en: 'Send the form as a browser does: Content-Type: application/x-www-form-urlencoded.',
    ru: 'Отправьте форму так, как это делает браузер: Content-Type: application/x-www-form-urlencoded.',
  },
  400: {
    en: 'The form could not be read: its body is malformed.',
    ru: 'Форму не удалось прочитать: её тело составлено неверно.',
  },
};

/**
 * What a page's error handler answers for an error: its status (a refusal's, Fastify's own 4xx, else 500)
 * and the refusal to word, if any: an API refusal as it is, a body over its limit as the
 * request_too_large refusal naming that limit (a form's, or the route's for other bodies), a body of a
 * type no page reads (415) or one that does not parse (400) as what to send instead. Null: a fault the
 * page words as "Something went wrong".
 */
export function pageFailure(
  error: unknown,
  request: FastifyRequest,
): { status: number; refusal: ApiError | null } {
  if (isApiError(error)) return { status: error.status, refusal: error };
  const code = (error as { statusCode?: unknown }).statusCode;
  const status = typeof code === 'number' && code < 500 ? code : 500;
  // A body the dashboard does not read (415: no browser's form sends one) or cannot parse (400): said,
  // not "something went wrong".
  const unread = UNREAD_BODY[status];
  if (unread) return { status, refusal: errors.invalidRequest(unread) };
  if (status !== 413) return { status, refusal: null };
  const form = /^application\/x-www-form-urlencoded/i.test(request.headers['content-type'] ?? '');
  const limit = form ? FORM_BODY_LIMIT : (request.routeOptions.bodyLimit ?? FORM_BODY_LIMIT);
  return { status, refusal: errors.requestTooLarge(limit) };
}

/** 303 See Other: the browser follows with a GET, so a reload never posts twice. */
export function seeOther(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(303).header('cache-control', 'no-store').header('location', location).send();
}

/** A service refusal as the page shows it: its status, message and headers (Retry-After). */
export interface Refusal {
  /** The error table's code (`invalid_request`, `rate_limited`…). */
  code: string;
  status: number;
  message: string;
  /**
   * The API's name of the form's field the refusal is about (its message's leading `field: `, or its
   * `{field}`), when the page labels that field; null for a refusal of the whole form.
   */
  field: string | null;
  headers: Readonly<Record<string, string>>;
}

/**
 * The words of a form's labels for the API's field names it sends (`{ password: 'New password' }`), so
 * a refusal names the field as the page does; the page shows a refusal of such a field at the field
 * (layout.ts `fieldProblem`), not in its error box.
 */
export type FieldLabels = Readonly<Record<string, string>>;

/** The API's field a message starts with (`password: from 8 to 200 characters.`), if the form labels it. */
function leadingField(message: string, labels: FieldLabels): string | null {
  const colon = message.indexOf(': ');
  const name = colon > 0 ? message.slice(0, colon) : '';
  return Object.hasOwn(labels, name) ? name : null;
}

/**
 * A message naming the API's field as the form labels it: the API starts a field's refusal with its name
 * (`password: from 8 to 200 characters.`), which means nothing on a page whose field is "New password".
 */
function named(message: string, labels: FieldLabels): string {
  const name = leadingField(message, labels);
  return name === null ? message : `${labels[name]}${message.slice(name.length)}`;
}

/** "Too many attempts. Try again in 15 min." for a wait in whole seconds: what a person is told. */
export function tooManyAttempts(waitSeconds: number, lang: Lang): string {
  const w = wordsOf(lang);
  const wait =
    waitSeconds < 60
      ? fill(w.waitSeconds, { n: String(waitSeconds) })
      : fill(w.waitMinutes, { n: String(Math.ceil(waitSeconds / 60)) });
  return fill(w.tooManyWait, { wait });
}

/**
 * The refusal of a service error in the person's language, the fields named by `labels` (a message's
 * leading `field: `, or the `{field}` of a translated one); anything that is not an `ApiError` is
 * rethrown (a real fault, answered by the error page as 500). The JSON API's words are not changed.
 */
export function refusalOf(error: unknown, lang: Lang, labels: FieldLabels = {}): Refusal {
  if (!isApiError(error)) throw error;
  const param = error.params.field;
  const labelled = typeof param === 'string' && Object.hasOwn(labels, param) ? param : null;
  const params = labelled === null ? error.params : { ...error.params, field: labels[labelled] as string };
  const field = error.detail ? leadingField(error.detail[lang], labels) : labelled;
  const message = error.detail
    ? named(error.detail[lang], labels)
    : (() => {
        try {
          return translate(error.code as MessageKey, lang, params);
        } catch {
          return error.code;
        }
      })();
  const wait = Number(error.headers['Retry-After']);
  // The API's text sends a program to its Retry-After header; a person is told the wait itself.
  if (error.code === 'rate_limited' && Number.isInteger(wait) && wait > 0) {
    return {
      code: error.code,
      status: error.status,
      message: tooManyAttempts(wait, lang),
      field: null,
      headers: error.headers,
    };
  }
  return {
    code: error.code,
    status: error.status,
    message: message ?? error.code,
    field,
    headers: error.headers,
  };
}

/** The 403 page of a POST without its CSRF token. */
export function csrfRefused(reply: FastifyReply, context: WebContext, assets: Assets): FastifyReply {
  const w = wordsOf(context.lang);
  return sendHtml(
    reply,
    403,
    page(context, assets, {
      title: w.csrfTitle,
      path: '/',
      body: html`<p class="error" role="alert">${w.csrfBody}</p>
        <p><a href="/">${w.back}</a></p>`,
    }),
  );
}
