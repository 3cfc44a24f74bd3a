import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GeneratorTransientError } from '../generator.ts';
import { retryAfterMs, transientFailure } from './upstream-failure.ts';

const answer = (status: number, headers: Record<string, string> = {}) => ({
  status,
  headers: new Headers(headers),
  body: null,
});

test('Retry-After reads seconds and HTTP dates, null otherwise', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  assert.equal(retryAfterMs(new Headers({ 'retry-after': '3' }), now), 3_000);
  assert.equal(retryAfterMs(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:10 GMT' }), now), 10_000);
  assert.equal(retryAfterMs(new Headers({ 'retry-after': 'soon' }), now), null);
  assert.equal(retryAfterMs(new Headers(), now), null);
});

test('429 and 5xx are transient with the provider’s wait; other statuses are the adapter’s to read', () => {
  const busy = transientFailure(answer(429, { 'retry-after': '2' }), 'create');
  assert.ok(busy instanceof GeneratorTransientError);
  assert.equal(busy.retryAfterMs, 2_000);
  assert.ok(transientFailure(answer(503), 'status') instanceof GeneratorTransientError);
  for (const status of [200, 400, 401, 402, 404, 409, 422])
    assert.equal(transientFailure(answer(status), 'x'), null);
});
