/** `docs/libraries.md` is generated from the library declarations and must stay so. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { LIBRARIES_DOC_PATH, REGENERATE_COMMAND, renderLibrariesDoc } from '../scripts/libraries-doc.ts';
import { LIBRARIES, libraryPath } from '../src/libraries/index.ts';

describe('docs/libraries.md', () => {
  test('equals renderLibrariesDoc() (generated from the library declarations)', () => {
    const committed = fs.existsSync(LIBRARIES_DOC_PATH) ? fs.readFileSync(LIBRARIES_DOC_PATH, 'utf8') : '';
    const generated = renderLibrariesDoc().split('\n');
    const line = committed.split('\n').findIndex((text, i) => text !== generated[i]);
    assert.equal(
      line === -1 && committed.split('\n').length === generated.length,
      true,
      `docs/libraries.md is out of date with src/libraries/; regenerate it with \`${REGENERATE_COMMAND}\` ` +
        `(line ${line + 1} generated: ${generated[line] ?? '(end of file)'})`,
    );
  });

  test('documents every library with its address, states and refusal codes', () => {
    const doc = renderLibrariesDoc();
    for (const decl of LIBRARIES) {
      assert.ok(doc.includes(`### \`${decl.model}/${decl.segment}\`: ${decl.title}`), libraryPath(decl));
      assert.ok(doc.includes(`- **Address**: \`${libraryPath(decl)}\``), libraryPath(decl));
      for (const state of decl.states ?? []) assert.ok(doc.includes(`\`${state}\``), state);
      assert.ok(doc.includes(`\`422 ${decl.refusals.missing}\``), decl.refusals.missing);
      assert.ok(doc.includes(`\`502 ${decl.failCode}\``), decl.failCode);
    }
  });

  test('shows the declared learning and step times at SIM_SPEED 1', () => {
    const doc = renderLibrariesDoc();
    assert.ok(doc.includes('`training` (7 min) → `ready` or `failed`'));
    assert.ok(doc.includes('`processing` (30 s) → `pending_recording` or `failed`'));
    assert.ok(doc.includes('verify: `pending_recording` → `verifying` (20 s) → `ready` or `failed`'));
  });
});
