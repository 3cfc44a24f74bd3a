import assert from 'node:assert/strict';
import { test } from 'node:test';
import { storageFigures } from './errors.ts';

const MiB = 1024 * 1024;

test('storage figures: one decimal where it reads right', () => {
  assert.deepEqual(storageFigures(1024 * MiB, 512 * MiB), { quota: 1024, used: 512 });
  assert.deepEqual(storageFigures(1024 * MiB, 1023.96 * MiB), { quota: 1024, used: 1023.9 });
  assert.deepEqual(storageFigures(100 * MiB, 0), { quota: 100, used: 0 });
  assert.deepEqual(storageFigures(100 * MiB, 100 * MiB), { quota: 100, used: 100 });
});

test('storage figures: more decimals where one would read as nothing or as the whole quota', () => {
  // 60 KB of a 100 KB quota: one decimal said "0.1 MB of 0.1 MB in use".
  assert.deepEqual(storageFigures(100_000, 60_000), { quota: 0.1, used: 0.05 });
  // A little in use: not "0.0 MB".
  assert.deepEqual(storageFigures(10 * MiB, 20_000), { quota: 10, used: 0.01 });
  // Nearly full: rounded down, so not the whole quota.
  assert.deepEqual(storageFigures(MiB, MiB - 2_000), { quota: 1, used: 0.9 });
  // A quota that one decimal rounds down to what is in use.
  assert.deepEqual(storageFigures(1.04 * MiB, 1.02 * MiB), { quota: 1.04, used: 1.02 });
  // At most three decimals, even where they still misread.
  assert.deepEqual(storageFigures(MiB, 100), { quota: 1, used: 0 });
});
