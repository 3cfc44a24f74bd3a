import { formatMs, formatRate } from '../report.ts';
import type { Drain, Latency } from './stats.ts';

/** One scenario's figures: a drain of a full queue and the latency at a steady creation rate. */
export interface DispatchResult {
  name: string;
  drain: Drain;
  latency: Latency;
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
