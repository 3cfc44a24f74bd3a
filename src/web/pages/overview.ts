/**
 * The overview (CONTRACT §13): available and held money, and the spend of the last 30 Moscow days per
 * day and model as a Chart.js chart. The chart's data rides in a `data-spend` attribute (escaped by the
 * renderer) and the island draws it; a total stays readable without scripts.
 */
import type { FastifyInstance } from 'fastify';
import { CURRENCY } from '../../ledger/index.ts';
import { contextOf } from '../context.ts';
import { html } from '../html.ts';
import { page } from '../layout.ts';
import { sendHtml } from '../respond.ts';
import type { PageDeps } from '../routes.ts';
import { wordsOf } from '../words.ts';
import { modelName } from '../words-settings.ts';

/** Days the overview's chart covers. */
export const SPEND_DAYS = 30;

/** Kopecks as money in the person's language (`1 234,50 ₽`, `RUB 1,234.50`). */
export function money(minor: number, locale: string): string {
  // Rubles as an exact decimal string: `minor / 100` is a float that, past about 35 trillion rubles (the
  // API takes amounts up to 2^53 - 1 kopecks), no longer holds every kopeck and is shown a kopeck off.
  const abs = Math.abs(minor);
  const kopecks = abs % 100;
  const rubles = `${minor < 0 ? '-' : ''}${(abs - kopecks) / 100}.${String(kopecks).padStart(2, '0')}`;
  return new Intl.NumberFormat(locale, { style: 'currency', currency: CURRENCY }).format(
    rubles as Intl.StringNumericLiteral,
  );
}

export async function overviewPage(app: FastifyInstance, deps: PageDeps): Promise<void> {
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    const context = contextOf(request);
    const session = context.session;
    if (!session) throw new Error('private page without a session');
    const w = wordsOf(context.lang);
    const locale = context.lang === 'ru' ? 'ru-RU' : 'en-US';
    const view = await deps.wallet.overview(session.accountId, SPEND_DAYS);
    const balances = view?.balances ?? { balanceMinor: 0, heldMinor: 0, availableMinor: 0 };
    const spend = view?.spend ?? { days: [], byModel: {} };
    const total = Object.values(spend.byModel)
      .flat()
      .reduce((sum, v) => sum + v, 0);
    // Models by their names in the page's language, as the other pages show them (a key left behind by a
    // model no longer in the catalog stays a key).
    const catalog = new Map((await deps.models.list(null)).map((m) => [m.key, m]));
    const nameOf = (key: string) => {
      const model = catalog.get(key);
      return model ? modelName(context.lang, model) : key;
    };
    const names = Object.fromEntries(Object.keys(spend.byModel).map((key) => [key, nameOf(key)]));
    const data = JSON.stringify({ ...spend, names, currency: CURRENCY, locale });
    const body = html`<section class="cards" aria-label=${w.balance}>
        <div class="card"><div>${w.available}</div><div class="amount" data-testid="available">${money(balances.availableMinor, locale)}</div></div>
        <div class="card"><div>${w.held}</div><div class="amount" data-testid="held">${money(balances.heldMinor, locale)}</div></div>
      </section>
      <h2>${w.spend30}</h2>
      <p>${w.spendTotal}: <strong data-testid="spend-total">${money(total, locale)}</strong></p>
      ${
        total === 0
          ? html`<p class="hint">${w.noSpend}</p>`
          : html`<div class="chart"><canvas role="img" aria-label=${w.spendChart} data-spend=${data}></canvas></div>
              <details>
                <summary>${w.spendChart}</summary>
                <table>
                  <thead><tr><th>${w.spendDay}</th><th>${w.spendModel}</th><th>${w.spendAmount}</th></tr></thead>
                  <tbody>
                    ${spend.days.flatMap((day, i) =>
                      Object.entries(spend.byModel)
                        .filter(([, amounts]) => (amounts[i] ?? 0) > 0)
                        .map(
                          ([model, amounts]) =>
                            html`<tr><td>${day}</td><td>${nameOf(model)}</td><td>${money(amounts[i] ?? 0, locale)}</td></tr>`,
                        ),
                    )}
                  </tbody>
                </table>
              </details>`
      }`;
    return sendHtml(
      reply,
      200,
      page(context, deps.assets, {
        title: w.overview,
        path: '/',
        body,
        vendor: total === 0 ? [] : ['chart.js'],
        islands: total === 0 ? [] : ['spend-chart'],
      }),
    );
  });
}
