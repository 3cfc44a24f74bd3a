/**
 * The page shell: header with navigation, the `Language` control and sign-out, the flash message, the
 * page's content, and its scripts (external files only: the Content-Security-Policy allows no inline
 * script).
 */
import type { Lang } from '../i18n/index.ts';
import { type Assets, VENDOR_MODULES } from './assets.ts';
import type { WebContext } from './context.ts';
import { html, renderPage, type VNode } from './html.ts';
import { CSRF_FIELD } from './people-port.ts';
import { type WordKey, type Words, wordsOf } from './words.ts';

export interface PageOptions {
  title: string;
  /** The path of the page's section, to mark the current link (and to come back to from a post's answer). */
  path: string;
  body: VNode | Array<VNode | null>;
  /** Islands (`client/<name>.ts`) this page loads. */
  islands?: string[];
  /** Vendor files this page loads before its islands. */
  vendor?: string[];
}

/** The signed-in navigation: a page's path and the word of its link. */
const NAV: ReadonlyArray<readonly [string, WordKey]> = [
  ['/', 'overview'],
  ['/tasks', 'tasks'],
  ['/new', 'newTask'],
  ['/libraries', 'libraries'],
  ['/uploads', 'uploads'],
  ['/ledger', 'ledger'],
  ['/topup', 'topUp'],
  ['/keys', 'keys'],
  ['/settings', 'settings'],
];

/**
 * The meta element that gives islands the CSRF token their `/v1` calls send in `X-CSRF-Token`
 * (client/api.ts reads it).
 */
export const CSRF_META = 'csrf-token';

/**
 * The meta element with the page's words for a `/v1` refusal of its ended session (client/api.ts
 * `sessionRefusal`), which the API words for API clients.
 */
export const SESSION_ENDED_META = 'session-ended';

/**
 * The meta element with the page's words for a `/v1` call that got no readable answer (the connection
 * failed, or a proxy answered its own error page): client/api.ts `callFailed`.
 */
export const CALL_FAILED_META = 'call-failed';

/** The hidden CSRF field every form carries. */
export function csrfField(context: WebContext): VNode {
  return html`<input type="hidden" name=${CSRF_FIELD} value=${context.csrf} />`;
}

/**
 * The `Language` control (English / Русский): a form posted to `action` with the page's CSRF field and
 * the page to come back to; its island sends it on change. The dashboard and the operator console share it.
 */
export function languageControl(lang: Lang, csrf: VNode, action: string, path: string): VNode {
  const w = wordsOf(lang);
  // Each language is named in itself (English, Русский), so it carries its own `lang`: a screen reader
  // then says `Русский` with Russian speech on an English page, and `English` with English on a Russian one.
  const option = (value: Lang, label: string) =>
    html`<option value=${value} lang=${value} selected=${lang === value}>${label}</option>`;
  return html`<form class="inline" method="post" action=${action} data-autosubmit="">
    ${csrf}
    <input type="hidden" name="next" value=${path} />
    <label class="check" for="language-select">${w.language}</label>
    <select id="language-select" name="lang">
      ${option('en', w.english)} ${option('ru', w.russian)}
    </select>
    <button type="submit" class="secondary">${w.apply}</button>
  </form>`;
}

/** The id of every page's `<main>`, the target of the skip link. */
export const MAIN_ID = 'content';

/**
 * The first focusable element of every page (dashboard and console): a link past the header's dozen
 * links to the page's content, shown when focused (site.css `a.skip`). The target `<main>` carries
 * `tabindex="-1"` so browsers move the focus, not only the scroll, there.
 */
export function skipLink(lang: Lang): VNode {
  return html`<a class="skip" href=${`#${MAIN_ID}`}>${wordsOf(lang).skipToContent}</a>`;
}

/** A whole page of the dashboard. */
export function page(context: WebContext, assets: Assets, options: PageOptions): string {
  const w = wordsOf(context.lang);
  const current = (href: string) =>
    href === '/' ? options.path === '/' : options.path === href || options.path.startsWith(`${href}/`);
  const link = (href: string, label: string) =>
    html`<a href=${href} aria-current=${current(href) ? 'page' : undefined}>${label}</a>`;
  const account = context.session
    ? html`<span class="hint">${context.session.email}</span>
        <form class="inline" method="post" action="/signout">
          ${csrfField(context)}
          <button type="submit" class="secondary">${w.signOut}</button>
        </form>`
    : html`<nav aria-label=${w.title}>${link('/signin', w.signIn)} ${link('/signup', w.signUp)}</nav>`;
  const sections = context.session
    ? html`<nav class="sections" aria-label=${w.title}>${NAV.map(([href, word]) => link(href, w[word]))}</nav>`
    : null;
  const islands = ['language', ...(options.islands ?? [])];
  return renderPage(html`<html lang=${context.lang}>
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name=${CSRF_META} content=${context.csrf} />
      <meta name=${SESSION_ENDED_META} content=${w.sessionEnded} />
      <meta name=${CALL_FAILED_META} content=${w.callFailed} />
      <title>${options.title} · ${w.title}</title>
      <link rel="icon" type="image/svg+xml" href=${assets.href('favicon.svg')} />
      <link rel="stylesheet" href=${assets.href('site.css')} />
      ${(options.vendor ?? []).map((name) => html`<script type=${VENDOR_MODULES.has(name) ? 'module' : undefined} src=${assets.vendorHref(name)} defer></script>`)}
      ${islands.map((name) => html`<script type="module" src=${assets.href(`${name}.js`)}></script>`)}
    </head>
    <body>
      ${skipLink(context.lang)}
      <header class="top">
        <div class="bar">
          <a class="brand" href="/">${w.title}</a>
          <div class="account">${account} ${languageControl(context.lang, csrfField(context), '/language', context.here ?? options.path)}</div>
        </div>
        ${sections}
      </header>
      <main id=${MAIN_ID} tabindex="-1">
        <h1>${options.title}</h1>
        ${context.flash ? html`<p class="flash" role="status">${w[context.flash]}</p>` : null}
        ${options.body}
      </main>
    </body>
  </html>`);
}

/**
 * What a form was refused for: the message, and the API's name of the field it is about (`Refusal`'s
 * `field`, or the page's own check of a field); no field: the whole form.
 */
export interface FormProblem {
  message: string;
  field?: string | null;
}

/**
 * Said only where the browser runs no script, on pages whose forms are sent by their script (a new task,
 * uploads, libraries): their controls carry `data-needs-script`, which site.css hides then (`@media
 * (scripting: none)`), so no button does nothing and no form sends what was typed into the address.
 */
export function needsScript(w: Words): VNode {
  return html`<noscript><p class="error" role="alert">${w.needsScript}</p></noscript>`;
}

/**
 * The error box of a form, announced as the page opens: every problem, a field's too (`fieldProblem`
 * also says that one at its field, which is what the field's description reads).
 */
export function errorBox(problem: FormProblem | null): VNode | null {
  return problem ? html`<p class="error" role="alert">${problem.message}</p>` : null;
}

/**
 * A form control of the field `name` (the API's) and what it shows of `problem`, as the islands mark a
 * field (client/form-feedback.ts, whose ids these are): about this field, the control is `aria-invalid`,
 * names the message under it in `aria-describedby` and takes the focus as the page opens (`autofocus`);
 * otherwise nothing. `attributes` go on the control, `note` right after it (after its label).
 */
export function fieldProblem(
  problem: FormProblem | null,
  name: string,
  /**
   * The id of the field's hint (`At least 8 characters.`): its description until a problem is said there,
   * which then is the description alone (the message says what the hint said, and what was wrong).
   */
  hint?: string,
): { attributes: Record<string, string | boolean>; note: VNode | null } {
  if (!problem?.field || problem.field !== name)
    return { attributes: hint === undefined ? {} : { 'aria-describedby': hint }, note: null };
  const id = `field-${name}`;
  return {
    attributes: { id, 'aria-invalid': 'true', 'aria-describedby': `${id}-problem`, autofocus: true },
    note: html`<p class="error field-problem" id=${`${id}-problem`}>${problem.message}</p>`,
  };
}
