/**
 * The overview's spend chart: a stacked bar per Moscow day and model, drawn by Chart.js (loaded before
 * this file from `/assets/vendor/chart.js`) from the data the server put in `data-spend`.
 */
interface SpendData {
  days: string[];
  byModel: Record<string, number[]>;
  /** Each model's name in the page's language, by key. */
  names?: Record<string, string>;
  currency: string;
  locale: string;
}

declare const Chart: new (canvas: HTMLCanvasElement, config: unknown) => unknown;

const COLORS = ['#3559e0', '#e07a35', '#2f9e6e', '#b03ad0', '#d03a55', '#8a8f2e', '#2ea5b8', '#7a5230'];

const canvas = document.querySelector<HTMLCanvasElement>('canvas[data-spend]');
if (canvas && typeof Chart === 'function') {
  const data = JSON.parse(canvas.dataset.spend ?? '{}') as SpendData;
  const money = new Intl.NumberFormat(data.locale, { style: 'currency', currency: data.currency });
  // Day and month in the page's order: `30.11` on Russian pages, `11/30` on English ones.
  const dayMonth = new Intl.DateTimeFormat(data.locale, {
    day: '2-digit',
    month: '2-digit',
    timeZone: 'UTC',
  });
  new Chart(canvas, {
    type: 'bar',
    data: {
      labels: data.days.map((day) => dayMonth.format(new Date(`${day}T00:00:00Z`))),
      datasets: Object.entries(data.byModel).map(([model, amounts], i) => ({
        label: data.names?.[model] ?? model,
        data: amounts.map((minor) => minor / 100),
        backgroundColor: COLORS[i % COLORS.length],
      })),
    },
    options: {
      animation: false,
      maintainAspectRatio: false,
      scales: {
        x: { stacked: true },
        y: { stacked: true, ticks: { callback: (v: number) => money.format(v) } },
      },
      plugins: {
        tooltip: {
          callbacks: {
            label: (item: { dataset: { label: string }; parsed: { y: number } }) =>
              `${item.dataset.label}: ${money.format(item.parsed.y)}`,
          },
        },
      },
    },
  });
}
