import { type LoadSpec, type Measurement, type RunOutcome, runLoad, summarize } from './load.ts';
import type { BenchOptions } from './options.ts';

/** A named load; `run` loads it for the given seconds. */
export interface Scenario {
  name: string;
  run(seconds: number): Promise<RunOutcome>;
}

/**
 * Warms every scenario up, then runs `rounds` rounds; each round loads every scenario for its share of
 * the duration, starting one scenario further each round. On a shared machine whose speed drifts, this
 * keeps the ratios between scenarios far steadier than measuring them one after the other. `around`
 * wraps each measured run (the scale bench samples CPU around it); `index` is the scenario's.
 */
export async function measureScenarios(
  scenarios: readonly Scenario[],
  options: BenchOptions,
  log: (line: string) => void,
  around: (index: number, run: () => Promise<RunOutcome>) => Promise<RunOutcome> = (_, run) => run(),
): Promise<Measurement[]> {
  const warmups: RunOutcome[] = [];
  for (const scenario of scenarios) {
    log(`warm-up ${scenario.name}`);
    warmups.push(await scenario.run(options.warmupSeconds));
  }
  const measured: RunOutcome[][] = scenarios.map(() => []);
  const seconds = options.durationSeconds / options.rounds;
  for (let round = 0; round < options.rounds; round++) {
    for (let step = 0; step < scenarios.length; step++) {
      const index = (step + round) % scenarios.length;
      const scenario = scenarios[index];
      if (!scenario) continue;
      log(`round ${round + 1}/${options.rounds} ${scenario.name}`);
      measured[index]?.push(await around(index, () => scenario.run(seconds)));
    }
  }
  return scenarios.map((scenario, i) => {
    const warmup = warmups[i];
    return summarize(scenario.name, measured[i] ?? [], warmup ? [warmup] : []);
  });
}

/** `measureScenarios` for HTTP loads, each with `options.connections` connections. */
export function measureInterleaved(
  specs: readonly LoadSpec[],
  options: BenchOptions,
  log: (line: string) => void,
): Promise<Measurement[]> {
  return measureScenarios(
    specs.map((spec) => ({
      name: spec.name,
      run: (seconds: number) => runLoad(spec, options.connections, seconds),
    })),
    options,
    log,
  );
}
