/** docs/browser-tests.md as a newcomer reads it: its table names every browser test, its list every picture. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from './processes.ts';

const page = fs.readFileSync(path.join(ROOT, 'docs', 'browser-tests.md'), 'utf8');
const browserDir = path.join(ROOT, 'test', 'browser');

test('the table of docs/browser-tests.md names every test file of test/browser/', () => {
  const listed = new Set([...page.matchAll(/^\| `([\w.-]+\.test\.ts)` \|/gm)].map((match) => match[1]));
  const files = fs.readdirSync(browserDir).filter((name) => name.endsWith('.test.ts'));
  assert.deepEqual(
    files.filter((name) => !listed.has(name)),
    [],
    'browser tests the page does not describe',
  );
});

test('"Screenshots taken" names every picture in docs/screenshots/', () => {
  const paragraph = /Screenshots taken[^:]*:([\s\S]*?)\n\n/.exec(page)?.[1];
  assert.ok(paragraph, 'docs/browser-tests.md has a "Screenshots taken" paragraph');
  const named = new Set([...paragraph.matchAll(/`([\w-]+)`/g)].map((match) => match[1]));
  const pictures = fs
    .readdirSync(path.join(ROOT, 'docs', 'screenshots'))
    .filter((name) => name.endsWith('.png'))
    .map((name) => name.slice(0, -'.png'.length));
  assert.deepEqual(
    pictures.filter((name) => !named.has(name)),
    [],
    'pictures the page does not name',
  );
});
