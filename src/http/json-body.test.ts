import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasLoneSurrogate, isNestedDeeperThan, mayHoldMoreValuesThan } from './json-body.ts';

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

test('mayHoldMoreValuesThan bounds the values by commas and opening brackets', () => {
  const cases: Array<[string, number, boolean]> = [
    // The array and its three numbers.
    ['[1,2,3]', 4, false],
    ['[1,2,3]', 3, true],
    ['{"a":[1,{"b":2}]}', 4, true],
    ['{"a":[1,{"b":2}]}', 5, false],
    // Marks inside strings count too: a refusal errs on the safe side.
    ['"a,b,c,d"', 3, true],
    // One long string is one value, however long.
    [JSON.stringify({ output: `data:image/png;base64,${'A'.repeat(1_000_000)}` }), 10, false],
    [`[${'{},'.repeat(50_000)}{}]`, 100_000, true],
  ];
  for (const [text, max, more] of cases)
    assert.equal(mayHoldMoreValuesThan(text, max), more, text.slice(0, 40));
});

test('hasLoneSurrogate finds half a pair in any string or property name, never a whole pair', () => {
  const cases: Array<[string, boolean]> = [
    ['{"a":"x\\ud800"}', true],
    ['{"a":"\\udc00x"}', true],
    ['{"a\\ud800":1}', true],
    ['[1,[null,{"b":["\\uDBFF"]}]]', true],
    ['{"a":"\\ud83d\\ude00 😀 \\uFFFD \\\\ud800"}', false],
    ['[1,true,null,{}]', false],
  ];
  for (const [text, lone] of cases) assert.equal(hasLoneSurrogate(JSON.parse(text)), lone, text);
});
