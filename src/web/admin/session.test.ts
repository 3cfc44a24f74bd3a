/** The console's session pieces: the token check, signed expiries, CSRF tokens and attempt counting. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CONSOLE_SESSION_MS, ConsoleKeys, csrfMatches } from './session.ts';

const TOKEN = 'a-long-operator-token-0001';

test('the token matches only itself', () => {
  const keys = new ConsoleKeys(TOKEN);
  assert.equal(keys.tokenMatches(TOKEN), true);
  for (const wrong of ['', `${TOKEN} `, TOKEN.slice(1), TOKEN.toUpperCase()]) {
    assert.equal(keys.tokenMatches(wrong), false, wrong);
  }
});

test('a session is valid until its expiry, only under the token that signed it, and cannot be edited', () => {
  const keys = new ConsoleKeys(TOKEN);
  const now = 1_800_000_000_000;
  const value = keys.issue(now);
  assert.equal(keys.valid(value, now), true);
  assert.equal(keys.valid(value, now + CONSOLE_SESSION_MS - 1), true);
  assert.equal(keys.valid(value, now + CONSOLE_SESSION_MS), false);
  assert.equal(new ConsoleKeys(`${TOKEN}-new`).valid(value, now), false);
  const [, id, signature] = value.split('.');
  assert.equal(keys.valid(`${now + 10 * CONSOLE_SESSION_MS}.${id}.${signature}`, now), false);
  assert.equal(keys.expiresAt(value), now + CONSOLE_SESSION_MS);
  for (const junk of [
    undefined,
    '',
    '.',
    'abc.def',
    `${now}`,
    `${value}x`,
    `${value}.x`,
    `${now}.${signature}`,
  ]) {
    assert.equal(keys.valid(junk, now), false, String(junk));
  }
});

test("the CSRF token is the session's own", () => {
  const keys = new ConsoleKeys(TOKEN);
  const a = keys.issue(1);
  const b = keys.issue(2);
  assert.equal(csrfMatches(keys.csrf(a), keys.csrf(a)), true);
  assert.equal(csrfMatches(keys.csrf(a), keys.csrf(b)), false);
  assert.equal(csrfMatches('', ''), false);
});

test('two sessions issued in the same millisecond are two sessions', () => {
  const keys = new ConsoleKeys(TOKEN);
  const a = keys.issue(5);
  const b = keys.issue(5);
  assert.notEqual(a, b);
  assert.equal(keys.valid(a, 5) && keys.valid(b, 5), true);
});
