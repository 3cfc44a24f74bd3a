/**
 * The operator console's shell: its navigation (accounts, models, channels), the `Language` control,
 * `Sign out`, a message from the last action, and the page. Same stylesheet and language island as the
 * dashboard; no inline scripts.
 */
import type { Lang } from '../../i18n/index.ts';
import type { Assets } from '../assets.ts';
import { html, renderPage, type VNode } from '../html.ts';
import { languageControl, MAIN_ID, skipLink } from '../layout.ts';
import { CSRF_FIELD } from '../people-port.ts';
import { type WordKey, wordsOf } from '../words.ts';

/** What every console request knows before its page runs. */
export interface ConsoleContext {
  signedIn: boolean;
  lang: Lang;
  /** The token every form of the page carries in `_csrf`. */
  csrf: string;
  /** The address of a GET page, where the `Language` control comes back to; null for a post's answer. */
  here: string | null;
}

/** Messages a redirect may name in `?done=`. */
export const DONE = {
  credited: 'adminDoneCredited',
  replayed: 'adminDoneReplayed',
  revoked: 'adminDoneRevoked',
  attached: 'adminDoneAttached',
  saved: 'adminDoneSaved',
} as const satisfies Record<string, WordKey>;

export type DoneKey = keyof typeof DONE;

/** The console's navigation: a page's path and the word of its link. */
const NAV: ReadonlyArray<readonly [string, WordKey]> = [
  ['/admin/accounts', 'adminAccounts'],
  ['/admin/models', 'adminModels'],
  ['/admin/channels', 'adminChannels'],
  ['/admin/topups', 'adminTopups'],
];

/** The hidden CSRF field of every console form. */
export function consoleCsrf(context: ConsoleContext): VNode {
  return html`<input type="hidden" name=${CSRF_FIELD} value=${context.csrf} />`;
}

/** What a console page shows. */
export interface ConsolePageOptions {
  title: string;
  path: string;
  body: VNode | Array<VNode | null>;
  done?: DoneKey | null;
  /** Islands (`client/<name>.ts`) this page loads besides the `Language` control's. */
  islands?: string[];
}

/** A whole page of the console. */
export function consolePage(context: ConsoleContext, assets: Assets, options: ConsolePageOptions): string {
  const w = wordsOf(context.lang);
  const link = (href: string, label: string) =>
    html`<a href=${href} aria-current=${options.path.startsWith(href) ? 'page' : undefined}>${label}</a>`;
  const nav = context.signedIn
    ? html`<nav class="sections" aria-label=${w.adminTitle}>${NAV.map(([href, word]) => link(href, w[word]))}</nav>`
    : null;
  const signOut = context.signedIn
    ? html`<form class="inline" method="post" action="/admin/signout">
        ${consoleCsrf(context)}
        <button type="submit" class="secondary">${w.signOut}</button>
      </form>`
    : null;
  return renderPage(html`<html lang=${context.lang}>
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="robots" content="noindex" />
      <title>${options.title} · ${w.adminTitle}</title>
      <link rel="icon" type="image/svg+xml" href=${assets.href('favicon.svg')} />
      <link rel="stylesheet" href=${assets.href('site.css')} />
      ${['language', ...(options.islands ?? [])].map((name) => html`<script type="module" src=${assets.href(`${name}.js`)}></script>`)}
    </head>
    <body class="console">
      ${skipLink(context.lang)}
      <header class="top">
        <div class="bar">
          <a class="brand" href="/admin">${w.adminTitle}</a>
          <div class="account">
            ${signOut} ${languageControl(context.lang, consoleCsrf(context), '/admin/language', context.here ?? options.path)}
          </div>
        </div>
        ${nav}
      </header>
      <main id=${MAIN_ID} tabindex="-1">
        <h1>${options.title}</h1>
        ${options.done ? html`<p class="flash" role="status">${w[DONE[options.done]]}</p>` : null}
        ${options.body}
      </main>
    </body>
  </html>`);
}

/** The `done` message named by a query, if it is one. */
export function doneOf(query: unknown): DoneKey | null {
  const value = (query as Record<string, unknown> | null)?.done;
  return typeof value === 'string' && value in DONE ? (value as DoneKey) : null;
}
