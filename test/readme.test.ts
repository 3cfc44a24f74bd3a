/** README.md as a newcomer reads it: its map of the source names every module there is. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from './processes.ts';

const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

test('the Layout of README.md names every folder of src/', () => {
  const layout = /## Layout\n+```\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(layout, 'README.md has a Layout block');
  const folders = fs
    .readdirSync(path.join(ROOT, 'src'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
  assert.deepEqual(
    folders.filter((name) => !new RegExp(`(^|\\s)${name}/(\\s|$)`, 'm').test(layout)),
    [],
    'folders of src/ the Layout does not name',
  );
});
