/**
 * A singing voice's steps (reference "Singing voices" and its states): after step 1 (the recording of the
 * person singing, made with the generic creation form) the record's page shows its state; in
 * `pending_recording` the phrase, prominently, and step 2 (a recording of the phrase, uploaded or recorded
 * in the browser, and a name → `POST …/voices/{id}/verify`); in `failed` the reason and `retry` for a new
 * phrase. The island (client/library-voice.ts) polls the record every 2 s while it passes through a state
 * and shows the page of the next one.
 */
import type { WebContext } from '../context.ts';
import { html } from '../html.ts';
import { page } from '../layout.ts';
import { type LibraryDecl, libraryPath, verifyBody } from '../libraries-port.ts';
import type { PageDeps } from '../routes.ts';
import { fill, wordsOf } from '../words.ts';
import { creationForm, kindTitle, wordOr } from './library-form.ts';
import { kindHref, passingStates, stateBadge, stateWords } from './library-parts.ts';

/** The page of one singing voice in its current state. */
export function voicePage(
  context: WebContext,
  deps: PageDeps,
  decl: LibraryDecl,
  record: Record<string, unknown>,
): string {
  const w = wordsOf(context.lang);
  const id = String(record.id);
  const status = String(record.status ?? '');
  const path = `${libraryPath(decl)}/${id}`;
  const passing = passingStates(decl);
  const phrase = typeof record.phrase === 'string' ? record.phrase : null;
  const error = typeof record.error === 'string' ? record.error : null;
  const name = typeof record.name === 'string' ? record.name : w.libUnnamed;
  const steps = decl.steps ?? {};
  const verify = Object.entries(steps).find(([, step]) => step.from === status && step.succeeds);
  const retry = Object.entries(steps).find(([, step]) => step.from === status && !step.succeeds);
  const body = html`<section class="voice-state" data-voice=${path} data-status=${status}
      data-poll=${passing.includes(status) ? passing.join(' ') : undefined} data-states=${stateWords(w)}>
    <p>${stateBadge(w, status)} <span>${wordOr(w, `voice:${status}`, '')}</span></p>
    ${error ? html`<p class="error" role="alert">${fill(w.libError, { error })}</p>` : null}
  </section>
  ${
    phrase && verify
      ? html`<h2>${w.voiceStep2}</h2>
          <blockquote class="phrase" aria-label=${w.libPhrase}>${phrase}</blockquote>
          <p class="hint">${w.voiceStep2Hint}</p>
          ${creationForm(decl, {
            path: `${path}/${verify[0]}`,
            next: `${kindHref(decl)}/${id}`,
            w,
            lang: context.lang,
            schema: verifyBody,
            submit: w.voiceVerify,
          })}`
      : null
  }
  ${
    retry
      ? html`<form class="stack library-form" data-library-form="" data-path=${`${path}/${retry[0]}`}
            data-next=${`${kindHref(decl)}/${id}`} data-creating=${w.libCreating}>
          <p class="error" role="alert" data-form-error="" hidden></p>
          <p class="hint" role="status" data-form-status=""></p>
          <button type="submit">${w.voiceRetry}</button>
        </form>`
      : null
  }
  <p><a href=${`/libraries#${decl.model}-${decl.segment}`}>${w.libBack}</a></p>`;
  return page(context, deps.assets, {
    title: `${kindTitle(w, decl)}: ${name}`,
    path: '/libraries',
    body,
    islands: ['library-create', 'library-voice'],
  });
}
