import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LibraryRef } from '../catalog/index.ts';
import { markLibraryFields } from './library-marks.ts';

const schema = () => ({
  type: 'object',
  properties: {
    mode: { type: 'string', const: 'a' },
    size: { type: 'string', enum: ['s', 'm'] },
    link: { type: 'array', items: { type: 'string', format: 'uri' } },
    voice: { type: 'string', minLength: 1 },
    friends: { type: 'array', items: { type: 'string' } },
    text: { type: 'string' },
  },
});

test('fields named by references are marked; constants, enums and links are never probed', () => {
  let seen: Record<string, unknown> = {};
  const marked = markLibraryFields(schema(), {
    references: (s: Record<string, unknown>): LibraryRef[] => {
      seen = s;
      return [
        { library: 'voices', model: 'voice', id: String(s.voice), field: 'voice' },
        ...((s.friends as string[]) ?? []).map((id, i) => ({
          library: 'characters' as const,
          model: 'video-omni',
          id,
          field: `friends.${i}`,
        })),
      ];
    },
  });
  assert.deepEqual(Object.keys(seen).sort(), ['friends', 'text', 'voice']);
  const properties = marked.properties as Record<string, Record<string, unknown>>;
  assert.deepEqual(properties.voice?.['x-library'], { model: 'voice', library: 'voices' });
  assert.deepEqual(((properties.friends?.items ?? {}) as Record<string, unknown>)['x-library'], {
    model: 'video-omni',
    library: 'characters',
  });
  assert.equal(properties.text?.['x-library'], undefined);
  assert.equal(properties.friends?.['x-library'], undefined, 'the list items carry the mark, not the list');
});

test('a mode without references, or whose references cannot read the probe, is left as it is', () => {
  assert.deepEqual(markLibraryFields(schema(), {}), schema());
  const throwing = markLibraryFields(schema(), {
    references: () => {
      throw new Error('needs parsed settings');
    },
  });
  assert.deepEqual(throwing, schema());
});

test('every branch of a oneOf is marked', () => {
  const branch = (c: boolean) => ({
    type: 'object',
    properties: { custom: { type: 'boolean', const: c }, persona: { type: 'string' } },
  });
  const marked = markLibraryFields(
    { oneOf: [branch(false), branch(true)] },
    { references: (s) => [{ library: 'personas', model: 'music', id: String(s.persona), field: 'persona' }] },
  );
  for (const b of marked.oneOf as Array<{ properties: Record<string, Record<string, unknown>> }>)
    assert.deepEqual(b.properties.persona?.['x-library'], { model: 'music', library: 'personas' });
});
