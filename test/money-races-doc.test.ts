/** docs/money-races.md as a reviewer reads it: every race test it names exists in the file it names. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from './processes.ts';

const page = fs.readFileSync(path.join(ROOT, 'docs', 'money-races.md'), 'utf8');

test('every test docs/money-races.md names is a test of the file it names', () => {
  const rows = page.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| Money rule'));
  assert.ok(rows.length >= 10, 'the table lists the money rules');
  const missing: string[] = [];
  for (const row of rows) {
    const cited = [...row.matchAll(/`((?:src|test)\/[\w./-]+\.test\.ts)` "([^"]+)"/g)];
    assert.ok(cited.length > 0, `a rule without a race test: ${row.slice(0, 80)}`);
    for (const [, file = '', name = ''] of cited) {
      const source = fs.readFileSync(path.join(ROOT, file), 'utf8');
      const titles = [...source.matchAll(/\btest\(\s*(['"`])((?:(?!\1).)*)\1/g)].map(
        (match) => match[2] ?? '',
      );
      if (!titles.some((title) => title.includes(name))) missing.push(`${file}: "${name}"`);
    }
  }
  assert.deepEqual(missing, []);
});
