import { formatMs } from '../report.ts';
import type { WrkOutcome } from '../wrk.ts';

/** One run of a scenario: wrk's outcome and the CPU the server used meanwhile (cores). */
export interface RoundOutcome {
  wrk: WrkOutcome;
  serverCores: number;
}

/** A scenario's figures over its measured rounds. */
export interface DownloadSummary {
  name: string;
  /** Megabytes (10^6) per second over all rounds: total bytes / total seconds. */
  mbPerSecond: number;
  /** Responses per second over all rounds. */
  rate: number;
  /** MB/s of each round. */
  roundMbPerSecond: number[];
  /** Median of the rounds' p50, ms. */
  p50: number;
  /** Highest of the rounds' p99, ms (the worst round counts). */
  p99: number;
  failures: number;
  /** Mean CPU the server used, cores. */
  serverCores: number;
  /** Mean CPU the load generator used, cores, and its thread count (its ceiling). */
  generatorCores: number;
  generatorThreads: number;
}

function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

const mean = (values: readonly number[]): number =>
  values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;

/** Folds the rounds of one scenario into its figures. Exported for its unit test. */
export function summarizeRounds(name: string, rounds: readonly RoundOutcome[]): DownloadSummary {
  const seconds = rounds.reduce((sum, r) => sum + r.wrk.seconds, 0);
  const bytes = rounds.reduce((sum, r) => sum + r.wrk.bytesPerSecond * r.wrk.seconds, 0);
  const ok = rounds.reduce((sum, r) => sum + r.wrk.ok, 0);
  return {
    name,
    mbPerSecond: seconds > 0 ? bytes / seconds / 1e6 : 0,
    rate: seconds > 0 ? ok / seconds : 0,
    roundMbPerSecond: rounds.map((r) => r.wrk.bytesPerSecond / 1e6),
    p50: median(rounds.map((r) => r.wrk.p50)),
    p99: Math.max(0, ...rounds.map((r) => r.wrk.p99)),
    failures: rounds.reduce((sum, r) => sum + r.wrk.failures, 0),
    serverCores: mean(rounds.map((r) => r.serverCores)),
    generatorCores: mean(rounds.map((r) => r.wrk.generatorCores)),
    generatorThreads: rounds[0]?.wrk.generatorThreads ?? 1,
  };
}

/** Whether the generator, not the server, was the limit: it used 90 % or more of its CPUs. */
export function generatorBound(summary: DownloadSummary): boolean {
  return summary.generatorCores >= 0.9 * summary.generatorThreads;
}

const fixed = (value: number, digits: number): string => value.toFixed(digits);
const ms = formatMs;

/**
 * CPU milliseconds the server spent per megabyte sent: on a shared machine, where the server does not get
 * its core to itself, a steadier measure of the serving path's cost than MB/s.
 */
export function cpuPerMb(summary: DownloadSummary): number {
  return summary.mbPerSecond > 0 ? (summary.serverCores * 1000) / summary.mbPerSecond : 0;
}

/** The figures as a Markdown table. */
export function downloadTable(summaries: readonly DownloadSummary[]): string {
  const lines = [
    '| Scenario | MB/s | MB/s per round | req/s | p50 (ms) | p99 (ms) | server CPU | server CPU ms per MB | generator CPU | failures |',
    '|---|---:|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const s of summaries) {
    lines.push(
      `| ${s.name} | ${fixed(s.mbPerSecond, 0)} | ${s.roundMbPerSecond.map((v) => fixed(v, 0)).join(' / ')} | ${fixed(s.rate, 1)} | ${ms(s.p50)} | ${ms(s.p99)} | ${fixed(s.serverCores, 2)} | ${fixed(cpuPerMb(s), 2)} | ${fixed(s.generatorCores, 2)}/${s.generatorThreads}${generatorBound(s) ? ' (limit)' : ''} | ${s.failures} |`,
    );
  }
  return lines.join('\n');
}

/** `app/nginx: 0.912 (target ≥ 0.8: met)` for a pair measured in the same run. */
export function ratioLine(
  label: string,
  app: DownloadSummary,
  nginx: DownloadSummary,
  target: number,
): string {
  const ratio = nginx.mbPerSecond > 0 ? app.mbPerSecond / nginx.mbPerSecond : 0;
  const verdict = ratio >= target ? 'met' : 'NOT met';
  return `- ${label} app/nginx: ${ratio.toFixed(3)} (target ≥ ${target}: ${verdict})`;
}
