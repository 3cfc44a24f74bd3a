/**
 * New task (issue 15): a model chooser (unavailable models shown disabled with the reason), a mode chooser
 * where the model has modes, and the settings form, which the `new-task` island builds in the browser from
 * the mode's JSON Schema exactly as GET /v1/models answers it (client/schema-form.ts: one renderer for
 * every model). The island asks POST /v1/price on every change and sends `Create task` to POST /v1/tasks,
 * so the form has the API's rules, limits and money. The models ride in the page, so the first paint needs
 * no call.
 */
import type { FastifyInstance } from 'fastify';
import type { Lang } from '../../i18n/index.ts';
import { CURRENCY } from '../../ledger/index.ts';
import { contextOf } from '../context.ts';
import { html, type VNode } from '../html.ts';
import { needsScript, page } from '../layout.ts';
import { sendHtml } from '../respond.ts';
import type { PageDeps } from '../routes.ts';
import { type Words, wordsOf } from '../words.ts';
import { modeLabel, modelLabel, settingWords } from '../words-settings.ts';
import { fieldFileRefusals } from './uploads.ts';

/** A model as GET /v1/models lists it: what the page and its island read. */
export interface CatalogModel {
  key: string;
  name: string;
  kind: string;
  available: boolean;
  mode_field: string | null;
  modes: Array<{ name: string; settings_schema: Record<string, unknown> }>;
}

/** What the new-task page needs: the models of GET /v1/models (the models service). */
export interface NewTaskCatalog {
  list(allowed: readonly string[] | null): Promise<CatalogModel[]>;
}

/** The page's own words and the settings' words, handed to the island in the person's language. */
function islandWords(w: Words, lang: Lang): Record<string, string> {
  // A refused upload names the field as the form labels it, not as the API does (`file`).
  const refusals = Object.entries(fieldFileRefusals(lang)).map(([code, text]) => [`refusal_${code}`, text]);
  return {
    ...Object.fromEntries(Object.entries(w).filter(([key]) => key.startsWith('new') && key !== 'newTask')),
    ...settingWords(lang),
    ...Object.fromEntries(refusals),
  };
}

/** The model and mode the page opens with: the asked ones when they exist and are open, else the first. */
export function chosen(
  models: readonly CatalogModel[],
  query: { model?: unknown; mode?: unknown },
): { model: CatalogModel | null; mode: string | null } {
  const open = models.filter((m) => m.available);
  const model = open.find((m) => m.key === query.model) ?? open[0] ?? null;
  if (!model) return { model: null, mode: null };
  const mode = model.modes.find((m) => m.name === query.mode) ?? model.modes[0];
  return { model, mode: mode?.name ?? null };
}

/** The names the choosers show, in the page's language: each model's by key and each mode's by name. */
function chooserLabels(
  models: readonly CatalogModel[],
  lang: Lang,
): { models: Record<string, string>; modes: Record<string, string> } {
  return {
    models: Object.fromEntries(models.map((m) => [m.key, modelLabel(lang, m)])),
    modes: Object.fromEntries(
      models.flatMap((m) => m.modes.map((mode) => [mode.name, modeLabel(lang, mode.name)])),
    ),
  };
}

function modelOption(model: CatalogModel, shown: string, selected: boolean, w: Words): VNode {
  const label = model.available ? shown : `${shown} — ${w.newUnavailable}`;
  return html`<option value=${model.key} selected=${selected} disabled=${!model.available} data-available=${String(model.available)}>${label}</option>`;
}

export async function newTaskPage(app: FastifyInstance, deps: PageDeps): Promise<void> {
  app.get('/new', { schema: { hide: true } }, async (request, reply) => {
    const context = contextOf(request);
    const w = wordsOf(context.lang);
    const models = await deps.catalog.list(null);
    const labels = chooserLabels(models, context.lang);
    const start = chosen(models, request.query as Record<string, unknown>);
    const locale = context.lang === 'ru' ? 'ru-RU' : 'en-US';
    const modes = start.model?.modes ?? [];
    const body = html`<p class="hint">${w.newTaskIntro}</p>
      ${
        start.model === null
          ? html`<p class="error" role="alert">${w.newNoModels}</p>`
          : html`${needsScript(w)}<form
              id="new-task"
              class="stack new-task"
              novalidate
              autocomplete="off"
              data-models=${JSON.stringify(models)}
              data-words=${JSON.stringify(islandWords(w, context.lang))}
              data-mode-labels=${JSON.stringify(labels.modes)}
              data-locale=${locale}
              data-currency=${CURRENCY}
            >
              <label>${w.newModel}
                <select id="new-model" name="model">
                  ${models.map((m) => modelOption(m, labels.models[m.key] ?? m.key, m.key === start.model?.key, w))}
                </select>
              </label>
              <label id="new-mode-field" hidden=${start.model.mode_field === null}>${w.newMode}
                <select id="new-mode" name="mode">
                  ${modes.map((m) => html`<option value=${m.name} selected=${m.name === start.mode}>${labels.modes[m.name] ?? m.name}</option>`)}
                </select>
              </label>
              <fieldset>
                <legend>${w.newSettings}</legend>
                <div id="new-settings"><p class="hint">${w.newNeedsScript}</p></div>
              </fieldset>
              <p class="price">${w.newPrice}: <output id="new-price" data-state="waiting" aria-live="polite">${w.newPriceWaiting}</output></p>
              <p id="new-error" class="error" role="alert" hidden></p>
              <button type="submit" id="new-create" data-needs-script="">${w.newCreate}</button>
            </form>`
      }`;
    return sendHtml(
      reply,
      200,
      page(context, deps.assets, { title: w.newTask, path: '/new', body, islands: ['new-task'] }),
    );
  });
}
