import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeEmail } from './email.ts';
import { hashToken, isTokenShaped, newToken } from './tokens.ts';

test('tokens are 32 random bytes in base64url, stored as their SHA-256', () => {
  const a = newToken();
  const b = newToken();
  assert.match(a, /^[A-Za-z0-9_-]{43}$/);
  assert.notEqual(a, b);
  assert.equal(Buffer.from(a, 'base64url').length, 32);
  assert.match(hashToken(a), /^[0-9a-f]{64}$/);
  assert.equal(hashToken(a), hashToken(a));
  assert.notEqual(hashToken(a), hashToken(b));
  assert.ok(isTokenShaped(a));
  for (const bad of ['', 'short', `${a}x`, `${a.slice(1)}/`]) assert.equal(isTokenShaped(bad), false, bad);
});

test('e-mails are trimmed and lowercased; malformed or longer than 254 characters are refused', () => {
  assert.equal(normalizeEmail('  Ann.Lee+dash@Example.COM '), 'ann.lee+dash@example.com');
  assert.equal(normalizeEmail('ops@localhost'), 'ops@localhost');
  assert.equal(normalizeEmail(`${'a'.repeat(64)}@${'b'.repeat(185)}.com`).length, 254);
  // A domain typed in Unicode takes the ASCII form browsers send and mail is routed by; the local part stays.
  assert.equal(normalizeEmail(' Zoë@Exämple.COM'), 'zoë@xn--exmple-cua.com');
  assert.equal(normalizeEmail('zoë@xn--exmple-cua.com'), 'zoë@xn--exmple-cua.com');
  for (const bad of [
    '',
    'ann',
    'ann@',
    '@example.com',
    'ann@example',
    'ann @example.com',
    'ann@exa mple.com',
    'a@b@example.com',
    '<ann@example.com>',
    `${'a'.repeat(64)}@${'b'.repeat(186)}.com`,
    'ann\u200b@example.com',
    'ann\u00ad@example.com',
    '\u202eann@example.com',
    'ann\u0000@example.com',
    'ann@exä\u200bmple.com',
    'ann@exä mple.com',
  ]) {
    assert.throws(() => normalizeEmail(bad), { code: 'invalid_request' }, bad);
  }
});
