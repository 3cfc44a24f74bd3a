/**
 * Uploads (issue 15): the person's own files (`POST /v1/files`) with name, type, size, uploaded and
 * expiry times, the direct link with a copy button, a preview of pictures and recordings, deleting after a
 * confirmation (`DELETE /v1/files/{id}`), and an upload form for several files with progress. The list is
 * read on the server through the uploads service; uploading and deleting go through `/v1` from the island
 * (client/uploads.ts), so the API's size limit, types and quota are the page's.
 */
import type { FastifyInstance } from 'fastify';
import { errors } from '../../errors.ts';
import { MAX_UPLOAD_BYTES } from '../../files/index.ts';
import type { Lang } from '../../i18n/index.ts';
import { sessionPrincipal } from '../../people/index.ts';
import { contextOf, type WebContext } from '../context.ts';
import { html, type VNode } from '../html.ts';
import { needsScript, page } from '../layout.ts';
import { refusalOf, sendHtml } from '../respond.ts';
import type { PageDeps } from '../routes.ts';
import type { WebUpload } from '../uploads-port.ts';
import { fill, type Words, wordsOf } from '../words.ts';
import { moscowTime } from './ledger.ts';

const HIDE = { schema: { hide: true } } as const;

/** Bytes in the person's language: `1.5 MB`, `1,5 МБ`. */
export function bytesText(bytes: number, lang: string): string {
  const units = lang === 'ru' ? ['Б', 'КБ', 'МБ', 'ГБ'] : ['B', 'KB', 'MB', 'GB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const number = new Intl.NumberFormat(lang === 'ru' ? 'ru-RU' : 'en-US', {
    maximumFractionDigits: unit === 0 ? 0 : 1,
  }).format(value);
  return `${number} ${units[unit]}`;
}

const when = (iso: string) => html`<time datetime=${iso}>${moscowTime(iso)}</time>`;

function preview(file: WebUpload): VNode | null {
  if (file.kind === 'image') return html`<img src=${file.url} alt="" loading="lazy" />`;
  if (file.kind === 'audio') return html`<audio controls preload="none" src=${file.url}></audio>`;
  return null;
}

function fileRow(file: WebUpload, w: Words, lang: string): VNode {
  const linkId = `link-${file.id}`;
  return html`<tr id=${`upload-${file.id}`}>
    <td class="cover">${preview(file)}</td>
    <td class="record-name"><a href=${file.url}>${file.filename}</a></td>
    <td data-label=${w.upType}>${file.content_type}</td>
    <td data-label=${w.upSize}>${bytesText(file.size, lang)}</td>
    <td data-label=${w.upUploadedAt}>${when(file.created_at)}</td>
    <td data-label=${w.upExpires}>${file.held ? w.upHeld : when(file.expires_at)}</td>
    <td>
      <div class="secret">
        <input id=${linkId} type="text" readonly value=${file.url} aria-label=${`${w.upLink} ${file.filename}`} />
        <button type="button" class="secondary" data-copy=${linkId} data-copied=${w.copied} hidden>${w.copy}</button>
      </div>
    </td>
    <td class="actions">
      <button type="button" class="danger" data-needs-script="" data-delete=${`/v1/files/${file.id}`}
        data-confirm=${fill(w.upDeleteConfirm, { name: file.filename })} aria-label=${`${w.libDelete} ${file.filename}`}>${w.libDelete}</button>
    </td>
  </tr>`;
}

/**
 * The refusals of `POST /v1/files` about its `file` field in a form's words, by code: the API names the
 * field `file`, a form labels it as `label` says (`Files` on the uploads page; the new-task form passes
 * `{field}`, which its island fills with the label of the field the file was picked for). The islands
 * show these in place of the API's message.
 */
export function fileRefusals(lang: Lang, label: string): Record<string, string> {
  const labels = { file: label };
  const shown = [
    errors.fileType('file'),
    errors.fileEmpty('file'),
    errors.fileTooLarge('file', MAX_UPLOAD_BYTES),
  ];
  return Object.fromEntries(shown.map((error) => [error.code, refusalOf(error, lang, labels).message]));
}

/**
 * `fileRefusals` for a form with several file fields: `{field}` stands for the label of the field the file
 * was picked for, in the page's quotes, which the island fills in.
 */
export function fieldFileRefusals(lang: Lang): Record<string, string> {
  return fileRefusals(lang, lang === 'ru' ? '«{field}»' : '“{field}”');
}

function uploadsPage(
  context: WebContext,
  deps: PageDeps,
  listed: { files: WebUpload[]; usedBytes: number; quotaBytes: number },
): string {
  const w = wordsOf(context.lang);
  const lang = context.lang;
  const body = html`<p class="hint">${w.upIntro}</p>
    <p data-testid="upload-usage" data-usage="">${fill(w.upUsage, {
      used: bytesText(listed.usedBytes, lang),
      quota: bytesText(listed.quotaBytes, lang),
    })}</p>
    ${needsScript(w)}
    <form class="stack" data-upload-form="" data-needs-script="" data-progress=${w.upProgress} data-done=${w.upDone}
      data-refusals=${JSON.stringify(fileRefusals(lang, w.upFilesNamed))}>
      <label>${w.upFiles}<input type="file" name="file" multiple required /></label>
      <button type="submit">${w.upSend}</button>
      <p class="error" role="alert" data-form-error="" hidden></p>
      <ul class="upload-progress" role="status" data-form-status=""></ul>
    </form>
    <div data-library-list="" data-deleted=${w.libDeleted} data-yes=${w.libDeleteYes} data-cancel=${w.cancel} data-states="{}">
      <p class="error" role="alert" data-list-error="" hidden></p>
      ${
        listed.files.length === 0
          ? html`<p class="hint">${w.upNone}</p>`
          : html`<table class="uploads stack-narrow" data-empty=${w.upNone}>
              <thead><tr>
                <th>${w.upPreview}</th><th>${w.upName}</th><th>${w.upType}</th><th>${w.upSize}</th>
                <th>${w.upUploadedAt}</th><th>${w.upExpires}</th><th>${w.upLink}</th><th></th>
              </tr></thead>
              <tbody>${listed.files.map((f) => fileRow(f, w, lang))}</tbody>
            </table>`
      }
    </div>`;
  return page(context, deps.assets, {
    title: w.uploads,
    path: '/uploads',
    body,
    islands: ['uploads', 'copy', 'library-list'],
  });
}

export async function uploadsPages(app: FastifyInstance, deps: PageDeps): Promise<void> {
  app.get('/uploads', HIDE, async (request, reply) => {
    const context = contextOf(request);
    if (!context.session) throw new Error('private page without a session');
    const listed = await deps.uploads.list(sessionPrincipal(context.session));
    return sendHtml(reply, 200, uploadsPage(context, deps, listed));
  });
}
