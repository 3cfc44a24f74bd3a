/** How long and how hard each scenario is loaded. */
export interface BenchOptions {
  /** Measured seconds per scenario, split evenly over the rounds. */
  durationSeconds: number;
  /**
   * Rounds: every round runs each scenario once, in a rotated order, so that a slow spell of the shared
   * machine hits all scenarios alike instead of one of them.
   */
  rounds: number;
  /** Discarded seconds per scenario before its first round (JIT, SQLite page cache, connections). */
  warmupSeconds: number;
  /** Concurrent keep-alive connections, the same for every scenario. */
  connections: number;
  /** Folder for `--cpu-prof` profiles of the server children, or null. */
  profileDir: string | null;
}

const FULL = { durationSeconds: 10, rounds: 2, warmupSeconds: 2, connections: 50 };
/** Smoke test: checks that everything works; the figures mean little. */
const QUICK = { durationSeconds: 2, rounds: 1, warmupSeconds: 0.5, connections: 10 };

/**
 * Reads `--quick` (or BENCH_QUICK=1), BENCH_DURATION, BENCH_ROUNDS, BENCH_WARMUP, BENCH_CONNECTIONS and
 * BENCH_PROFILE_DIR; explicit values win over the quick defaults.
 */
export function readOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BenchOptions {
  const quick = argv.includes('--quick') || env.BENCH_QUICK === '1';
  const base = quick ? QUICK : FULL;
  return {
    durationSeconds: positive(env, 'BENCH_DURATION', base.durationSeconds),
    rounds: Math.round(positive(env, 'BENCH_ROUNDS', base.rounds)),
    warmupSeconds: positive(env, 'BENCH_WARMUP', base.warmupSeconds),
    connections: Math.round(positive(env, 'BENCH_CONNECTIONS', base.connections)),
    profileDir: env.BENCH_PROFILE_DIR?.trim() || null,
  };
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name]?.trim();
  if (!text) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) {
    throw new Error(`${name} must be a positive number, got "${text}"`);
  }
  return value;
}
