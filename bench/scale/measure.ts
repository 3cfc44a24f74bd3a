import type { BenchOptions } from '../options.ts';
import { runWrk, type WrkOutcome, type WrkSpec } from '../wrk.ts';

/** One scenario: a wrk spec without the load shape, which the options give. */
export interface ScaleScenario {
  name: string;
  spec: Omit<WrkSpec, 'connections' | 'seconds' | 'threads' | 'cpus'>;
}

/** A scenario's figures over all its measured rounds. */
export interface ScaleResult {
  name: string;
  /** Successful responses per second over all rounds. */
  rate: number;
  roundRates: number[];
  /** Mean of the rounds' medians, ms. */
  p50: number;
  /** Worst round's 99th percentile, ms. */
  p99: number;
  failures: number;
  /** Highest share of its threads' CPU the generator used in a round (1 = every thread busy). */
  generatorLoad: number;
}

/** Combines rounds of one scenario (exported for its unit test). */
export function combineRounds(name: string, rounds: readonly WrkOutcome[]): ScaleResult {
  const seconds = rounds.reduce((sum, r) => sum + r.seconds, 0);
  const ok = rounds.reduce((sum, r) => sum + r.ok, 0);
  return {
    name,
    rate: seconds > 0 ? ok / seconds : 0,
    roundRates: rounds.map((r) => (r.seconds > 0 ? r.ok / r.seconds : 0)),
    p50: rounds.length > 0 ? rounds.reduce((sum, r) => sum + r.p50, 0) / rounds.length : 0,
    p99: rounds.reduce((max, r) => Math.max(max, r.p99), 0),
    failures: rounds.reduce((sum, r) => sum + r.failures, 0),
    generatorLoad: rounds.reduce((max, r) => Math.max(max, r.generatorCores / r.generatorThreads), 0),
  };
}

/**
 * Runs every scenario once for warm-up (discarded), then `options.rounds` rounds, each running every
 * scenario once in an order rotated by one per round, so that a slow spell of the shared machine falls on
 * all scenarios alike. wrk runs on the generator's CPUs, apart from the servers'.
 */
export async function measureRounds(
  scenarios: readonly ScaleScenario[],
  options: BenchOptions,
  generator: { cpus: string | null; threads: number },
  log: (line: string) => void,
): Promise<ScaleResult[]> {
  const run = (scenario: ScaleScenario, seconds: number): Promise<WrkOutcome> =>
    runWrk({
      ...scenario.spec,
      connections: options.connections,
      seconds,
      threads: generator.threads,
      cpus: generator.cpus,
    });
  for (const scenario of scenarios) {
    log(`warm-up: ${scenario.name}`);
    await run(scenario, options.warmupSeconds);
  }
  const outcomes = scenarios.map((): WrkOutcome[] => []);
  const perRound = options.durationSeconds / options.rounds;
  for (let round = 0; round < options.rounds; round++) {
    log(`round ${round + 1}/${options.rounds}`);
    for (let k = 0; k < scenarios.length; k++) {
      const index = (k + round) % scenarios.length;
      const scenario = scenarios[index];
      if (!scenario) continue;
      outcomes[index]?.push(await run(scenario, perRound));
    }
  }
  return scenarios.map((scenario, i) => combineRounds(scenario.name, outcomes[i] ?? []));
}
