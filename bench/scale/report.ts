import { formatMs, formatRate } from '../report.ts';
import type { ScaleResult } from './measure.ts';

/** A scenario measured at the small and at the large size. */
export interface SizePair {
  label: string;
  small: ScaleResult;
  large: ScaleResult;
}

/** The large size may lose at most 10 % of the small size's rate (issue 18). */
export const SCALE_TARGET = 0.9;

const rate = formatRate;
const ms = formatMs;
const share = (value: number, of: number): string => (of > 0 ? `${((value / of) * 100).toFixed(1)} %` : '—');
export const count = (value: number): string => value.toLocaleString('en-US');

/** large/small rate; 0 when the small size answered nothing. */
export function ratioOf(pair: SizePair): number {
  return pair.small.rate > 0 ? pair.large.rate / pair.small.rate : 0;
}

/** `met` when the ratio reaches the target (exported for its unit test). */
export function verdictOf(ratio: number): 'met' | 'NOT met' {
  return ratio >= SCALE_TARGET ? 'met' : 'NOT met';
}

/**
 * One Markdown table of an engine: each scenario at both sizes (rate, latency, share of the bare
 * node:http landmark measured in the same rounds), the ratio and the verdict against the target.
 */
export function sizeTable(
  pairs: readonly SizePair[],
  baseline: ScaleResult,
  sizes: { small: number; large: number },
): string {
  const s = count(sizes.small);
  const l = count(sizes.large);
  const lines = [
    `| Scenario | ${s}: req/s | p50 / p99 ms | vs node:http | ${l}: req/s | p50 / p99 ms | vs node:http | ${l} / ${s} | target ≥ ${SCALE_TARGET} |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---|',
    `| bare node:http (landmark) | ${rate(baseline.rate)} | ${ms(baseline.p50)} / ${ms(baseline.p99)} | 100 % | | | | | |`,
  ];
  for (const pair of pairs) {
    const ratio = ratioOf(pair);
    lines.push(
      `| ${pair.label} | ${rate(pair.small.rate)} | ${ms(pair.small.p50)} / ${ms(pair.small.p99)} | ${share(pair.small.rate, baseline.rate)} | ${rate(pair.large.rate)} | ${ms(pair.large.p50)} / ${ms(pair.large.p99)} | ${share(pair.large.rate, baseline.rate)} | ${ratio.toFixed(3)} | ${verdictOf(ratio)} |`,
    );
  }
  return lines.join('\n');
}

/** Notes on results a reader must know: failures, and rounds where the generator was the limit. */
export function resultNotes(results: readonly ScaleResult[]): string[] {
  const notes: string[] = [];
  for (const r of results) {
    if (r.failures > 0) notes.push(`${r.name}: ${r.failures} failed requests (errors or non-2xx)`);
    if (r.generatorLoad >= 0.9)
      notes.push(
        `${r.name}: the load generator used ${(r.generatorLoad * 100).toFixed(0)} % of its CPUs: it, not the server, may be the limit`,
      );
  }
  return notes;
}
