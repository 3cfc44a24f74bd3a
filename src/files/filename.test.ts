import assert from 'node:assert/strict';
import { test } from 'node:test';
import { multipartFilename, safeFilename } from './filename.ts';

test('safeFilename keeps ordinary names and cleans unsafe ones', () => {
  const cases: Array<[string | undefined, string]> = [
    ['photo.png', 'photo.png'],
    ['Фото отпуска.jpg', 'Фото отпуска.jpg'],
    [undefined, 'upload.jpg'],
    ['', 'upload.jpg'],
    ['..', 'upload.jpg'],
    ['. . .', 'upload.jpg'],
    ['a/b\\c.png', 'a_b_c.png'],
    ['tab\there.png', 'tab_here.png'],
    ['invoice\u202Egnp.exe', 'invoicegnp.exe'],
    ['\u2067rtl\u2069.png', 'rtl.png'],
    ['zero\u200Dwidth\u200C.png', 'zerowidth.png'],
    ['para\u2029graph.png', 'para_graph.png'],
    ['e\u0301.png', 'é.png'],
    ['..hidden..', 'hidden'],
    [`${'a'.repeat(199)}.  x`, `${'a'.repeat(199)}`],
    // A name past 200 characters keeps its extension; the stem is cut.
    [`${'é'.repeat(250)}.png`, `${'é'.repeat(196)}.png`],
    [`${'b'.repeat(300)}`, `${'b'.repeat(200)}`],
    [`${'c'.repeat(198)}. .png`, `${'c'.repeat(196)}.png`],
  ];
  for (const [given, expected] of cases)
    assert.equal(safeFilename(given, 'jpeg'), expected, JSON.stringify(given));
});

test('multipartFilename reads back the three escapes browsers write, and nothing else', () => {
  assert.equal(multipartFilename('%22q%22.png'), '"q".png');
  assert.equal(multipartFilename('a%0d%0Ab'), 'a\r\nb');
  assert.equal(multipartFilename('100%41 %25 %2F.png'), '100%41 %25 %2F.png');
  assert.equal(multipartFilename(undefined), undefined);
});
