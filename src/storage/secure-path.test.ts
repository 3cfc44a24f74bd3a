import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveInside } from './secure-path.ts';

test('resolveInside accepts service keys and refuses keys that climb out of the root', () => {
  assert.equal(resolveInside('/data/files', 'results/abc/0'), '/data/files/results/abc/0');
  for (const bad of ['../x', 'a/../../x', '/etc/passwd', 'a//b', '', 'a/./b', 'a\\b', '.hidden', 'a/..']) {
    assert.throws(() => resolveInside('/data/files', bad), /unsafe|escapes/, bad);
  }
});
