import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../errors.ts';
import { parseRange } from './artifacts.ts';

test('parseRange reads single byte ranges and refuses ranges outside the file', () => {
  const cases: Array<[string | undefined, { start: number; end: number } | null]> = [
    [undefined, null],
    ['bytes=0-9', { start: 0, end: 9 }],
    ['bytes=10-', { start: 10, end: 99 }],
    ['bytes=-10', { start: 90, end: 99 }],
    ['bytes=-1000', { start: 0, end: 99 }],
    ['bytes=50-5000', { start: 50, end: 99 }],
    ['bytes=9-3', null],
    ['bytes=0-1,5-6', null],
    ['items=0-1', null],
    ['items=200-', null],
    ['bytes=0-1,200-300', null],
    ['bytes=200-300,400-500', null],
    ['bytes=-100', { start: 0, end: 99 }],
    ['bytes=-101', { start: 0, end: 99 }],
    // Range units are case-insensitive (RFC 9110 §14.1), as nginx reads them.
    ['Bytes=0-9', { start: 0, end: 9 }],
    ['BYTES=-10', { start: 90, end: 99 }],
  ];
  for (const [header, expected] of cases) assert.deepEqual(parseRange(header, 100), expected, header);
  for (const header of ['bytes=100-', 'bytes=150-200', 'bytes=-0', 'Bytes=100-']) {
    assert.throws(
      () => parseRange(header, 100),
      (e: unknown) => e instanceof ApiError && e.status === 416,
      header,
    );
  }
});
