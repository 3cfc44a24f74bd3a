import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { statementsTable } from './report.ts';

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
