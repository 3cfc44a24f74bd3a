import { type Measurement, type RunOutcome, summarize } from '../load.ts';
import type { BenchOptions } from '../options.ts';
import { averageShares, type CpuShare, cpuShare, sampleCpu } from './cpu.ts';

/** A named load; `run` loads it for the given seconds. */
export interface Scenario {
  name: string;
  run(seconds: number): Promise<RunOutcome>;
}

export interface ScenarioResult {
  measurement: Measurement;
  /** Cores busy per party during the measured runs. */
  cpu: CpuShare;
}

/**
 * As `bench/interleave.ts` (warm-up, then rounds in rotated order, so a slow spell of the shared machine
 * hits every scenario alike), but for any kind of run, and sampling CPU around each measured run.
 */
export async function measureScenarios(
  scenarios: readonly Scenario[],
  options: BenchOptions,
  apiPids: readonly number[],
  cores: number,
  log: (line: string) => void,
): Promise<ScenarioResult[]> {
  const warmups: RunOutcome[] = [];
  for (const scenario of scenarios) {
    log(`warm-up ${scenario.name}`);
    warmups.push(await scenario.run(options.warmupSeconds));
  }
  const measured: RunOutcome[][] = scenarios.map(() => []);
  const shares: Array<Array<{ share: CpuShare; seconds: number }>> = scenarios.map(() => []);
  const seconds = options.durationSeconds / options.rounds;
  for (let round = 0; round < options.rounds; round++) {
    for (let step = 0; step < scenarios.length; step++) {
      const index = (step + round) % scenarios.length;
      const scenario = scenarios[index];
      if (!scenario) continue;
      log(`round ${round + 1}/${options.rounds} ${scenario.name}`);
      const before = sampleCpu(apiPids);
      const outcome = await scenario.run(seconds);
      shares[index]?.push({ share: cpuShare(before, sampleCpu(apiPids), cores), seconds: outcome.seconds });
      measured[index]?.push(outcome);
    }
  }
  return scenarios.map((scenario, i) => {
    const warmup = warmups[i];
    return {
      measurement: summarize(scenario.name, measured[i] ?? [], warmup ? [warmup] : []),
      cpu: averageShares(shares[i] ?? []),
    };
  });
}
