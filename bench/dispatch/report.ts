import type { StatementTime } from '../../src/db/index.ts';
import { formatMs, formatRate } from '../report.ts';
import { type Drain, type Latency, median } from './stats.ts';

/** One scenario's figures: a drain of a full queue and the latency at a steady creation rate. */
export interface DispatchResult {
  name: string;
  drain: Drain;
  latency: Latency;
  /** Each CPU's busy seconds during the drain (`busyCpuSeconds`); empty where unknown. */
  drainCpu: readonly number[];
}

/** Ours must drain at least as fast as BullMQ. */
export const TARGET = 1.0;

const rate = formatRate;
const ms = formatMs;

/**
 * The table of every scenario against the landmark: the drain rates (to running, to finished), the
 * create → running latency, and the ratio of the finished rate to BullMQ's (the target).
 */
export function dispatchTable(results: readonly DispatchResult[], landmark: DispatchResult): string {
  const lines = [
    '| Scenario | drained | → running /s | → finished /s | create → running p50 / p99 (ms) | vs BullMQ (finished) | vs BullMQ (running) | target | |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of results) {
    const isLandmark = r === landmark;
    const ratio = r.drain.toFinished / landmark.drain.toFinished;
    const ratioRunning = r.drain.toRunning / landmark.drain.toRunning;
    lines.push(
      `| ${r.name} | ${rate(r.drain.count)} | ${rate(r.drain.toRunning)} | ${rate(r.drain.toFinished)} | ` +
        `${ms(r.latency.p50)} / ${ms(r.latency.p99)} | ${isLandmark ? 'landmark' : `${ratio.toFixed(2)}x`} | ` +
        `${isLandmark ? '' : `${ratioRunning.toFixed(2)}x`} | ${isLandmark ? '' : `≥ ${TARGET.toFixed(1)}x`} | ` +
        `${isLandmark ? '' : ratio >= TARGET ? 'met' : 'NOT met'} |`,
    );
  }
  return lines.join('\n');
}

/**
 * Several rounds of the same scenarios (BENCH_DISPATCH_ROUNDS), each of ours against the BullMQ drain of
 * its own round, measured minutes apart at most: the ratio of each round, their median, and in how many
 * rounds the target was met. A host whose speed moves by a third from one minute to the next moves both
 * sides of a round together, and the median says more than any one round.
 */
export function roundsTable(rounds: ReadonlyArray<readonly DispatchResult[]>): string {
  const names: string[] = [];
  for (const round of rounds)
    for (const r of round) if (!isLandmark(r) && !names.includes(r.name)) names.push(r.name);
  const header = rounds.map((_, i) => `round ${i + 1}`);
  const lines = [
    `| vs BullMQ (finished) | ${header.join(' | ')} | median | met in |`,
    `|---|${header.map(() => '---:').join('|')}|---:|---:|`,
  ];
  for (const name of names) {
    const ratios = rounds.map((round) => {
      const landmark = round.find(isLandmark);
      const ours = round.find((r) => r.name === name);
      return landmark && ours ? ours.drain.toFinished / landmark.drain.toFinished : null;
    });
    const known = ratios.filter((ratio): ratio is number => ratio !== null);
    const met = known.filter((ratio) => ratio >= TARGET).length;
    lines.push(
      `| ${name} | ${ratios.map((ratio) => (ratio === null ? '' : `${ratio.toFixed(2)}x`)).join(' | ')} | ` +
        `${known.length === 0 ? '' : `${median(known).toFixed(2)}x`} | ${met} of ${known.length} |`,
    );
  }
  return lines.join('\n');
}

/** The landmark's result among a round's (its name starts with BullMQ). */
export function isLandmark(result: DispatchResult): boolean {
  return result.name.startsWith('BullMQ');
}

/** Statements listed one by one in `statementsTable`; the rest share a row. */
const STATEMENT_ROWS = 15;
/** Characters of a statement's SQL shown. */
const SQL_SHOWN = 110;

/**
 * Where a drain's statement time went (BENCH_DISPATCH_STATEMENTS=1): each SQL text's calls, total, share
 * of the total, time a call and time a drained task, the longest first.
 */
export function statementsTable(title: string, statements: readonly StatementTime[], tasks: number): string {
  if (statements.length === 0) return `${title}: no statement was recorded`;
  const total = statements.reduce((sum, s) => sum + s.totalMs, 0);
  const shown = statements.slice(0, STATEMENT_ROWS);
  const rest = statements.slice(STATEMENT_ROWS);
  const row = (label: string, calls: number, ms: number): string =>
    `| ${label} | ${calls.toLocaleString('en-US')} | ${ms.toFixed(1)} | ${((ms / total) * 100).toFixed(1)} % | ` +
    `${calls === 0 ? '' : ((ms * 1000) / calls).toFixed(1)} | ${((ms * 1000) / tasks).toFixed(1)} |`;
  const sqlOf = (text: string): string => {
    const flat = text.replace(/\s+/g, ' ').replaceAll('|', '\\|');
    return `\`${flat.length > SQL_SHOWN ? `${flat.slice(0, SQL_SHOWN)}…` : flat}\``;
  };
  const lines = [
    `${title}: ${total.toFixed(1)} ms in statements, ${((total * 1000) / tasks).toFixed(1)} µs a task`,
    '',
    '| Statement | calls | ms | share | µs a call | µs a task |',
    '|---|---:|---:|---:|---:|---:|',
    ...shown.map((s) => row(sqlOf(s.sql), s.calls, s.totalMs)),
  ];
  if (rest.length > 0) {
    lines.push(
      row(
        `${rest.length} others`,
        rest.reduce((sum, s) => sum + s.calls, 0),
        rest.reduce((sum, s) => sum + s.totalMs, 0),
      ),
    );
  }
  return lines.join('\n');
}

/**
 * What each CPU did for a drained task: its busy time during the drain over the tasks drained, in µs, by
 * CPU, and what `roles` says runs there. It says which side bounds a drain (a CPU near its whole time) and
 * what a task costs each side, a figure far steadier than the rate on a host whose speed moves.
 */
export function drainCpuTable(results: readonly DispatchResult[], roles: readonly string[]): string {
  const cpus = Math.max(0, ...results.map((r) => r.drainCpu.length));
  if (cpus === 0) return 'CPU time during the drains: unknown here (no /proc/stat)';
  const columns = Array.from(
    { length: cpus },
    (_, cpu) => `CPU ${cpu}${roles[cpu] ? ` (${roles[cpu]})` : ''}`,
  );
  const lines = [
    `| CPU time a drained task, µs | ${columns.join(' | ')} | all |`,
    `|---|${columns.map(() => '---:').join('|')}|---:|`,
  ];
  for (const r of results) {
    const each = Array.from({ length: cpus }, (_, cpu) => ((r.drainCpu[cpu] ?? 0) * 1e6) / r.drain.count);
    const all = each.reduce((sum, us) => sum + us, 0);
    lines.push(`| ${r.name} | ${each.map((us) => us.toFixed(0)).join(' | ')} | ${all.toFixed(0)} |`);
  }
  return lines.join('\n');
}
