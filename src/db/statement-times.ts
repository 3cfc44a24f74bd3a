/**
 * The time each SQL text takes while a recording runs: which statements a benchmark's time goes to
 * (bench:dispatch's BENCH_DISPATCH_STATEMENTS, docs/performance.md). It counts the statements that run
 * through `execute` (dialect.ts): the prepared ones, and on SQLite also every transaction's `begin` and
 * `commit`. On SQLite a statement's time is its synchronous run on the handle; on PostgreSQL, its round
 * trip, waits for the pool included. With no recording running, a statement pays one comparison.
 */

/** One SQL text's calls and their time in a recording. */
export interface StatementTime {
  sql: string;
  calls: number;
  totalMs: number;
}

let recording: Map<string, { calls: number; ns: bigint }> | undefined;

/** The start of a statement's clock, or undefined when nothing records. */
export function statementStarted(): bigint | undefined {
  return recording === undefined ? undefined : process.hrtime.bigint();
}

/** Adds a statement's time since `started` (`statementStarted`) to the recording. */
export function statementEnded(sql: string, started: bigint | undefined): void {
  if (started === undefined || recording === undefined) return;
  const elapsed = process.hrtime.bigint() - started;
  const entry = recording.get(sql);
  if (entry === undefined) recording.set(sql, { calls: 1, ns: elapsed });
  else {
    entry.calls += 1;
    entry.ns += elapsed;
  }
}

/**
 * Starts a recording (one at a time in a process; a new one replaces the last). The function it returns
 * ends it and gives each SQL text's calls and time, the longest total first.
 */
export function recordStatementTimes(): () => StatementTime[] {
  const mine = new Map<string, { calls: number; ns: bigint }>();
  recording = mine;
  return () => {
    if (recording === mine) recording = undefined;
    return [...mine]
      .map(([sql, { calls, ns }]) => ({ sql, calls, totalMs: Number(ns) / 1e6 }))
      .sort((a, b) => b.totalMs - a.totalMs);
  };
}
