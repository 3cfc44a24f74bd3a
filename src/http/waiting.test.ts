import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../errors.ts';
import { preferWait, waitParam } from './waiting.ts';

test('Prefer: wait=N read as RFC 7240 says: among others, any case, quoted, first one counts, capped at 60', () => {
  assert.equal(preferWait(undefined), 0);
  assert.equal(preferWait('wait=10'), 10);
  assert.equal(preferWait('respond-async, wait=10'), 10);
  assert.equal(preferWait('Wait = 7'), 7);
  assert.equal(preferWait('WAIT="12"'), 12);
  assert.equal(preferWait('wait=5; foo=bar'), 5);
  assert.equal(preferWait('wait=5, wait=9'), 5);
  assert.equal(preferWait(['return=minimal', 'wait=3']), 3);
  assert.equal(preferWait('wait=61'), 60);
  assert.equal(preferWait('wait=1000000'), 60);
  assert.equal(
    preferWait('wait=99999999999999999999'),
    60,
    'a number past any integer type is still more than 60',
  );
  assert.equal(preferWait('wait=0009'), 9);
  assert.equal(preferWait('wait=000'), 0);
  // A comma inside another preference's quoted value is part of it (RFC 9110 §5.6.4).
  assert.equal(preferWait('x="a,wait=3", wait=2'), 2);
  assert.equal(preferWait('x="a\\",wait=3", wait=2'), 2);
  assert.equal(preferWait('x="a", wait=4'), 4);
  for (const ignored of ['wait', 'wait=', 'wait=abc', 'wait=-1', 'wait=1.5', 'waiting=5', 'return=minimal'])
    assert.equal(preferWait(ignored), 0, ignored);
});

test('?wait= is 0 (absent), 1–60, or 422 naming wait', () => {
  assert.equal(waitParam(undefined), 0);
  assert.equal(waitParam(''), 0);
  assert.equal(waitParam('0'), 0);
  assert.equal(waitParam('1'), 1);
  assert.equal(waitParam('60'), 60);
  // Leading zeros, however many, as `Prefer: wait=` reads them.
  assert.equal(waitParam('0000000001'), 1);
  assert.equal(waitParam('00000000000060'), 60);
  for (const bad of ['61', '-1', '1.5', ' 5', 'abc', '0x10', '1e1', '0000000061', '9'.repeat(400)]) {
    assert.throws(
      () => waitParam(bad),
      (e: unknown) => e instanceof ApiError && e.code === 'invalid_request',
      bad,
    );
  }
});
