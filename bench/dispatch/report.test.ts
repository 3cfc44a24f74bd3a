import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type DispatchResult, drainCpuTable, roundsTable, statementsTable } from './report.ts';

describe('the drain statements table', () => {
  it('gives each statement its calls, total, share, time a call and a task, and folds the rest', () => {
    const statements = Array.from({ length: 17 }, (_, i) => ({
      sql: `select  ${i}\n from | t`,
      calls: 10,
      totalMs: i === 0 ? 80 : 1,
    }));
    const table = statementsTable('ours', statements, 1_000);
    const lines = table.split('\n');
    assert.equal(lines[0], 'ours: 96.0 ms in statements, 96.0 µs a task');
    assert.equal(lines[4], '| `select 0 from \\| t` | 10 | 80.0 | 83.3 % | 8000.0 | 80.0 |');
    assert.equal(lines.length, 4 + 15 + 1);
    assert.equal(lines.at(-1), '| 2 others | 20 | 2.0 | 2.1 % | 100.0 | 2.0 |');
  });

  it('cuts a long statement and says when nothing was recorded', () => {
    const table = statementsTable('ours', [{ sql: 'x'.repeat(300), calls: 1, totalMs: 1 }], 1);
    assert.match(table, new RegExp(`\\| \`${'x'.repeat(110)}…\` \\|`));
    assert.equal(statementsTable('ours', [], 10), 'ours: no statement was recorded');
  });
});

/** A scenario's figures: 10,000 drained at `toFinished` a second, with `drainCpu`. */
const result = (name: string, { toFinished = 5_000, drainCpu = [] as number[] } = {}): DispatchResult => ({
  name,
  drain: { count: 10_000, toRunning: toFinished, toFinished },
  latency: { count: 10_000, p50: 1, p99: 2, max: 3 },
  drainCpu,
});

describe('the drain CPU table', () => {
  it('gives each CPU its busy time a drained task, with what runs there, and their sum', () => {
    const table = drainCpuTable(
      [result('ours', { drainCpu: [1.9, 0.55] }), result('BullMQ', { drainCpu: [0.8, 0.6] })],
      ['the worker', 'the database'],
    );
    assert.deepEqual(table.split('\n'), [
      '| CPU time a drained task, µs | CPU 0 (the worker) | CPU 1 (the database) | all |',
      '|---|---:|---:|---:|',
      '| ours | 190 | 55 | 245 |',
      '| BullMQ | 80 | 60 | 140 |',
    ]);
  });

  it('says so when no CPU time is known', () => {
    assert.match(drainCpuTable([result('ours')], []), /unknown/);
  });
});

describe('the rounds table', () => {
  const at = (name: string, toFinished: number): DispatchResult => result(name, { toFinished });

  it("gives each of ours its round's ratio to that round's BullMQ, the median and the rounds met", () => {
    const table = roundsTable([
      [at('ours, SQLite', 6_000), at('BullMQ 6.7.0', 10_000), at('ours, PostgreSQL', 3_000)],
      [at('ours, SQLite', 6_000), at('BullMQ 6.7.0', 5_000), at('ours, PostgreSQL', 2_000)],
      [at('ours, SQLite', 7_000), at('BullMQ 6.7.0', 10_000), at('ours, PostgreSQL', 4_000)],
    ]);
    assert.deepEqual(table.split('\n'), [
      '| vs BullMQ (finished) | round 1 | round 2 | round 3 | median | met in |',
      '|---|---:|---:|---:|---:|---:|',
      '| ours, SQLite | 0.60x | 1.20x | 0.70x | 0.70x | 1 of 3 |',
      '| ours, PostgreSQL | 0.30x | 0.40x | 0.40x | 0.40x | 0 of 3 |',
    ]);
  });

  it('takes the mean of the middle two of an even count and leaves a missing round blank', () => {
    const table = roundsTable([
      [at('ours', 5_000), at('BullMQ', 10_000)],
      [at('BullMQ', 10_000)],
      [at('ours', 7_000), at('BullMQ', 10_000)],
    ]);
    assert.equal(table.split('\n')[2], '| ours | 0.50x |  | 0.70x | 0.60x | 0 of 2 |');
  });
});
