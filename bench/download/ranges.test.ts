import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contentRangeOf, rangeCases } from './ranges.ts';

describe('download bench ranges', () => {
  const size = 50 * 1024 * 1024;

  it('names 1 MiB slices, an open-ended tail and a suffix, all inside the file', () => {
    const cases = rangeCases(size);
    assert.equal(cases.length, 5);
    for (const c of cases) {
      assert.ok(c.start >= 0 && c.end < size && c.start <= c.end, c.header);
    }
    assert.deepEqual(cases[0], { header: 'bytes=0-1048575', start: 0, end: 1048575 });
    assert.equal(cases[3]?.header, `bytes=${size - 4 * 1048576}-`);
    assert.deepEqual(cases[4], { header: 'bytes=-1048576', start: size - 1048576, end: size - 1 });
  });

  it('expects the Content-Range of RFC 9110', () => {
    const first = rangeCases(size)[0];
    assert.ok(first);
    assert.equal(contentRangeOf(first, size), `bytes 0-1048575/${size}`);
  });

  it('refuses a file too small for the slices', () => {
    assert.throws(() => rangeCases(1024));
  });
});
