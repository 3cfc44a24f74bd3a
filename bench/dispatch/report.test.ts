import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type DispatchResult, drainCpuTable, statementsTable } from './report.ts';

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

describe('the drain CPU table', () => {
  const result = (name: string, drainCpu: number[]): DispatchResult => ({
    name,
    drain: { count: 10_000, toRunning: 5_000, toFinished: 5_000 },
    latency: { count: 10_000, p50: 1, p99: 2, max: 3 },
    drainCpu,
  });

  it('gives each CPU its busy time a drained task, with what runs there, and their sum', () => {
    const table = drainCpuTable(
      [result('ours', [1.9, 0.55]), result('BullMQ', [0.8, 0.6])],
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
    assert.match(drainCpuTable([result('ours', [])], []), /unknown/);
  });
});
