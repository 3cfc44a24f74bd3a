import type { BenchOptions } from './options.ts';
import { cpuSeconds } from './tools.ts';
import { runWrk, type WrkOutcome, type WrkSpec } from './wrk.ts';

/** One HTTP scenario: what wrk sends, and the server process it loads (for its CPU share). */
export interface HttpScenario {
  name: string;
  spec: Omit<WrkSpec, 'seconds' | 'connections' | 'cpus' | 'threads'>;
  serverPid: number;
}

/** A scenario's figures over its measured rounds. */
export interface HttpMeasurement {
  name: string;
  /** 2xx/3xx answers per second over all measured rounds. */
  rate: number;
  roundRates: number[];
  /** Median of the rounds' p50 and the highest of their p99 (wrk's percentiles cannot be merged). */
  p50: number;
  p99: number;
  /** Each round's p99, in the order the rounds ran. */
  roundP99s: number[];
  /** Response bytes per second over all measured rounds. */
  bytesPerSecond: number;
  /** Failed requests (socket errors, timeouts, non-2xx/3xx) of the warm-up and the measured rounds. */
  failures: number;
  /** Highest CPU use of the load generator in a round, in cores, and its thread count. */
  generatorCores: number;
  generatorThreads: number;
  /** Mean CPU use of the server process over the measured rounds, in cores. */
  serverCores: number;
  /**
   * Highest CPU use in a round of the other scenarios' servers, idle meanwhile but on the same CPUs, in
   * cores: their timers and threads take that much from the server under load.
   */
  bystanderCores: number;
}

/** How the load is applied: connections, the generator's CPUs and threads. */
export interface LoadShape {
  connections: number;
  cpus: string | null;
  threads: number;
}

interface Round {
  outcome: WrkOutcome;
  serverCores: number;
  bystanderCores: number;
}

async function runOnce(
  scenario: HttpScenario,
  shape: LoadShape,
  seconds: number,
  bystanders: readonly number[],
): Promise<Round> {
  const cpuOfBystanders = (): number => bystanders.reduce((sum, pid) => sum + (cpuSeconds(pid) ?? 0), 0);
  const before = cpuSeconds(scenario.serverPid) ?? 0;
  const othersBefore = cpuOfBystanders();
  const started = process.hrtime.bigint();
  const outcome = await runWrk({
    ...scenario.spec,
    seconds,
    connections: shape.connections,
    cpus: shape.cpus,
    threads: shape.threads,
  });
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  const after = cpuSeconds(scenario.serverPid) ?? before;
  const othersAfter = cpuOfBystanders();
  return {
    outcome,
    serverCores: elapsed > 0 ? (after - before) / elapsed : 0,
    bystanderCores: elapsed > 0 ? Math.max(0, othersAfter - othersBefore) / elapsed : 0,
  };
}

/**
 * Warms every scenario up, then runs `rounds` rounds, each loading every scenario for its share of the
 * duration, one scenario further along each round: a slow spell of the shared machine then hits every
 * scenario alike, which keeps the ratios between them steady.
 */
export async function measureHttp(
  scenarios: readonly HttpScenario[],
  options: BenchOptions,
  shape: LoadShape,
  log: (line: string) => void,
): Promise<HttpMeasurement[]> {
  const bystandersOf = (scenario: HttpScenario): number[] => [
    ...new Set(scenarios.map((s) => s.serverPid).filter((pid) => pid !== scenario.serverPid)),
  ];
  const warmupFailures: number[] = [];
  for (const scenario of scenarios) {
    log(`warm-up ${scenario.name}`);
    const warmup = await runOnce(scenario, shape, options.warmupSeconds, bystandersOf(scenario));
    warmupFailures.push(warmup.outcome.failures);
  }
  const rounds: Round[][] = scenarios.map(() => []);
  const seconds = options.durationSeconds / options.rounds;
  for (let round = 0; round < options.rounds; round++) {
    for (let step = 0; step < scenarios.length; step++) {
      const index = (step + round) % scenarios.length;
      const scenario = scenarios[index];
      if (!scenario) continue;
      log(`round ${round + 1}/${options.rounds} ${scenario.name}`);
      rounds[index]?.push(await runOnce(scenario, shape, seconds, bystandersOf(scenario)));
    }
  }
  return scenarios.map((scenario, i) =>
    summarizeRounds(scenario.name, rounds[i] ?? [], warmupFailures[i] ?? 0),
  );
}

/** Adds a scenario's rounds up. Exported for its unit test. */
export function summarizeRounds(
  name: string,
  rounds: readonly Round[],
  warmupFailures: number,
): HttpMeasurement {
  const seconds = rounds.reduce((sum, r) => sum + r.outcome.seconds, 0);
  const ok = rounds.reduce((sum, r) => sum + r.outcome.ok, 0);
  const bytes = rounds.reduce((sum, r) => sum + r.outcome.bytesPerSecond * r.outcome.seconds, 0);
  const p50s = rounds.map((r) => r.outcome.p50).sort((a, b) => a - b);
  return {
    name,
    rate: seconds > 0 ? ok / seconds : 0,
    roundRates: rounds.map((r) => (r.outcome.seconds > 0 ? r.outcome.ok / r.outcome.seconds : 0)),
    p50: p50s.length === 0 ? 0 : (p50s[Math.floor((p50s.length - 1) / 2)] ?? 0),
    p99: Math.max(0, ...rounds.map((r) => r.outcome.p99)),
    roundP99s: rounds.map((r) => r.outcome.p99),
    bytesPerSecond: seconds > 0 ? bytes / seconds : 0,
    failures: warmupFailures + rounds.reduce((sum, r) => sum + r.outcome.failures, 0),
    generatorCores: Math.max(0, ...rounds.map((r) => r.outcome.generatorCores)),
    generatorThreads: rounds[0]?.outcome.generatorThreads ?? 1,
    serverCores: rounds.length === 0 ? 0 : rounds.reduce((sum, r) => sum + r.serverCores, 0) / rounds.length,
    bystanderCores: Math.max(0, ...rounds.map((r) => r.bystanderCores)),
  };
}

/** A generator at 90 % or more of its threads' CPU was (close to) the limit, not the server. */
export function generatorBound(m: HttpMeasurement): boolean {
  return m.generatorCores >= 0.9 * m.generatorThreads;
}
