import { measureScenarios, type Scenario } from '../interleave.ts';
import type { Measurement } from '../load.ts';
import type { BenchOptions } from '../options.ts';
import { averageShares, type CpuShare, cpuShare, sampleCpu } from './cpu.ts';

export type { Scenario };

export interface ScenarioResult {
  measurement: Measurement;
  /** Cores busy per party during the measured runs. */
  cpu: CpuShare;
}

/** `measureScenarios` (bench/interleave.ts), sampling the API processes' CPU around each measured run. */
export async function measureScenariosWithCpu(
  scenarios: readonly Scenario[],
  options: BenchOptions,
  apiPids: readonly number[],
  cores: number,
  log: (line: string) => void,
): Promise<ScenarioResult[]> {
  const shares: Array<Array<{ share: CpuShare; seconds: number }>> = scenarios.map(() => []);
  const measurements = await measureScenarios(scenarios, options, log, async (index, run) => {
    const before = sampleCpu(apiPids);
    const outcome = await run();
    shares[index]?.push({ share: cpuShare(before, sampleCpu(apiPids), cores), seconds: outcome.seconds });
    return outcome;
  });
  return measurements.map((measurement, i) => ({ measurement, cpu: averageShares(shares[i] ?? []) }));
}
