import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bearerToken } from './bearer.ts';

const request = (...lines: string[]) => ({
  headers: lines.length === 0 ? {} : { authorization: lines[0] },
  rawHeaders: lines.flatMap((line) => ['Authorization', line]),
});

test('reads the token of one Bearer header, whatever the case of the scheme and the spaces around', () => {
  assert.equal(bearerToken(request('Bearer gta_abc')), 'gta_abc');
  assert.equal(bearerToken(request('bearer   gta_abc  ')), 'gta_abc');
});

test('no header, another scheme, no token or two tokens in one header bring none', () => {
  for (const lines of [
    [],
    ['Basic gta_abc'],
    ['Bearer'],
    ['Bearer '],
    ['Bearer a b'],
    ['Bearer a, Bearer a'],
  ])
    assert.equal(bearerToken(request(...lines)), undefined, lines.join(' | '));
});

test('two Authorization lines bring none, whichever is valid, even when they are the same', () => {
  assert.equal(bearerToken(request('Bearer a', 'Bearer b')), undefined);
  assert.equal(bearerToken(request('Bearer a', 'Bearer a')), undefined);
  const mixedCase = {
    headers: { authorization: 'Bearer a' },
    rawHeaders: ['authorization', 'Bearer a', 'AUTHORIZATION', 'x'],
  };
  assert.equal(bearerToken(mixedCase), undefined);
});
