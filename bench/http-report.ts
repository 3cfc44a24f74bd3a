import { generatorBound, type HttpMeasurement } from './http-rounds.ts';
import { formatMs, formatRate } from './report.ts';

const rate = formatRate;
const ms = formatMs;
const share = (value: number): string => value.toFixed(3);

/** A target on one scenario: its rate as a share of the landmark, and optionally a p99 ceiling. */
export interface HttpTarget {
  scenario: string;
  minShare: number;
  maxP99Ms?: number;
}

/** The scenarios as a Markdown table, each rate as a share of both landmarks measured in the same run. */
export function httpTable(
  results: readonly HttpMeasurement[],
  baseline: HttpMeasurement,
  fastify: HttpMeasurement | undefined,
): string {
  const lines = [
    "| Scenario | req/s | per round | p50 ms | p99 ms | p99 per round | / node:http | / Fastify | server CPU | others' CPU | wrk CPU | failures |",
    '|---|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const m of results) {
    const bound = generatorBound(m) ? ' (limit)' : '';
    lines.push(
      `| ${m.name} | ${rate(m.rate)} | ${m.roundRates.map(rate).join(' / ')} | ${ms(m.p50)} | ${ms(m.p99)} | ${m.roundP99s.map(ms).join(' / ')} | ` +
        `${share(m.rate / baseline.rate)} | ${fastify ? share(m.rate / fastify.rate) : '—'} | ` +
        `${m.serverCores.toFixed(2)} | ${m.bystanderCores.toFixed(2)} | ${m.generatorCores.toFixed(2)}/${m.generatorThreads}${bound} | ${m.failures} |`,
    );
  }
  return lines.join('\n');
}

/** One line per target: met or NOT met, with the figure. */
export function targetLines(
  results: readonly HttpMeasurement[],
  baseline: HttpMeasurement,
  targets: readonly HttpTarget[],
): string[] {
  const lines: string[] = [];
  for (const target of targets) {
    const m = results.find((r) => r.name === target.scenario);
    if (!m) continue;
    const ratio = m.rate / baseline.rate;
    const rateMet = ratio >= target.minShare;
    const p99Met = target.maxP99Ms === undefined || m.p99 <= target.maxP99Ms;
    const p99Text = target.maxP99Ms === undefined ? '' : `, p99 ${ms(m.p99)} ms (≤ ${target.maxP99Ms} ms)`;
    lines.push(
      `- ${m.name}: ${share(ratio)} of ${baseline.name} (≥ ${target.minShare})${p99Text}: ${rateMet && p99Met ? 'met' : 'NOT met'}`,
    );
  }
  for (const m of results) {
    if (generatorBound(m)) {
      lines.push(
        `- ${m.name}: the load generator used ${m.generatorCores.toFixed(2)} of its ${m.generatorThreads} core(s): it, not the server, may be the limit`,
      );
    }
  }
  return lines;
}
