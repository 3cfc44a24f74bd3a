import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { LIBRARIES, libraryPath } from './registry.ts';

test('[10.16] every URL field of every library creation body is probed with its accepted files', () => {
  for (const decl of LIBRARIES) {
    const schema = z.toJSONSchema(decl.body, { io: 'input', unrepresentable: 'any' }) as {
      properties?: Record<string, unknown>;
    };
    const urlFields = Object.keys(schema.properties ?? {}).filter((f) => /_urls?$/.test(f));
    assert.deepEqual(Object.keys(decl.files).sort(), urlFields.sort(), libraryPath(decl));
    assert.deepEqual(
      (decl.limits['accepted_files'] as Record<string, unknown> | undefined) ?? {},
      { ...(decl.limits['accepted_files'] as object), ...decl.files },
      `${libraryPath(decl)}: limits.accepted_files shows the same rules`,
    );
  }
});
