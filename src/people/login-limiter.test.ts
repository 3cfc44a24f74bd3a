import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AttemptLimiter, LoginLimiter } from './login-limiter.ts';

test('attempts per key: the budget, the wait in seconds within the window, other keys, forgetting', async () => {
  const limiter = new AttemptLimiter('test', { failures: 3, windowSeconds: 60 });
  for (let i = 0; i < 3; i += 1) {
    assert.equal(await limiter.wait('a'), null);
    await limiter.fail('a');
  }
  const wait = await limiter.wait('a');
  assert.ok(wait !== null && wait > 0 && wait <= 60, `waits within the window, got ${wait}`);
  assert.equal(await limiter.wait('b'), null);
  await limiter.fail('a');
  await limiter.forget('a');
  assert.equal(await limiter.wait('a'), null);
});

test('sign-ins wait when either the address or the e-mail has used its budget', async () => {
  const limiter = new LoginLimiter({ failures: 2, windowSeconds: 60 });
  await limiter.fail('10.0.0.1', 'a@example.com');
  await limiter.fail('10.0.0.2', 'a@example.com');
  assert.ok((await limiter.wait('10.0.0.3', 'a@example.com')) !== null, 'the e-mail is spent');
  assert.equal(await limiter.wait('10.0.0.3', 'b@example.com'), null);
  await limiter.fail('10.0.0.1', 'b@example.com');
  assert.ok((await limiter.wait('10.0.0.1', 'c@example.com')) !== null, 'the address is spent');
});
