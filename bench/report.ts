import type { Measurement } from './load.ts';

const formatRate = (rate: number): string => Math.round(rate).toLocaleString('en-US');
const formatMs = (ms: number): string => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const formatRatio = (ratio: number): string => `${(ratio * 100).toFixed(1)} %`;

function codesOf(m: Measurement): string {
  const codes = Object.entries(m.statusCodes).map(([code, count]) => `${code}×${count}`);
  return codes.length > 0 ? codes.join(', ') : '—';
}

/** The results as a Markdown table, each rate also as a share of the baseline measured in the same run. */
export function markdownTable(results: readonly Measurement[], baseline: Measurement): string {
  const lines = [
    '| Scenario | req/s | req/s per round | p50 (ms) | p99 (ms) | vs baseline | failures | status codes (warm-up included) |',
    '|---|---:|---|---:|---:|---:|---:|---|',
  ];
  for (const m of results) {
    lines.push(
      `| ${m.name} | ${formatRate(m.rate)} | ${m.roundRates.map(formatRate).join(' / ')} | ${formatMs(m.p50)} | ${formatMs(m.p99)} | ${formatRatio(m.rate / baseline.rate)} | ${m.failures} | ${codesOf(m)} |`,
    );
  }
  return lines.join('\n');
}

/** One line per ratio against the baseline, the polling one checked against its target. */
export function ratioLines(
  results: readonly Measurement[],
  baseline: Measurement,
  pollTarget: { name: string; share: number },
): string[] {
  return results
    .filter((m) => m !== baseline)
    .map((m) => {
      const share = m.rate / baseline.rate;
      const verdict =
        m.name === pollTarget.name
          ? share >= pollTarget.share
            ? ` (target ≥ ${formatRatio(pollTarget.share)}: met)`
            : ` (target ≥ ${formatRatio(pollTarget.share)}: NOT met)`
          : '';
      return `- ${m.name}/${baseline.name}: ${share.toFixed(3)}${verdict}`;
    });
}

/** Runs a bench's `main`, turning its result into the exit code and a crash into exit code 1. */
export function runBench(main: () => Promise<number>, log: (line: string) => void): void {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      process.exitCode = 1;
    },
  );
}
