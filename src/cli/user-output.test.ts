import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Task } from '#sdk';
import { parseSet, progressBar, rubles } from './user-output.ts';

describe('user command formatting', () => {
  test('amounts print as rubles with two decimals and the currency', () => {
    for (const [minor, text] of [
      [1_000_000, '10000.00 RUB'],
      [5, '0.05 RUB'],
      [120, '1.20 RUB'],
      [0, '0.00 RUB'],
      [-250, '-2.50 RUB'],
      [9_007_199_254_740_991, '90071992547409.91 RUB'],
    ] as const) {
      assert.equal(rubles(minor), text, String(minor));
    }
  });

  test('--set values: JSON where it parses, text otherwise', () => {
    const cases: Array<[string, unknown]> = [
      ['n=2', 2],
      ['ratio=1.5', 1.5],
      ['texture=true', true],
      ['style_id=null', null],
      ['image_url=["https://x/a.png"]', ['https://x/a.png']],
      ['prompt=a cat = fluffy', 'a cat = fluffy'],
      ['code=007', '007'],
      ['title=[draft', '[draft'],
      ['empty=', ''],
    ];
    for (const [pair, value] of cases) assert.deepEqual(parseSet(pair).value, value, pair);
    assert.equal(parseSet('prompt=x').key, 'prompt');
    // `@FILE` asks for an upload; the same text in JSON quotes is the text itself (`@Image1` labels).
    assert.deepEqual(parseSet('image_url=@photo.png'), {
      key: 'image_url',
      value: '@photo.png',
      file: 'photo.png',
    });
    assert.deepEqual(parseSet('prompt="@Image1 runs"'), { key: 'prompt', value: '@Image1 runs' });
    assert.throws(() => parseSet('novalue'), /key=value/);
    assert.throws(() => parseSet('=x'), /key=value/);
  });

  test('the terminal progress bar fills with the progress', () => {
    const at = (progress: number): string => progressBar({ progress, status: 'running' } as Task, 10);
    assert.equal(at(0), '[----------]   0% running');
    assert.equal(at(50), '[#####-----]  50% running');
    assert.equal(at(100), '[##########] 100% running');
  });
});
