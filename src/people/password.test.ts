import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DUMMY_HASH, hashPassword, PASSWORD_MAX, passwordFits, verifyPassword } from './password.ts';

test('passwords are stored as scrypt$N$r$p$salt$hash with a fresh salt, and verify', async () => {
  const a = await hashPassword('correct horse battery');
  const b = await hashPassword('correct horse battery');
  assert.match(a, /^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  assert.notEqual(a, b, 'each hash has its own salt');
  assert.ok(!a.includes('correct'));
  assert.equal(await verifyPassword('correct horse battery', a), true);
  assert.equal(await verifyPassword('correct horse batterY', a), false);
  assert.equal(await verifyPassword('', a), false);
});

test('the same password typed in composed or decomposed Unicode verifies', async () => {
  const stored = await hashPassword('pa\u00dfw\u00f6rt-\u0439');
  assert.equal(await verifyPassword('pa\u00dfwo\u0308rt-\u0438\u0306', stored), true);
});

test('a password is as long as its NFC form, the form it is hashed in', () => {
  // Four letters typed as a letter and an accent each: eight code points, four characters once hashed.
  assert.equal(passwordFits('e\u0301'.repeat(4), 8), false);
  assert.equal(passwordFits('\u00e9'.repeat(8), 8), true);
  assert.equal(passwordFits('e\u0301'.repeat(8), 8), true);
  // The longest password, typed decomposed, fits as it does composed; one more character does not.
  assert.equal(passwordFits('\u00e9'.repeat(PASSWORD_MAX)), true);
  assert.equal(passwordFits('e\u0301'.repeat(PASSWORD_MAX)), true);
  assert.equal(passwordFits('\u1100\u1161\u11a8'.repeat(PASSWORD_MAX)), true);
  assert.equal(passwordFits('e\u0301'.repeat(PASSWORD_MAX + 1)), false);
  assert.equal(passwordFits('\u{1F600}'.repeat(PASSWORD_MAX)), true);
});

test('malformed stored strings and the dummy hash never verify', async () => {
  for (const stored of ['', 'plain', 'bcrypt$1$2$3$a$b', 'scrypt$x$8$1$AAAA$BBBB', DUMMY_HASH]) {
    assert.equal(await verifyPassword('anything at all', stored), false, stored);
  }
});
