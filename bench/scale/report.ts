import type { Measurement } from '../load.ts';
import { markdownTable } from '../report.ts';
import type { ScenarioResult } from './interleave.ts';

/** A two-process scenario and its one-process counterpart. */
export interface ScalePair {
  label: string;
  one: Measurement;
  two: Measurement;
}

const cores = (value: number): string => value.toFixed(2);

/** The figures, in the table format of `npm run bench` (each rate also as a share of the baseline). */
export function resultTable(results: readonly ScenarioResult[], baseline: Measurement): string {
  return markdownTable(
    results.map((r) => r.measurement),
    baseline,
  );
}

/** Who had the cores during each scenario's measured runs. */
export function cpuTable(results: readonly ScenarioResult[], machineCores: number): string {
  const lines = [
    `| Scenario | API process 1 | API process 2 | PostgreSQL | load generator | other | whole machine (of ${machineCores}) |`,
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const { measurement, cpu } of results) {
    // The rest: the baseline server child, the kernel's network stack, other tenants of the VM.
    const other = cpu.machine - cpu.postgres - cpu.loadgen - cpu.api.reduce((sum, v) => sum + v, 0);
    lines.push(
      `| ${measurement.name} | ${cores(cpu.api[0] ?? 0)} | ${cores(cpu.api[1] ?? 0)} | ${cores(cpu.postgres)} | ${cores(cpu.loadgen)} | ${cores(Math.max(0, other))} | ${cores(cpu.machine)} |`,
    );
  }
  return lines.join('\n');
}

/** For each pair: two/one for req/s and p99, and both against the baseline. */
export function scaleLines(pairs: readonly ScalePair[], baseline: Measurement): string[] {
  return pairs.map(
    ({ label, one, two }) =>
      `- ${label}: two/one = ${(two.rate / one.rate).toFixed(2)} (req/s), p99 two/one = ` +
      `${(two.p99 / one.p99).toFixed(2)}; one/baseline = ${(one.rate / baseline.rate).toFixed(3)}, ` +
      `two/baseline = ${(two.rate / baseline.rate).toFixed(3)}`,
  );
}
