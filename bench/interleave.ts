import { type LoadSpec, type Measurement, type RunOutcome, runLoad, summarize } from './load.ts';
import type { BenchOptions } from './options.ts';

/**
 * Warms every scenario up, then runs `rounds` rounds; each round loads every scenario for its share of
 * the duration, starting one scenario further each round. On a shared machine whose speed drifts, this
 * keeps the ratios between scenarios far steadier than measuring them one after the other.
 */
export async function measureInterleaved(
  specs: readonly LoadSpec[],
  options: BenchOptions,
  log: (line: string) => void,
): Promise<Measurement[]> {
  const warmups: RunOutcome[] = [];
  for (const spec of specs) {
    log(`warm-up ${spec.name}`);
    warmups.push(await runLoad(spec, options.connections, options.warmupSeconds));
  }
  const measured: RunOutcome[][] = specs.map(() => []);
  const seconds = options.durationSeconds / options.rounds;
  for (let round = 0; round < options.rounds; round++) {
    for (let step = 0; step < specs.length; step++) {
      const index = (step + round) % specs.length;
      const spec = specs[index];
      if (!spec) continue;
      log(`round ${round + 1}/${options.rounds} ${spec.name}`);
      measured[index]?.push(await runLoad(spec, options.connections, seconds));
    }
  }
  return specs.map((spec, i) => {
    const warmup = warmups[i];
    return summarize(spec.name, measured[i] ?? [], warmup ? [warmup] : []);
  });
}
