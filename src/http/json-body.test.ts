import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isNestedDeeperThan } from './json-body.ts';

const nested = (depth: number): unknown => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`);

test('isNestedDeeperThan counts the top level as 1 and never recurses', () => {
  const cases: Array<[unknown, number, boolean]> = [
    [1, 0, false],
    ['text', 1, false],
    [{}, 1, false],
    [{}, 0, true],
    [{ a: [1, { b: null }] }, 3, false],
    [{ a: [1, { b: null }] }, 2, true],
    [nested(32), 32, false],
    [nested(33), 32, true],
    // Far past any stack a recursive walk could take.
    [nested(200_000), 32, true],
  ];
  for (const [value, max, deeper] of cases) assert.equal(isNestedDeeperThan(value, max), deeper);
});
