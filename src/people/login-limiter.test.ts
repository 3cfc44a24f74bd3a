import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AttemptLimiter, LoginLimiter } from './login-limiter.ts';

test('attempts per key: the budget, the wait in seconds within the window, other keys, forgetting', async () => {
  const limiter = new AttemptLimiter('test', { failures: 3, windowSeconds: 60 });
  for (let i = 0; i < 3; i += 1) assert.equal(await limiter.take('a'), null);
  const wait = await limiter.take('a');
  assert.ok(wait !== null && wait > 0 && wait <= 60, `waits within the window, got ${wait}`);
  assert.equal(await limiter.take('b'), null);
  // A refused attempt is not counted: one given back frees exactly one place.
  await limiter.giveBack('a');
  assert.equal(await limiter.take('a'), null);
  assert.ok((await limiter.take('a')) !== null);
  await limiter.forget('a');
  assert.equal(await limiter.take('a'), null);
});

test('sign-ins wait when either the address or the e-mail has used its budget', async () => {
  const limiter = new LoginLimiter({ failures: 2, windowSeconds: 60 });
  assert.equal(await limiter.begin('10.0.0.1', 'a@example.com'), null);
  assert.equal(await limiter.begin('10.0.0.2', 'a@example.com'), null);
  assert.ok((await limiter.begin('10.0.0.3', 'a@example.com')) !== null, 'the e-mail is spent');
  assert.equal(
    await limiter.begin('10.0.0.3', 'b@example.com'),
    null,
    'a refused attempt counted for neither',
  );
  assert.equal(await limiter.begin('10.0.0.1', 'b@example.com'), null);
  assert.ok((await limiter.begin('10.0.0.1', 'c@example.com')) !== null, 'the address is spent');
});

test('a right attempt is no failure; attempts begun together are counted before any is compared', async () => {
  const limiter = new LoginLimiter({ failures: 3, windowSeconds: 60 });
  for (let i = 0; i < 5; i += 1) {
    assert.equal(await limiter.begin('10.0.0.9', 'd@example.com'), null);
    await limiter.succeeded('10.0.0.9', 'd@example.com');
  }
  const together = await Promise.all(
    Array.from({ length: 20 }, () => limiter.begin('10.0.0.8', 'e@example.com')),
  );
  assert.equal(together.filter((wait) => wait === null).length, 3);
});

test('an IPv6 client is counted by its /64: each address of it brings no fresh budget', async () => {
  const limiter = new LoginLimiter({ failures: 2, windowSeconds: 60 });
  assert.equal(await limiter.begin('2001:db8:1:2::1', 'f@example.com'), null);
  assert.equal(await limiter.begin('2001:db8:1:2::2', 'g@example.com'), null);
  assert.ok((await limiter.begin('2001:db8:1:2::3', 'h@example.com')) !== null, 'the /64 is spent');
  assert.equal(await limiter.begin('2001:db8:1:3::1', 'h@example.com'), null, 'another /64 is not');
});
