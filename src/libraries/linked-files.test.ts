import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { acceptedFilesView, limitsOf } from './limits.ts';
import { LIBRARIES, libraryPath } from './registry.ts';

test('[10.16] every URL field of every library creation body is probed with its accepted files', () => {
  for (const decl of LIBRARIES) {
    const schema = z.toJSONSchema(decl.body, { io: 'input', unrepresentable: 'any' }) as {
      properties?: Record<string, unknown>;
    };
    const urlFields = Object.keys(schema.properties ?? {}).filter((f) => /_urls?$/.test(f));
    assert.deepEqual(Object.keys(decl.files).sort(), urlFields.sort(), libraryPath(decl));
    const shown = limitsOf(decl)['accepted_files'] as Record<string, unknown> | undefined;
    assert.deepEqual(
      shown ?? {},
      { ...shown, ...acceptedFilesView(decl.files) },
      `${libraryPath(decl)}: limits.accepted_files shows the same rules`,
    );
  }
});
