import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeOrKeep } from './decode.ts';

test('decodeOrKeep decodes percent-encoding and keeps text that is not valid encoding', () => {
  assert.equal(decodeOrKeep('caf%C3%A9'), 'café');
  assert.equal(decodeOrKeep('100%'), '100%');
  assert.equal(decodeOrKeep('%E0%A4%A'), '%E0%A4%A');
});
