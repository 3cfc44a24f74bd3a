/**
 * The console's models and channels (CONTRACT §11, §13): every model with its on/off switch and active
 * tasks limit (the admin service behind PATCH /admin/v1/models/{key}), and every channel of real
 * generators with its provider, models, state, circuit and slots in use, switched on or off (the channel
 * router behind /admin/v1/channels).
 */
import type { FastifyInstance } from 'fastify';
import { MAX_ACTIVE_LIMIT } from '../../accounts/index.ts';
import { errors } from '../../errors.ts';
import { field } from '../context.ts';
import { html } from '../html.ts';
import { refusalOf, seeOther, sendHtml } from '../respond.ts';
import { type Words, wordsOf } from '../words.ts';
import { kindLabel, modelName } from '../words-settings.ts';
import { type ConsolePageDeps, consoleContextOf } from './index.ts';
import { consoleCsrf, consolePage, doneOf } from './layout.ts';

const HIDE = { schema: { hide: true } } as const;

/** A channel's circuit in the operator's language, its state's name kept beside it. */
function circuitLabel(state: string, w: Words): string {
  if (state === 'closed') return w.adminCircuitClosed;
  if (state === 'open') return w.adminCircuitOpen;
  if (state === 'half_open' || state === 'half-open') return w.adminCircuitHalfOpen;
  return state;
}

/** Registers the models' and channels' pages and their forms on the console's context. */
export async function catalogPages(app: FastifyInstance, deps: ConsolePageDeps): Promise<void> {
  const modelsPage = async (
    request: Parameters<typeof consoleContextOf>[0],
    error: string | null,
  ): Promise<string> => {
    const context = consoleContextOf(request);
    const w = wordsOf(context.lang);
    const models = await deps.port.models();
    const body = html`${error ? html`<p class="error" role="alert">${error}</p>` : null}
      <table>
        <thead><tr><th>${w.adminModel}</th><th>${w.adminKind}</th><th>${w.adminState}</th><th>${w.adminMaxActive}</th></tr></thead>
        <tbody>
          ${models.map(
            (m) => html`<tr data-model=${m.key}>
              <td><code>${m.key}</code> ${modelName(context.lang, m)}</td>
              <td>${kindLabel(context.lang, m.kind)}</td>
              <td>
                <form class="inline" method="post" action=${`/admin/models/${encodeURIComponent(m.key)}`}>
                  ${consoleCsrf(context)}
                  <input type="hidden" name="available" value=${m.available ? 'off' : 'on'} />
                  <span>${m.available ? w.adminOn : w.adminOff}</span>
                  <button type="submit" class="secondary" aria-label=${`${m.available ? w.adminTurnOff : w.adminTurnOn} ${m.key}`}>
                    ${m.available ? w.adminTurnOff : w.adminTurnOn}
                  </button>
                </form>
              </td>
              <td>
                <form class="inline" method="post" action=${`/admin/models/${encodeURIComponent(m.key)}`}>
                  ${consoleCsrf(context)}
                  <input name="max_active" type="number" min="1" max=${MAX_ACTIVE_LIMIT} required value=${m.max_active}
                    aria-label=${`${w.adminMaxActive} ${m.key}`} />
                  <button type="submit" class="secondary" aria-label=${`${w.save} ${m.key}`}>${w.save}</button>
                </form>
              </td>
            </tr>`,
          )}
        </tbody>
      </table>`;
    return consolePage(context, deps.assets, {
      title: w.adminModels,
      path: '/admin/models',
      body,
      done: error ? null : doneOf(request.query),
    });
  };

  app.get('/admin/models', HIDE, async (request, reply) =>
    sendHtml(reply, 200, await modelsPage(request, null)),
  );

  app.post<{ Params: { key: string } }>('/admin/models/:key', HIDE, async (request, reply) => {
    const context = consoleContextOf(request);
    const w = wordsOf(context.lang);
    const available = field(request.body, 'available');
    const maxText = field(request.body, 'max_active').trim();
    const patch: { available?: boolean; maxActive?: number } = {};
    if (available === 'on' || available === 'off') patch.available = available === 'on';
    if (maxText !== '') {
      const max = Number(maxText);
      if (!/^\d{1,5}$/.test(maxText) || max < 1 || max > MAX_ACTIVE_LIMIT) {
        return sendHtml(reply, 422, await modelsPage(request, w.adminBadMaxActive));
      }
      patch.maxActive = max;
    }
    try {
      await deps.port.updateModel(request.params.key, patch);
    } catch (error) {
      const refusal = refusalOf(error, context.lang);
      return sendHtml(reply, refusal.status, await modelsPage(request, refusal.message));
    }
    return seeOther(reply, '/admin/models?done=saved');
  });

  app.get('/admin/channels', HIDE, async (request, reply) => {
    const context = consoleContextOf(request);
    const w = wordsOf(context.lang);
    const channels = await deps.port.channels();
    const body =
      channels.length === 0
        ? html`<p class="hint">${w.adminNoChannels}</p>`
        : html`<table>
            <thead><tr><th>${w.adminChannel}</th><th>${w.adminProvider}</th><th>${w.adminModels}</th><th>${w.adminState}</th><th>${w.adminCircuit}</th><th>${w.adminSlots}</th><th>${w.adminLastError}</th></tr></thead>
            <tbody>
              ${channels.map(
                (c) => html`<tr data-channel=${c.name}>
                  <td><code>${c.name}</code></td>
                  <td>${c.provider}</td>
                  <td>${c.models.join(', ')}</td>
                  <td>
                    <form class="inline" method="post" action=${`/admin/channels/${encodeURIComponent(c.name)}`}>
                      ${consoleCsrf(context)}
                      <input type="hidden" name="enabled" value=${c.enabled ? 'off' : 'on'} />
                      <span>${c.enabled ? w.adminChannelOn : w.adminChannelOff}</span>
                      <button type="submit" class="secondary" aria-label=${`${c.enabled ? w.adminTurnOff : w.adminTurnOn} ${c.name}`}>
                        ${c.enabled ? w.adminTurnOff : w.adminTurnOn}
                      </button>
                    </form>
                  </td>
                  <td data-circuit=${c.state}>${circuitLabel(c.state, w)}</td>
                  <td>${c.in_flight} / ${c.max_concurrency}</td>
                  <td>${c.last_error ?? ''}</td>
                </tr>`,
              )}
            </tbody>
          </table>`;
    return sendHtml(
      reply,
      200,
      consolePage(context, deps.assets, {
        title: w.adminChannels,
        path: '/admin/channels',
        body,
        done: doneOf(request.query),
      }),
    );
  });

  app.post<{ Params: { name: string } }>('/admin/channels/:name', HIDE, async (request, reply) => {
    const enabled = field(request.body, 'enabled');
    // Nothing to change is refused, as the models' form refuses it, never answered "Saved.".
    if (enabled !== 'on' && enabled !== 'off') {
      throw errors.invalidRequest({ en: 'Send enabled: on or off.', ru: 'Передайте enabled: on или off.' });
    }
    await deps.port.setChannelEnabled(request.params.name, enabled === 'on');
    return seeOther(reply, '/admin/channels?done=saved');
  });
}
