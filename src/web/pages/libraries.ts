/**
 * Libraries (issue 15): every declared library of every model, grouped by model, with the person's
 * records (name, state, error, created, cover), the kind's limits, a link to create and deleting after a
 * confirmation; a creation form per kind rendered from its declaration (library-form.ts). Everything is
 * driven by `LIBRARIES`: a new declaration gets its section and form without a page of its own. Lists
 * are read on the server through the library service; creating, deleting and the live state of records
 * that learn or wait go through `/v1` from the islands (client/library-*.ts).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { sessionPrincipal } from '../../people/index.ts';
import { contextOf, type WebContext } from '../context.ts';
import { html, type VNode } from '../html.ts';
import { needsScript, page } from '../layout.ts';
import { findLibrary, LIBRARIES, type LibraryDecl, libraryPath } from '../libraries-port.ts';
import { sendHtml } from '../respond.ts';
import type { PageDeps } from '../routes.ts';
import { fill, type Words, wordsOf } from '../words.ts';
import { modelLabel } from '../words-settings.ts';
import { moscowTime } from './ledger.ts';
import { creationForm, fieldLabel, filesRule, kindTitle, valueLabel, wordOr } from './library-form.ts';
import { kindHref, passingStates, stateBadge, stateWords } from './library-parts.ts';
import { voicePage } from './library-voice.ts';

const HIDE = { schema: { hide: true } } as const;

type Bound = Partial<Record<'min_length' | 'max_length' | 'min_items' | 'max_items' | 'min' | 'max', number>>;

/** One declared bound in words: characters, files, a range, or the declared value as it is. */
function boundText(value: unknown, w: Words): string {
  if (Array.isArray(value)) return value.map((v) => valueLabel(w, String(v))).join(', ');
  if (typeof value !== 'object' || value === null) return String(value);
  const b = value as Bound;
  if (b.max_length !== undefined) {
    return b.min_length
      ? fill(w.libChars, { min: String(b.min_length), max: String(b.max_length) })
      : fill(w.libUpToChars, { max: String(b.max_length) });
  }
  if (b.max_items !== undefined) {
    return b.max_items === 1
      ? w.libOneFile
      : fill(w.libItems, { min: String(b.min_items ?? 0), max: String(b.max_items) });
  }
  // A bound from nothing (`records: {min: 0, max: 500}`) reads as a cap: "at most 500", not "from 0 to 500".
  if (b.max !== undefined && !b.min) return fill(w.libAtMost, { max: String(b.max) });
  if (b.max !== undefined) return fill(w.libRange, { min: String(b.min ?? 0), max: String(b.max) });
  if (b.min !== undefined) return fill(w.libAtLeast, { min: String(b.min) });
  return JSON.stringify(value);
}

/** The list response's `limits` in words: bounds of fields, files, and anything else as declared. */
function limitsText(limits: Record<string, unknown>, w: Words): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(limits)) {
    if (key === 'accepted_files') {
      for (const [field, rule] of Object.entries(value as Record<string, Parameters<typeof filesRule>[2]>)) {
        out.push(filesRule(w, field, rule));
      }
      continue;
    }
    // A limit declared as a sentence has its words as `limit:<key>` (the declared sentence otherwise).
    const text = typeof value === 'string' ? wordOr(w, `limit:${key}`, value) : boundText(value, w);
    out.push(`${fieldLabel(w, key)}: ${text}`);
  }
  return out;
}

/**
 * A record's cover in its row: a picture, or a muted video showing its first frame where the record is
 * a video (a video element's `cover_url` is its video, docs/libraries.md), which an `<img>` cannot show.
 */
function coverOf(r: Record<string, unknown>): VNode | null {
  if (typeof r.cover_url !== 'string') return null;
  return r.type === 'video'
    ? html`<video src=${r.cover_url} muted playsinline preload="metadata"></video>`
    : html`<img src=${r.cover_url} alt="" loading="lazy" />`;
}

function recordRow(decl: LibraryDecl, r: Record<string, unknown>, w: Words): VNode {
  const id = String(r.id);
  const name = typeof r.name === 'string' && r.name !== '' ? r.name : w.libUnnamed;
  const status = typeof r.status === 'string' ? r.status : null;
  const passing = passingStates(decl);
  const error = typeof r.error === 'string' ? r.error : null;
  const created = typeof r.created_at === 'string' ? r.created_at : '';
  return html`<tr id=${`record-${id}`} data-record=${`${libraryPath(decl)}/${id}`}
      data-poll=${status !== null && passing.includes(status) ? passing.join(' ') : undefined}>
    <td class="cover">${coverOf(r)}</td>
    <td class="record-name">${decl.steps ? html`<a href=${`${kindHref(decl)}/${id}`}>${name}</a>` : name}</td>
    <td data-label=${w.libState}>${status === null ? null : stateBadge(w, status)}
      <span class="error-text" data-record-error="">${error ? fill(w.libError, { error }) : null}</span></td>
    <td data-label=${w.libCreatedAt}>${created ? html`<time datetime=${created}>${moscowTime(created)}</time>` : null}</td>
    <td class="actions">
      <button type="button" class="danger" data-needs-script="" data-delete=${`${libraryPath(decl)}/${id}`}
        data-confirm=${fill(w.libDeleteConfirm, { name })} aria-label=${`${w.libDelete} ${name}`}>${w.libDelete}</button>
    </td>
  </tr>`;
}

function kindSection(decl: LibraryDecl, list: Record<string, unknown>, w: Words): VNode {
  const records = (list[decl.segment] as Record<string, unknown>[] | undefined) ?? [];
  const limits = limitsText((list.limits as Record<string, unknown> | undefined) ?? {}, w);
  const title = kindTitle(w, decl);
  return html`<section class="library" id=${`${decl.model}-${decl.segment}`} data-kind=${`${decl.model}/${decl.segment}`}>
    <h3>${title} <span class="hint" data-count=${`${decl.model}/${decl.segment}`}>${fill(records.length === 1 ? w.libCountOne : w.libCount, { count: String(records.length) })}</span></h3>
    <p><a class="button" href=${`${kindHref(decl)}/new`} aria-label=${`${w.libNew}: ${title}`}>${w.libNew}</a></p>
    ${
      records.length === 0
        ? html`<p class="hint">${w.libEmpty}</p>`
        : html`<table class="stack-narrow" data-empty=${w.libEmpty}>
            <thead><tr><th></th><th>${w.libRecord}</th><th>${w.libState}</th><th>${w.libCreatedAt}</th><th></th></tr></thead>
            <tbody>${records.map((r) => recordRow(decl, r, w))}</tbody>
          </table>`
    }
    ${limits.length > 0 ? html`<p class="hint limits"><strong>${w.libLimits}:</strong> ${limits.join(' · ')}</p>` : null}
  </section>`;
}

function listPage(
  context: WebContext,
  deps: PageDeps,
  lists: Map<LibraryDecl, Record<string, unknown>>,
  names: ReadonlyMap<string, string>,
): string {
  const w = wordsOf(context.lang);
  const models = [...new Set(LIBRARIES.map((d) => d.model))];
  // A model as the other pages show it: its name in the page's language, then its key.
  const shown = (key: string) => modelLabel(context.lang, { key, name: names.get(key) ?? key });
  const body = html`<p class="hint">${w.libIntro}</p>
    ${needsScript(w)}
    <p class="error" role="alert" data-list-error="" hidden></p>
    <div data-library-list="" data-states=${stateWords(w)} data-deleted=${w.libDeleted}
      data-yes=${w.libDeleteYes} data-cancel=${w.cancel}>
      ${models.map(
        (model) => html`<section class="model" aria-labelledby=${`model-${model}`}>
          <h2 id=${`model-${model}`}>${fill(w.libModel, { model: shown(model) })}</h2>
          ${LIBRARIES.filter((d) => d.model === model).map((d) => kindSection(d, lists.get(d) ?? {}, w))}
        </section>`,
      )}
    </div>`;
  return page(context, deps.assets, {
    title: w.libraries,
    path: '/libraries',
    body,
    islands: ['library-list'],
  });
}

function createPage(context: WebContext, deps: PageDeps, decl: LibraryDecl): string {
  const w = wordsOf(context.lang);
  const title = `${w.libNew}: ${kindTitle(w, decl)}`;
  // Kinds with steps of their own (singing voices) continue on the record's page; the others on the list.
  const next = decl.steps ? `${kindHref(decl)}/{id}` : `/libraries#record-{id}`;
  const body = html`${decl.steps ? html`<h2>${w.voiceStep1}</h2><p class="hint">${w.voiceStep1Hint}</p>` : null}
    ${creationForm(decl, { path: libraryPath(decl), next, w, lang: context.lang, idempotent: true })}
    <p><a href=${`/libraries#${decl.model}-${decl.segment}`}>${w.libBack}</a></p>`;
  return page(context, deps.assets, {
    title,
    path: '/libraries',
    body,
    islands: ['library-create'],
  });
}

/** The 404 page of a library path no declaration has. */
function noSuchKind(context: WebContext, deps: PageDeps, reply: FastifyReply): FastifyReply {
  const w = wordsOf(context.lang);
  const body = html`<p class="error" role="alert">${w.notFound}</p><p><a href="/libraries">${w.libBack}</a></p>`;
  return sendHtml(
    reply,
    404,
    page(context, deps.assets, { title: w.notFoundTitle, path: '/libraries', body }),
  );
}

export async function librariesPages(app: FastifyInstance, deps: PageDeps): Promise<void> {
  app.get('/libraries', HIDE, async (request, reply) => {
    const context = contextOf(request);
    if (!context.session) throw new Error('private page without a session');
    const principal = sessionPrincipal(context.session);
    const lists = new Map<LibraryDecl, Record<string, unknown>>();
    for (const decl of LIBRARIES) lists.set(decl, await deps.libraries.list(principal, decl));
    const names = new Map((await deps.models.list(null)).map((m) => [m.key, m.name]));
    return sendHtml(reply, 200, listPage(context, deps, lists, names));
  });

  app.get<{ Params: { model: string; segment: string } }>(
    '/libraries/:model/:segment/new',
    HIDE,
    async (request, reply) => {
      const context = contextOf(request);
      const decl = findLibrary(request.params.model, request.params.segment);
      if (!decl) return noSuchKind(context, deps, reply);
      return sendHtml(reply, 200, createPage(context, deps, decl));
    },
  );

  app.get<{ Params: { model: string; segment: string; id: string } }>(
    '/libraries/:model/:segment/:id',
    HIDE,
    async (request, reply) => {
      const context = contextOf(request);
      if (!context.session) throw new Error('private page without a session');
      const decl = findLibrary(request.params.model, request.params.segment);
      if (!decl) return noSuchKind(context, deps, reply);
      if (!decl.steps)
        // Encoded: a line break or a non-Latin-1 letter from the link may not reach a header raw.
        return reply
          .code(303)
          .header('location', `/libraries#record-${encodeURIComponent(request.params.id)}`)
          .send();
      const record = await deps.libraries.get(sessionPrincipal(context.session), decl, request.params.id);
      return sendHtml(reply, 200, voicePage(context, deps, decl, record));
    },
  );
}
